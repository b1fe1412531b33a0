"""Background children and their notices, cancellation (foreground, background, shutdown), recovery."""

from __future__ import annotations

import asyncio
import json
import threading

from crewagent.core.loop import ConversationSession, LoopEvent
from crewagent.core.messages import ConversationMessage, ConversationMeta, ToolCall, utc_now_iso
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents import SubagentActivity, SubagentManager
from crewagent.core.subagents.events import SubagentEvent
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, error_code_of, finished, result_of, shape
from tests.fakes.scripted_server import ScriptedServer, call, held_text, text, tool_calls
from tests.fakes.subagent_helpers import Recorder, marker, only_sidechain, parent_turn, sidechain_valid, task_step

WORDS = [f"w{n} " for n in range(40)]


def _notices(log: list[ConversationMessage]) -> list[ConversationMessage]:
    return [m for m in log if m.role == "user" and getattr(m, "synthetic", False)]


def test_background_child_returns_at_once_and_its_notice_reaches_the_next_turn(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(task_step("call_bg", "bg-1", run_in_background=True), text("Started it."))
    gate = threading.Event()  # the child's answer is held until the test has seen the turn end
    scripted_llm.script_for(marker("bg-1"), held_text(gate, "background ", "work ", "finished."))
    manager = SubagentManager()
    recorder = Recorder(manager)

    async def scenario() -> tuple[list[LoopEvent], list[ConversationMessage]]:
        events = await parent_turn(store, project, conversation.id, scripted_llm.config(), "in the background please", manager)
        during = store.load_messages(project.id, conversation.id).messages  # right after the turn, child still running
        gate.set()
        await manager.wait_background()
        return events, during

    events, during = asyncio.run(scenario())

    assert finished(events).reason == "completed"
    assert shape(during) == ["user", "assistant+calls", "tool", "assistant"]
    started = during[2].to_log_dict()
    assert started["subagentStatus"] == "running" and result_of(during[2])["status"] == "running"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant", "user"]
    notice = log[-1].to_log_dict()
    assert notice["synthetic"] is True and notice["subagentSessionId"] == started["subagentSessionId"]
    assert notice["subagentStatus"] == "completed" and notice["subagentSummary"] == "background work finished."
    assert log[-1].text.startswith("SUBAGENT_NOTICE") and "background work finished." in log[-1].text
    meta = only_sidechain(store, project.id, conversation.id)
    assert meta.background and meta.status == "completed" and getattr(meta, "noticeDelivered") is True
    sidechain_valid(store, project.id, conversation.id, meta.sessionId)
    assert [e.message.id for e in recorder.of_type("subagent_notice")] == [log[-1].id]

    # the model learns of it at its next turn: the notice precedes the user's new message
    scripted_llm.script(text("It is done."))
    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "any news?", manager))
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert history[-2]["role"] == "user" and history[-2]["content"].startswith("SUBAGENT_NOTICE")
    assert history[-1] == {"role": "user", "content": "any news?"}
    assert len(_notices(assert_log_valid(store, project.id, conversation.id))) == 1  # delivered once


