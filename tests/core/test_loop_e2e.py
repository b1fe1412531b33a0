"""A whole turn end to end over real HTTP and real files, then a restart with a new store instance."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from crewagent.core.loop import (
    ContextBuilt,
    MessagePersisted,
    StreamStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.checkpoint import ConversationBusy
from crewagent.core.tools import audit_path, read_audit
from tests.core.forked import exited_cleanly, fork
from tests.core.loop_helpers import (
    assert_log_valid,
    assert_request_valid,
    finished,
    persisted,
    result_of,
    shape,
    turn,
    turn_async,
)
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls


@pytest.fixture
def files(project: ProjectInfo) -> Path:
    root = project.root
    (root / "notes.txt").write_text("Shopping list\nmilk\neggs\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    return root


def test_tool_turn_end_to_end_then_restart_with_a_new_store(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, files: Path
) -> None:
    scripted_llm.script(
        tool_calls(
            call("call_list", "fs_list", '{"pa', 'th": "@pro', 'ject"}'),
            call("call_read", "fs_read", '{"path": ', '"@project/notes.txt"', "}"),
            text_parts=["Let me look."],
        ),
        text("The folder holds ", "notes.txt and docs/."),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "What is in my project?")

    assert finished(events).reason == "completed"
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "TurnStarted" and isinstance(events[0], TurnStarted)
    # per model call: ContextBuilt, StreamStarted, deltas, then the assistant message is persisted
    assert sum(isinstance(e, ContextBuilt) for e in events) == 2
    assert [e.step for e in events if isinstance(e, StreamStarted)] == [1, 2]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.call_id, e.name) for e in started] == [("call_list", "fs.list"), ("call_read", "fs.read")]
    assert started[1].arguments == '{"path": "@project/notes.txt"}'  # the pieces were joined
    done = {e.call_id: e for e in events if isinstance(e, ToolCallFinished)}
    assert done["call_list"].ok and done["call_read"].ok
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look.The folder holds notes.txt and docs/."

    # the second request carried the results, in call order, with wire names
    second = assert_request_valid(scripted_llm.bodies[1])
    assert shape(second[-3:]) == ["assistant+calls", "tool", "tool"]
    assert [c["function"]["name"] for c in second[-3]["tool_calls"]] == ["fs_list", "fs_read"]
    assert [m["tool_call_id"] for m in second[-2:]] == ["call_list", "call_read"]

    # a new store instance (a restart) reads the same log, in protocol order
    reopened = RuntimeStore(store.data_dir)
    log = assert_log_valid(reopened, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "tool", "assistant"]
    assert [m.id for m in log[1:]] == [m.id for m in persisted(events)[1:]]  # what the events announced
    assistant, listed, read, answer = log[1:]
    assert assistant.content == "Let me look."
    assert [c.function.name for c in assistant.tool_calls or []] == ["fs.list", "fs.read"]
    assert [listed.tool_call_id, read.tool_call_id] == ["call_list", "call_read"]
    assert {listed.toolName, read.toolName} == {"fs.list", "fs.read"}
    names = {e["name"] for e in result_of(listed)["entries"]}
    assert {"docs", "notes.txt"} <= names  # the real project folder was listed
    assert result_of(read)["content"] == "Shopping list\nmilk\neggs\n"
    assert answer.content == "The folder holds notes.txt and docs/." and answer.partType is None
    assert all(m.mode == "chat" for m in log)
    audit = read_audit(audit_path(project.runtime_dir / "state", conversation_id=conversation.id))
    assert sorted((a["tool"], a["callId"], a["ok"]) for a in audit) == [("fs.list", "call_list", True), ("fs.read", "call_read", True)]

    # the next turn, through the new store, sends that history and it validates with wire names
    scripted_llm.script(text("You are welcome."))
    events = turn(reopened, project, conversation.id, scripted_llm.config(), "Thanks!")
    assert finished(events).reason == "completed"
    third = assert_request_valid(scripted_llm.bodies[2])
    assert third[0]["role"] == "system"
    history = [m for m in third if m["role"] != "system"]
    assert shape(history) == ["user", "assistant+calls", "tool", "tool", "assistant", "user"]
    assert history[1]["tool_calls"][0]["function"] == {"name": "fs_list", "arguments": '{"path": "@project"}'}
    assert json.loads(history[3]["content"])["content"] == "Shopping list\nmilk\neggs\n"
    assert history[-1]["content"] == "Thanks!"
    assert "toolName" not in history[2] and "id" not in history[2]  # app fields never reach the provider
    assert shape(assert_log_valid(RuntimeStore(store.data_dir), project.id, conversation.id))[-2:] == ["user", "assistant"]


def test_a_second_send_while_a_turn_runs_is_refused_without_writing(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """Another window (here: another store instance, as another process would have) cannot start a turn."""
    scripted_llm.script(text("First ", "answer."))
    log_path = store.log_path(project.id, conversation.id)
    sizes: list[int] = []

    async def main() -> None:
        async def try_second(event: object, _session: object) -> None:
            if isinstance(event, TextDelta) and not sizes:
                before = log_path.stat().st_size
                other = RuntimeStore(store.data_dir)
                assert other.is_turn_running(project.id, conversation.id)
                with pytest.raises(ConversationBusy):
                    await turn_async(other, project, conversation.id, scripted_llm.config(), "Second message")
                sizes.extend([before, log_path.stat().st_size])

        events = await turn_async(store, project, conversation.id, scripted_llm.config(), "First message", on_event=try_second)
        assert finished(events).reason == "completed"

    asyncio.run(main())

    assert sizes and sizes[0] == sizes[1]  # nothing written by the refused send
    log = assert_log_valid(store, project.id, conversation.id)
    assert [(m.role, m.content) for m in log] == [("user", "First message"), ("assistant", "First answer.")]
    assert len(scripted_llm.requests) == 1  # the refused turn never called the model
    assert not store.is_turn_running(project.id, conversation.id)


def test_two_processes_one_turn_lock(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    """A real second process holding the turn lock makes send() raise ConversationBusy before any write."""
    locked_r, locked_w = os.pipe()
    release_r, release_w = os.pipe()

    def holder() -> None:  # another process (forked: the store is imported already), its own store
        os.close(locked_r)
        os.close(release_w)
        with RuntimeStore(store.data_dir).turn_lock(project.id, conversation.id):
            os.write(locked_w, b"locked")
            os.read(release_r, 1)  # until the parent closes its end

    pid = fork(holder)
    os.close(locked_w)
    os.close(release_r)
    try:
        assert os.read(locked_r, 16) == b"locked"
        before = store.log_path(project.id, conversation.id).read_bytes() if store.log_path(project.id, conversation.id).exists() else b""
        with pytest.raises(ConversationBusy):
            turn(store, project, conversation.id, scripted_llm.config(), "hello?")
        after = store.log_path(project.id, conversation.id).read_bytes() if store.log_path(project.id, conversation.id).exists() else b""
        assert after == before
        assert scripted_llm.requests == []
    finally:
        os.close(release_w)
        os.close(locked_r)
        assert exited_cleanly(pid)
    # once the other process is gone, a turn runs
    scripted_llm.script(text("hi"))
    assert finished(turn(store, project, conversation.id, scripted_llm.config(), "hello?")).reason == "completed"
    assert [m.role for m in assert_log_valid(store, project.id, conversation.id)] == ["user", "assistant"]


def test_message_persisted_events_are_exactly_the_log(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, files: Path
) -> None:
    scripted_llm.script(tool_calls(call("c1", "fs_read", '{"path": "@project/notes.txt"}')), text("Done."))
    events = turn(store, project, conversation.id, scripted_llm.config(), "read notes")
    assert [m.id for m in persisted(events)] == [m.id for m in assert_log_valid(store, project.id, conversation.id)]
    assert isinstance(events[-2], MessagePersisted) and isinstance(events[-1], TurnFinished)
