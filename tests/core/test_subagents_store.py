"""Sidechain storage: links on every line, offload under the conversation, meta, lock, index, delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crewagent.core.errors import ConversationNotFound
from crewagent.core.messages import APP_FIELDS, ConversationMessage, to_openai, utc_now_iso
from crewagent.core.store import RuntimeStore
from crewagent.core.store.index import INDEX_NAME
from crewagent.core.store.sidechain import SidechainBusy, SidechainMeta


def _meta(conversation_id: str, agent_id: str = "abc123", **fields: object) -> SidechainMeta:
    now = utc_now_iso()
    values: dict[str, object] = {
        "sessionId": f"agent_{agent_id}",
        "agentId": agent_id,
        "conversationId": conversation_id,
        "parentSessionId": conversation_id,
        "parentToolCallId": "call_task_1",
        "type": "explore",
        "depth": 1,
        "model": "m",
        "description": "look around",
        "createdAt": now,
        "updatedAt": now,
    }
    values.update(fields)
    return SidechainMeta.model_validate(values)


def test_every_line_carries_the_links_and_large_outputs_are_offloaded_under_the_conversation(store, project, conversation) -> None:  # type: ignore[no-untyped-def]
    chains = store.sidechains(project.id, conversation.id)
    meta = chains.create(_meta(conversation.id))
    big = "x" * 200_000
    chains.append(meta, ConversationMessage.new("user", "look around"))
    stored = chains.append(meta, ConversationMessage.new("tool", big, tool_call_id="c1"))

    assert stored.fullOutputPath == f"@state/logs/tool-results/{conversation.id}/agents/agent_abc123/{stored.id}.json"
    assert store.read_full_output(project.id, stored) == big
    lines = [json.loads(line) for line in chains.log_path(meta.sessionId).read_text("utf-8").splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert line["sessionId"] == "agent_abc123"
        assert line["parentSessionId"] == conversation.id
        assert line["isSidechain"] is True
        assert line["parentToolCallId"] == "call_task_1"
    assert chains.log_path(meta.sessionId) == store.log_path(project.id, conversation.id).parent / "agents" / "agent_abc123.jsonl"
    assert len(chains.log_path(meta.sessionId).read_bytes()) < 2_000
    assert [m.id for m in chains.load(meta.sessionId).messages] == [line["id"] for line in lines]
    # The links never reach a model.
    assert not {"sessionId", "parentSessionId", "isSidechain", "parentToolCallId"} & set(to_openai(stored))
    assert {"subagentSessionId", "subagentType", "subagentStatus", "subagentSummary"} <= APP_FIELDS


def test_meta_updates_and_listing(store, project, conversation) -> None:  # type: ignore[no-untyped-def]
    chains = store.sidechains(project.id, conversation.id)
    chains.create(_meta(conversation.id, "one"))
    chains.create(_meta(conversation.id, "two", type="general-purpose"))
    updated = chains.update_meta("agent_one", status="completed", summary="done")
    assert updated.status == "completed" and updated.updatedAt >= updated.createdAt
    assert chains.read_meta("agent_one").summary == "done"
    assert {m.sessionId: m.status for m in chains.metas()} == {"agent_one": "completed", "agent_two": "running"}
    with pytest.raises(ConversationNotFound):
        chains.read_meta("agent_nope")
    with pytest.raises(ConversationNotFound):
        chains.log_path("../escape")


def test_the_lock_says_whether_a_child_runs(store, project, conversation) -> None:  # type: ignore[no-untyped-def]
    chains = store.sidechains(project.id, conversation.id)
    chains.create(_meta(conversation.id))
    assert not chains.is_running("agent_abc123")
    with chains.lock("agent_abc123"):
        assert chains.is_running("agent_abc123")
        with pytest.raises(SidechainBusy):
            with chains.lock("agent_abc123"):
                pass
    assert not chains.is_running("agent_abc123")


def test_sidechains_are_never_listed_even_after_an_index_rebuild(store, project, conversation, isolated_dirs) -> None:  # type: ignore[no-untyped-def]
    chains = store.sidechains(project.id, conversation.id)
    meta = chains.create(_meta(conversation.id))
    chains.append(meta, ConversationMessage.new("user", "child work"))
    assert [m.id for m in store.list_conversations(project.id)] == [conversation.id]

    index = project.runtime_dir / "conversations" / INDEX_NAME
    index.write_text("{broken", encoding="utf-8")
    fresh = RuntimeStore(isolated_dirs["data"])
    assert [m.id for m in fresh.list_conversations(project.id)] == [conversation.id]
    index.unlink()
    fresh = RuntimeStore(isolated_dirs["data"])
    metas = fresh.list_conversations(project.id)
    assert [m.id for m in metas] == [conversation.id] and metas[0].messageCount == 0


def test_deleting_the_conversation_deletes_its_sidechains_and_their_outputs(store, project, conversation) -> None:  # type: ignore[no-untyped-def]
    chains = store.sidechains(project.id, conversation.id)
    meta = chains.create(_meta(conversation.id))
    stored = chains.append(meta, ConversationMessage.new("tool", "y" * 100_000, tool_call_id="c1"))
    output = Path(str(project.runtime_dir / "state" / stored.fullOutputPath.removeprefix("@state/")))
    assert output.exists()

    store.delete_conversation(project.id, conversation.id)

    assert not chains.dir.exists() and not output.exists()
    with pytest.raises(ConversationNotFound):
        chains.append(meta, ConversationMessage.new("user", "too late"))
