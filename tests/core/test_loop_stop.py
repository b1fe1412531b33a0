"""Stop: while streaming, while tools run, before the first token. The log stays valid and resumable."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from crewagent.core.llm.local_server import Pause
from crewagent.core.loop import (
    ContextBuilt,
    ConversationSession,
    LoopEvent,
    MessagePersisted,
    StreamStarted,
    TextDelta,
    ToolCallFinished,
    TurnStarted,
    toolloop,
)
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import Tool, ToolContext, audit_path, default_registry, ok, read_audit
from tests.core.loop_helpers import (
    assert_log_valid,
    assert_request_valid,
    error_code_of,
    finished,
    persisted,
    result_of,
    shape,
    turn,
)
from tests.fakes.scripted_server import ScriptedServer, call, chunk, raw_stream, slow_text, text, tool_calls

WORDS = [f"w{n} " for n in range(60)]


def _continue(scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> list[dict[str, Any]]:
    """A "continue" turn after the stop: it completes and its request validates; returns the history sent."""
    scripted_llm.script(text("Continuing."))
    assert finished(turn(store, project, conversation.id, scripted_llm.config(), "continue")).reason == "completed"
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert history[-1] == {"role": "user", "content": "continue"}
    assert_log_valid(store, project.id, conversation.id)
    return history


def test_stop_while_streaming_keeps_the_partial_text_as_interrupted(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkpoint every 0.1 s instead of 0.5 s: 12 words 20 ms apart (at least 0.24 s) cross it, and
    # the 48 words left (~1 s) are still to come when Stop aborts the stream.
    monkeypatch.setattr(toolloop, "CHECKPOINT_INTERVAL_S", 0.1)
    scripted_llm.script(slow_text(*WORDS, interval=0.02))
    seen: list[str] = []
    checkpoint_at_stop: list[Any] = []

    def on_event(event: LoopEvent, session: ConversationSession) -> None:
        if isinstance(event, TextDelta):
            seen.append(event.text)
            if len(seen) == 12:  # >= 0.24 s: a checkpoint (every 100 ms) has been written
                checkpoint_at_stop.append(store.read_stream_checkpoint(project.id, conversation.id))
                session.request_stop()

    events = turn(store, project, conversation.id, scripted_llm.config(), "Count slowly", on_event=on_event)

    assert finished(events).reason == "stopped"
    assert len(seen) == 12  # nothing streamed after Stop
    saved = checkpoint_at_stop[0]
    assert saved is not None and saved["content"] and "".join(seen).startswith(saved["content"])
    assert store.read_stream_checkpoint(project.id, conversation.id) is None  # cleared
    assert scripted_llm.local_server.wait_for_disconnect(1)  # the HTTP stream was aborted
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant"]
    part = log[-1]
    assert part.content == "".join(seen)
    assert part.interrupted is True and part.error["code"] == "LLM_INTERRUPTED"
    assert part.id == persisted(events)[-1].id

    history = _continue(scripted_llm, store, project, conversation)
    assert shape(history) == ["user", "assistant", "user"]
    assert history[1]["content"] == "".join(seen)


def test_stop_while_tools_run_cancels_them_and_keeps_finished_results(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    cancelled: list[str] = []

    async def slow(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(ctx.call_id or "")
            raise
        return ok()

    async def fast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return ok(answer=42)

    registry = default_registry()
    registry.register(Tool("t.slow", "slow", slow, parameters={"type": "object", "properties": {}}))
    registry.register(Tool("t.fast", "fast", fast, parameters={"type": "object", "properties": {}}))
    # the slow call comes first: the fast one's result is waiting for it (not yet persisted) at Stop
    scripted_llm.script(tool_calls(call("c_slow", "t_slow", "{}"), call("c_fast", "t_fast", "{}"), call("c_slow2", "t_slow", "{}")))

    def on_event(event: LoopEvent, session: ConversationSession) -> None:
        if isinstance(event, ToolCallFinished) and event.call_id == "c_fast":
            session.request_stop()

    events = turn(store, project, conversation.id, scripted_llm.config(), "run them", registry=registry, on_event=on_event)

    assert finished(events).reason == "stopped"
    assert sorted(cancelled) == ["c_slow", "c_slow2"]  # running tools were cancelled
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "tool", "tool"]
    tools = log[2:]
    assert [m.tool_call_id for m in tools] == ["c_slow", "c_fast", "c_slow2"]  # call order
    assert [error_code_of(m) for m in tools] == ["TOOL_INTERRUPTED", None, "TOOL_INTERRUPTED"]
    assert result_of(tools[1]) == {"ok": True, "answer": 42}  # the finished one is kept
    assert [m.id for m in persisted(events)[-3:]] == [m.id for m in tools]
    audit = read_audit(audit_path(project.runtime_dir / "state", conversation_id=conversation.id))
    codes = {a["callId"]: a.get("errorCode") for a in audit}
    assert codes == {"c_slow": "TOOL_INTERRUPTED", "c_fast": None, "c_slow2": "TOOL_INTERRUPTED"}  # every call audited
    assert len(scripted_llm.requests) == 1  # no model call after Stop

    history = _continue(scripted_llm, store, project, conversation)
    assert shape(history) == ["user", "assistant+calls", "tool", "tool", "tool", "user"]


def test_stop_before_the_first_token_writes_no_assistant_message(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(raw_stream(chunk({"role": "assistant", "content": ""}), Pause(10), chunk({"content": "late"}), chunk({}, "stop")))

    def on_event(event: LoopEvent, session: ConversationSession) -> None:
        if isinstance(event, StreamStarted):
            session.request_stop()

    events = turn(store, project, conversation.id, scripted_llm.config(), "hello", on_event=on_event)

    assert finished(events).reason == "stopped"
    assert not any(isinstance(e, TextDelta) for e in events)
    assert scripted_llm.local_server.wait_for_disconnect(1)
    assert shape(assert_log_valid(store, project.id, conversation.id)) == ["user"]
    assert store.read_stream_checkpoint(project.id, conversation.id) is None

    history = _continue(scripted_llm, store, project, conversation)
    assert shape(history) == ["user", "user"]


def test_stop_before_the_request_is_sent(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    def on_event(event: LoopEvent, session: ConversationSession) -> None:
        if isinstance(event, TurnStarted):
            session.request_stop()

    events = turn(store, project, conversation.id, scripted_llm.config(), "hello", on_event=on_event)

    assert finished(events).reason == "stopped"
    assert not any(isinstance(e, ContextBuilt) for e in events)
    assert scripted_llm.requests == []
    assert [m.content for m in persisted(events)] == ["hello"]
    assert shape(assert_log_valid(store, project.id, conversation.id)) == ["user"]
    assert shape(_continue(scripted_llm, store, project, conversation)) == ["user", "user"]


def test_stop_after_the_answer_finished_changes_nothing(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(text("All ", "done."))

    def on_event(event: LoopEvent, session: ConversationSession) -> None:
        if isinstance(event, MessagePersisted) and event.message.role == "assistant":
            session.request_stop()

    events = turn(store, project, conversation.id, scripted_llm.config(), "hi", on_event=on_event)

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    assert [(m.role, m.content, getattr(m, "interrupted", None)) for m in log] == [("user", "hi", None), ("assistant", "All done.", None)]