def test_a_child_that_ends_during_the_parent_turn_is_announced_after_the_turn_not_inside_it(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    read = call("call_read", "fs_list", json.dumps({"path": "@project"}))
    # the parent keeps working (a tool call, then an answer held until the quick child has ended)
    child_ended = threading.Event()
    scripted_llm.script(
        task_step("call_bg", "bg-2", run_in_background=True), tool_calls(read), held_text(child_ended, *WORDS[:10])
    )
    scripted_llm.script_for(marker("bg-2"), text("quick result"))
    manager = SubagentManager()
    manager.add_listener(lambda event: child_ended.set() if getattr(event, "status", None) == "completed" else None)

    async def scenario() -> None:
        await parent_turn(store, project, conversation.id, scripted_llm.config(), "go", manager)
        await manager.wait_background()

    asyncio.run(scenario())

    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant+calls", "tool", "assistant", "user"]
    assert log[-1].text.startswith("SUBAGENT_NOTICE") and "quick result" in log[-1].text


def test_stopping_the_parent_cancels_a_foreground_child(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(task_step("call_fg", "fg-stop"))
    # the child streams five words, then nothing until it is stopped (the gate is never set)
    scripted_llm.script_for(marker("fg-stop"), held_text(threading.Event(), "".join(WORDS[:5]), *WORDS[5:]))
    manager = SubagentManager()
    sessions: list[ConversationSession] = []
    deltas: list[str] = []

    def on_child(event: SubagentEvent) -> None:
        if isinstance(event, SubagentActivity) and event.event.type == "text_delta":
            deltas.append(event.session_id)
            if len(deltas) == 1:
                sessions[0].request_stop()

    manager.add_listener(on_child)

    def grab(event: LoopEvent, session: ConversationSession) -> None:
        if not sessions:
            sessions.append(session)

    events = asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "delegate", manager, on_event=grab))

    assert finished(events).reason == "stopped"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool"]
    answer = log[2].to_log_dict()
    assert error_code_of(log[2]) == "TOOL_INTERRUPTED" and answer["subagentStatus"] == "cancelled"
    meta = only_sidechain(store, project.id, conversation.id)
    assert answer["subagentSessionId"] == meta.sessionId and meta.status == "cancelled"
    child_log = sidechain_valid(store, project.id, conversation.id, meta.sessionId)
    assert shape(child_log) == ["user", "assistant", "assistant!error"]
    assert child_log[1].to_log_dict()["interrupted"] is True and child_log[1].text.startswith("w0 w1 w2 w3 w4")
    assert child_log[-1].to_log_dict()["error"]["code"] == "SUBAGENT_CANCELLED"
    assert "parent was stopped" in child_log[-1].text
    assert manager.running() == []

    # the parent continues from a valid log
    scripted_llm.script(text("Continuing."))
    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "continue", manager))
    assert_request_valid(scripted_llm.bodies[-1])


