"""Parent and child end to end against the scripted server (one script per conversation).

The parent's requests take the main script; each child's take the script routed by the
``description: ...`` line of its SUBAGENT system block. Real HTTP, real store, real tools.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents import SubagentManager
from tests.core.loop_helpers import (
    assert_log_valid,
    assert_request_valid,
    error_code_of,
    finished,
    result_of,
    shape,
)
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.fakes.subagent_helpers import Recorder, marker, only_sidechain, parent_turn, sidechain_valid, task_step

BIG_FILES = 6
BIG_FILE_BYTES = 900_000


def _big_files(project: ProjectInfo) -> list[str]:
    names = []
    for n in range(BIG_FILES):
        name = f"big{n}.txt"
        (project.root / name).write_text(f"file {n} " + "z" * BIG_FILE_BYTES, encoding="utf-8")
        names.append(name)
    return names


def test_parent_and_child_link_both_ways_and_the_parent_log_stays_small(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    names = _big_files(project)
    answer = "Findings: " + "the files are large. " * 120  # ~2.5 KB, longer than the 500-character preview
    reads = [call(f"call_read_{n}", "fs_read", json.dumps({"path": f"@project/{name}"})) for n, name in enumerate(names)]
    scripted_llm.script(task_step("call_task_1", "child-A", prompt="Read the big files and report."), text("Parent: done."))
    scripted_llm.script_for(marker("child-A"), tool_calls(*reads), tool_calls(*reads[:1]), text(answer))
    manager = SubagentManager()
    recorder = Recorder(manager)

    events = asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "Delegate the reading", manager))

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant"]
    result = log[2]
    data = result.to_log_dict()
    session_id = data["subagentSessionId"]
    assert data["subagentType"] == "general-purpose" and data["subagentStatus"] == "completed"
    assert data["subagentSummary"] == answer[:500]
    content = result_of(result)
    assert content["ok"] is True and content["answer"] == answer[:500] and content["truncated"] is True
    assert session_id in content["fullAnswer"] and "task.result" in content["fullAnswer"]

    # parent → sidechain: the file named by the link exists where the layout says
    folder = store.log_path(project.id, conversation.id).parent
    sidechain = folder / "agents" / f"{session_id}.jsonl"
    assert sidechain.is_file() and (folder / "agents" / f"{session_id}.meta.json").is_file()
    # sidechain → parent: every line names the conversation and the Task call
    child_log = sidechain_valid(store, project.id, conversation.id, session_id)
    assert {m.to_log_dict()["parentSessionId"] for m in child_log} == {conversation.id}
    assert {m.to_log_dict()["parentToolCallId"] for m in child_log} == {"call_task_1"}
    assert shape(child_log) == ["user", "assistant+calls", *["tool"] * BIG_FILES, "assistant+calls", "tool", "assistant"]
    assert child_log[0].text == "Read the big files and report." and child_log[-1].text == answer
    meta = store.sidechains(project.id, conversation.id).read_meta(session_id)
    assert (meta.status, meta.type, meta.depth, meta.model, meta.description) == ("completed", "general-purpose", 1, "scripted-model", "child-A")
    assert meta.parentSessionId == conversation.id and meta.parentToolCallId == "call_task_1"

    # the child did ~5 MB of tool output; none of it reached the parent log
    offloaded = sum(m.fullOutputBytes or 0 for m in child_log)
    assert offloaded > 5_000_000
    assert store.log_path(project.id, conversation.id).stat().st_size < 20_000
    assert "file 0 zzz" not in store.log_path(project.id, conversation.id).read_text("utf-8")

    # what the models saw: the parent's second request holds the short Task result, no link fields
    parent_bodies = [b for b in scripted_llm.bodies if b not in scripted_llm.bodies_for(marker("child-A"))]
    second = assert_request_valid(parent_bodies[1])
    task_result = next(m for m in second if m["role"] == "tool")
    assert set(task_result) == {"role", "content", "tool_call_id"}
    assert len(task_result["content"]) < 1_500
    # the child's first request: its own system prompt, the prompt as the user message, no ui.* tools
    child_first = scripted_llm.bodies_for(marker("child-A"))[0]
    system = "\n".join(m["content"] for m in child_first["messages"] if m["role"] == "system")
    assert "SUBAGENT\n- session: " + session_id in system and "SUBAGENT_TYPE\n- id: general-purpose" in system
    assert "MODE\n- active: agent" in system
    assert [m for m in child_first["messages"] if m["role"] != "system"] == [{"role": "user", "content": "Read the big files and report."}]
    offered = {t["function"]["name"] for t in child_first["tools"]}
    assert "ui_ask_user" not in offered and {"fs_read", "fs_write", "task"} <= offered
    for body in scripted_llm.bodies_for(marker("child-A")):
        assert_request_valid(body)

    assert recorder.statuses(session_id) == ["running", "completed"]
    persisted_in_child = [e.event for e in recorder.of_type("subagent_activity") if e.event.type == "message_persisted"]
    assert [e.message.id for e in persisted_in_child] == [m.id for m in child_log]


def test_task_result_returns_the_whole_answer(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    answer = "A" * 700 + " end."
    scripted_llm.script(task_step("call_t", "child-R", subagent_type="explore"), text("ok"))
    scripted_llm.script_for(marker("child-R"), text(answer))
    manager = SubagentManager()
    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "go", manager))
    session_id = only_sidechain(store, project.id, conversation.id).sessionId

    scripted_llm.script(
        tool_calls(
            call("call_r", "task_result", json.dumps({"session_id": session_id})),
            call("call_s", "task_status", json.dumps({"session_id": session_id})),
            call("call_x", "task_status", json.dumps({"session_id": "agent_nope"})),
        ),
        text("read it"),
    )
    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "the whole answer please", manager))

    log = assert_log_valid(store, project.id, conversation.id)
    full, status, missing = (result_of(m) for m in log[-4:-1])
    assert full["ok"] is True and full["answer"] == answer and "truncated" not in full
    assert status["status"] == "completed" and status["type"] == "explore" and status["steps"] == 1
    assert missing["ok"] is False and missing["error"]["code"] == "ENOENT"


def test_explore_child_cannot_write_its_tools_only_tighten(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    write = call("call_w", "fs_write", json.dumps({"path": "@project/x.txt", "content": "nope"}))
    scripted_llm.script(task_step("call_e", "child-E", subagent_type="explore"), text("ok"))
    scripted_llm.script_for(marker("child-E"), tool_calls(write), text("I could not write."))

    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "explore", SubagentManager()))

    assert not (project.root / "x.txt").exists()
    meta = only_sidechain(store, project.id, conversation.id)
    child_log = sidechain_valid(store, project.id, conversation.id, meta.sessionId)
    assert error_code_of(child_log[2]) == "TOOL_NOT_AVAILABLE"
    body = scripted_llm.bodies_for(marker("child-E"))[0]
    assert sorted(t["function"]["name"] for t in body["tools"]) == ["fs_list", "fs_read", "fs_search"]


def test_a_parent_policy_that_forbids_files_forbids_them_to_every_child(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    from tests.core.loop_helpers import make_context

    ctx = make_context(project, conversation.id, disabled=["fs.write", "fs.apply_patch"])
    scripted_llm.script(task_step("call_g", "child-G"), text("ok"))
    scripted_llm.script_for(marker("child-G"), text("fine"))

    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "go", SubagentManager(), ctx=ctx))

    child_tools = {t["function"]["name"] for t in scripted_llm.bodies_for(marker("child-G"))[0]["tools"]}
    assert "fs_write" not in child_tools and "fs_apply_patch" not in child_tools and "fs_read" in child_tools


def test_depth_limit_a_grandchild_cannot_start_another_level(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(task_step("call_1", "level-1"), text("parent done"))
    scripted_llm.script_for(marker("level-1"), task_step("call_2", "level-2"), text("child done"))
    scripted_llm.script_for(marker("level-2"), task_step("call_3", "level-3"), text("grandchild did it itself"))

    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "go deep", SubagentManager()))

    child = only_sidechain(store, project.id, conversation.id, depth=1)
    grandchild = only_sidechain(store, project.id, conversation.id, depth=2)
    assert grandchild.parentSessionId == child.sessionId and grandchild.parentToolCallId == "call_2"
    assert child.status == grandchild.status == "completed"
    grand_log = sidechain_valid(store, project.id, conversation.id, grandchild.sessionId)
    refused = result_of(grand_log[2])
    assert refused["error"]["code"] == "E_SUBAGENT_DEPTH" and "at most 2" in refused["error"]["message"]
    child_log = sidechain_valid(store, project.id, conversation.id, child.sessionId)
    link = child_log[2].to_log_dict()
    assert link["subagentSessionId"] == grandchild.sessionId and link["subagentStatus"] == "completed"
    assert result_of(child_log[2])["answer"] == "grandchild did it itself"
    parent_log = assert_log_valid(store, project.id, conversation.id)
    assert parent_log[2].to_log_dict()["subagentSessionId"] == child.sessionId
    assert not list(Path(store.log_path(project.id, conversation.id).parent).glob("agents/*/"))  # one flat agents/ folder


def test_concurrent_children_limit(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    from tests.fakes.scripted_server import slow_text
    from tests.fakes.subagent_helpers import task_call

    calls = [task_call(f"call_c{n}", f"para-{n}") for n in range(4)]
    scripted_llm.script(tool_calls(*calls), text("parent done"))
    for n in range(3):
        scripted_llm.script_for(marker(f"para-{n}"), slow_text("working ", "still ", "done", interval=0.1))
    manager = SubagentManager(max_concurrent=3)

    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "four at once", manager))

    log = assert_log_valid(store, project.id, conversation.id)
    results = [result_of(m) for m in log if m.role == "tool"]
    assert [r["ok"] for r in results] == [True, True, True, False]
    assert results[3]["error"]["code"] == "E_SUBAGENT_LIMIT" and "At most 3" in results[3]["error"]["message"]
    assert "subagentSessionId" not in log[-2].to_log_dict()  # the refused call started nothing
    assert len(store.sidechains(project.id, conversation.id).metas()) == 3