def test_cancel_a_background_child_and_shutdown_cancels_the_rest(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(
        tool_calls(
            *[
                call(f"call_{name}", "task", json.dumps({"description": name, "prompt": "x", "subagent_type": "explore", "run_in_background": True}))
                for name in ("bg-a", "bg-b")
            ]
        ),
        text("Both started."),
    )
    never = threading.Event()  # both stream their first words, then nothing until they are cancelled
    scripted_llm.script_for(marker("bg-a"), held_text(never, *WORDS))
    scripted_llm.script_for(marker("bg-b"), held_text(never, *WORDS))
    manager = SubagentManager()
    recorder = Recorder(manager)

    async def scenario() -> None:
        await parent_turn(store, project, conversation.id, scripted_llm.config(), "two in the background", manager)
        ids = {m.description: m.sessionId for m in manager.running(conversation.id)}
        while len({e.session_id for e in recorder.of_type("subagent_activity") if e.event.type == "text_delta"}) < 2:
            await asyncio.sleep(0.005)  # both are streaming
        assert await manager.cancel(ids["bg-a"]) is True
        assert [m.description for m in manager.running()] == ["bg-b"]
        await manager.shutdown()
        assert manager.running() == []

    asyncio.run(scenario())

    log = assert_log_valid(store, project.id, conversation.id)
    notices = _notices(log)
    assert [n.to_log_dict()["subagentStatus"] for n in notices] == ["cancelled", "cancelled"]
    for meta in store.sidechains(project.id, conversation.id).metas():
        assert meta.status == "cancelled"
        child_log = sidechain_valid(store, project.id, conversation.id, meta.sessionId)
        assert child_log[-1].to_log_dict()["error"]["code"] == "SUBAGENT_CANCELLED"
    reasons = {m.description: m.summary for m in store.sidechains(project.id, conversation.id).metas()}
    assert "shut down" in str(reasons["bg-b"]) and "shut down" not in str(reasons["bg-a"])


# -- recovery after a crash (the real kill -9 is in test_subagents_crash.py) ------------------------


def _dead_child(
    store: RuntimeStore, project: ProjectInfo, cid: str, *, background: bool, parent_call: str, streaming: bool = False
) -> SidechainMeta:
    """What a process killed mid-child leaves: meta running and a call without result, or a streaming checkpoint."""
    chains = store.sidechains(project.id, cid)
    now = utc_now_iso()
    meta = chains.create(
        SidechainMeta(
            sessionId=f"agent_dead{parent_call}", agentId=f"dead{parent_call}", conversationId=cid, parentSessionId=cid,
            parentToolCallId=parent_call, type="explore", background=background, createdAt=now, updatedAt=now,
        )
    )
    chains.append(meta, ConversationMessage.new("user", "look"))
    listing = ToolCall.model_validate({"id": "c_list", "function": {"name": "fs.list", "arguments": "{}"}})
    chains.append(meta, ConversationMessage.new("assistant", None, tool_calls=[listing]))
    if streaming:  # the call returned and the next answer was streaming
        chains.append(meta, ConversationMessage.new("tool", '{"ok": true, "entries": []}', tool_call_id="c_list"))
        chains.save_checkpoint(meta.sessionId, {"messageId": "msg_partial", "content": "half an ans"})
    return meta


def test_recovery_marks_dead_children_interrupted_and_repairs_both_chains(store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> None:
    cid = conversation.id
    task = ToolCall.model_validate({"id": "call_fg", "function": {"name": "task", "arguments": "{}"}})
    store.append_message(project.id, cid, ConversationMessage.new("user", "go"))
    store.append_message(project.id, cid, ConversationMessage.new("assistant", None, tool_calls=[task]))
    fg = _dead_child(store, project, cid, background=False, parent_call="call_fg", streaming=True)
    bg = _dead_child(store, project, cid, background=True, parent_call="call_old")

    session = ConversationSession(store, project, cid, adapter=None, registry=None, tool_context=None)  # type: ignore[arg-type]
    appended = session.recover()

    log = assert_log_valid(store, project.id, cid)
    assert shape(log) == ["user", "assistant+calls", "tool", "user"]
    repaired = log[2].to_log_dict()
    assert error_code_of(log[2]) == "TOOL_INTERRUPTED" and repaired["synthetic"] is True
    assert repaired["subagentSessionId"] == fg.sessionId and repaired["subagentStatus"] == "cancelled"
    assert "app stopped" in log[3].text and log[3].to_log_dict()["subagentSessionId"] == bg.sessionId
    assert [m.id for m in appended] == [m.id for m in log[2:]]
    chains = store.sidechains(project.id, cid)
    for meta in (fg, bg):
        assert chains.read_meta(meta.sessionId).status == "interrupted"
        child = sidechain_valid(store, project.id, cid, meta.sessionId)
        assert child[-1].to_log_dict()["error"]["code"] == "SUBAGENT_INTERRUPTED"
    assert shape(sidechain_valid(store, project.id, cid, bg.sessionId)) == ["user", "assistant+calls", "tool", "assistant!error"]
    assert error_code_of(sidechain_valid(store, project.id, cid, bg.sessionId)[2]) == "TOOL_INTERRUPTED"
    fg_log = sidechain_valid(store, project.id, cid, fg.sessionId)
    assert shape(fg_log) == ["user", "assistant+calls", "tool", "assistant!error", "assistant!error"]
    assert fg_log[3].id == "msg_partial" and fg_log[3].text.startswith("half an ans")
    assert chains.read_checkpoint(fg.sessionId) is None

    assert session.recover() == []  # nothing left to do


def test_recovery_leaves_a_child_that_is_still_running_alone(store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> None:
    meta = _dead_child(store, project, conversation.id, background=True, parent_call="call_live")
    chains = store.sidechains(project.id, conversation.id)
    session = ConversationSession(store, project, conversation.id, adapter=None, registry=None, tool_context=None)  # type: ignore[arg-type]
    with chains.lock(meta.sessionId):  # its owner is alive
        assert session.recover() == []
    assert chains.read_meta(meta.sessionId).status == "running"
