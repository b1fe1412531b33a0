"""The TurnWorker runs turns off the GUI thread and reports them as signals carrying frozen values."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from crewagent.core.messages import ConversationMessage
from crewagent.core.settings import SettingsStore
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import (
    ApprovalPrompt,
    AskUserPrompt,
    ContextUsage,
    LoadedConversation,
    TimelineMessage,
    ToolFinish,
)
from tests.core.loop_helpers import assert_log_valid, assert_request_valid
from tests.fakes.scripted_server import ScriptedServer, call, drop, slow_text, text, tool_calls
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_worker


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def client(host: WorkerThread) -> TurnClient:
    return TurnClient(host.worker)


@pytest.fixture
def recorder(host: WorkerThread) -> TurnRecorder:
    return TurnRecorder(host.worker.turns)


@pytest.fixture
def opened(qtbot: Any, project: Any, conversation: Any, client: TurnClient, host: WorkerThread) -> tuple[str, str]:
    """The project opened in the worker (turns need it) and the conversation's id."""
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    return project.id, conversation.id


def test_a_turn_with_a_tool_call_reports_every_step_in_order(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    (Path(store.recent_projects()[0].projectRoot) / "notes.md").write_text("hello", encoding="utf-8")
    scripted_llm.script(
        tool_calls(call("call_1", "fs_list", '{"path": "@pro', 'ject"}')),
        text("There is ", "one note."),
    )
    client.send.emit(pid, cid, "list the files", "chat")
    qtbot.waitUntil(recorder.finished, timeout=10_000)

    names = [name for name in recorder.names() if name not in ("stream_chunk", "provider_changed", "conversation_changed")]
    assert names == [
        "turn_started",
        "message_persisted",  # the user message
        "context_usage",
        "stream_started",
        "stream_ended",
        "message_persisted",  # the assistant message with the tool call
        "tool_started",
        "tool_finished",
        "message_persisted",  # the tool result
        "context_usage",
        "stream_started",
        "stream_ended",
        "message_persisted",  # the answer
        "turn_finished",
    ]
    persisted = [args[1] for args in recorder.of("message_persisted")]
    assert all(isinstance(m, TimelineMessage) for m in persisted)
    assert [m.role for m in persisted] == ["user", "assistant", "tool", "assistant"]
    assert persisted[1].tool_calls[0].name == "fs.list"
    assert persisted[2].tool_call_id == "call_1" and persisted[2].part_type == "tool_result"
    assert persisted[3].text == "There is one note."
    assert "".join(args[1] for args in recorder.of("stream_chunk")) == "There is one note."
    (finish,) = [args[1] for args in recorder.of("tool_finished")]
    assert isinstance(finish, ToolFinish) and finish.ok and finish.name == "fs.list"
    usage = recorder.of("context_usage")[0][1]
    assert isinstance(usage, ContextUsage) and usage.status == "normal" and usage.total_budget > 0
    assert recorder.of("turn_finished")[-1] == (cid, "completed", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        persisted[0].text = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        finish.result["ok"] = False  # type: ignore[index]
    # the summary follows the turn: the auto title and the count
    qtbot.waitUntil(lambda: bool(recorder.of("conversation_changed")))
    _, summary = recorder.of("conversation_changed")[-1]
    assert summary.message_count == 4


def test_signals_are_emitted_off_the_gui_thread(
    qtbot: Any, scripted_llm: ScriptedServer, opened: tuple[str, str], client: TurnClient, host: WorkerThread
) -> None:
    pid, cid = opened
    threads: list[int] = []
    host.worker.turns.turn_started.connect(lambda *_: threads.append(threading.get_ident()), Qt.ConnectionType.DirectConnection)
    scripted_llm.script(text("hi"))
    with wait_signal(qtbot, host.worker.turns.turn_finished, timeout=10_000):
        client.send.emit(pid, cid, "hello", "chat")
    assert threads and threads[0] != threading.get_ident()


def test_a_request_from_the_wrong_thread_fails_loudly(host: WorkerThread) -> None:
    with pytest.raises(RuntimeError, match="called directly from another thread"):
        host.worker.turns.stop("conv_x")


def test_stop_mid_stream_persists_the_partial_text_as_interrupted(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(slow_text(*[f"word{i} " for i in range(80)], interval=0.03))
    client.send.emit(pid, cid, "tell me a long story", "chat")
    qtbot.waitUntil(lambda: len(recorder.of("stream_chunk")) >= 3, timeout=10_000)
    client.stop.emit(cid)
    qtbot.waitUntil(recorder.finished, timeout=5_000)

    assert recorder.of("turn_finished")[-1][1] == "stopped"
    last = recorder.of("message_persisted")[-1][1]
    assert last.role == "assistant" and last.interrupted and last.text.startswith("word0 word1 word2")
    stored = store.load_messages(pid, cid).messages
    assert stored[-1].id == last.id


def test_open_recovers_a_dead_stream_and_continue_goes_on(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    store.append_message(pid, cid, ConversationMessage.new("user", "write"))
    store.save_stream_checkpoint(pid, cid, {"messageId": "msg_dead", "content": "half an ans", "reasoning": ""})

    client.open_conversation.emit(pid, cid)
    qtbot.waitUntil(lambda: bool(recorder.of("conversation_loaded")))
    (loaded,) = recorder.of("conversation_loaded")[0]
    assert isinstance(loaded, LoadedConversation) and not loaded.running
    assert [m.role for m in loaded.messages] == ["user", "assistant"]
    assert loaded.messages[-1].interrupted and loaded.messages[-1].is_error

    scripted_llm.script(text("…wer, finished."))
    client.continue_turn.emit(pid, cid, "chat")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    assert recorder.of("turn_finished")[-1][1] == "completed"
    body = scripted_llm.bodies[-1]
    assert body["messages"][-1] == {"role": "user", "content": "continue"}


def test_an_llm_error_is_persisted_and_retry_runs_the_failed_turn_again_without_a_second_user_message(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(drop("Partial "), text("Whole answer."), text("Fine."))
    client.send.emit(pid, cid, "explain", "chat")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    reason, error = recorder.of("turn_finished")[-1][1:]
    assert reason == "error" and error["code"]
    part = recorder.of("message_persisted")[-1][1]
    assert part.is_error and part.text.startswith("Partial")

    client.retry.emit(pid, cid, "chat")
    qtbot.waitUntil(lambda: recorder.finished(2), timeout=10_000)
    assert recorder.of("turn_finished")[-1][1] == "completed"
    log = assert_log_valid(store, pid, cid)
    assert [m.text for m in log if m.role == "user"] == ["explain"]
    # The retried request is the failed one again: the user's message last, no failed attempt in it.
    retried = assert_request_valid(scripted_llm.bodies[-1])
    assert retried[-1] == {"role": "user", "content": "explain"}
    assert not any("Partial" in str(m.get("content")) for m in retried)

    # The next turn sees the question once and the answer that worked, not the failed attempt.
    client.send.emit(pid, cid, "thanks", "chat")
    qtbot.waitUntil(lambda: recorder.finished(3), timeout=10_000)
    later = assert_request_valid(scripted_llm.bodies[-1])
    assert [(m["role"], m["content"]) for m in later if m["role"] != "system"] == [
        ("user", "explain"), ("assistant", "Whole answer."), ("user", "thanks")
    ]


def test_approval_is_asked_and_always_is_saved_to_settings(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    args = json.dumps({"path": "@project/out.md", "content": "# hi"})
    scripted_llm.script(tool_calls(call("call_w", "fs_write", args)), text("Written."))
    client.send.emit(pid, cid, "write a file", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=10_000)
    (prompt,) = recorder.of("approval_requested")[0]
    assert isinstance(prompt, ApprovalPrompt) and prompt.tool == "fs.write" and prompt.conversation_id == cid
    client.answer_approval.emit(prompt.request_id, "allow_always")
    qtbot.waitUntil(recorder.finished, timeout=10_000)

    assert recorder.of("turn_finished")[-1][1] == "completed"
    root = Path(store.recent_projects()[0].projectRoot)
    assert (root / "out.md").read_text(encoding="utf-8") == "# hi"
    assert "fs.write" in SettingsStore().load().tools.alwaysAllow


def test_allow_for_this_conversation_holds_for_its_next_turn(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    """The session keeps one approval gate: a grant for the conversation is not asked again next turn."""
    pid, cid = opened
    first, second = (json.dumps({"path": f"@project/{name}.md", "content": name}) for name in ("one", "two"))
    scripted_llm.script(tool_calls(call("call_1", "fs_write", first)), text("One."), tool_calls(call("call_2", "fs_write", second)), text("Two."))
    client.send.emit(pid, cid, "write one", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=10_000)
    client.answer_approval.emit(recorder.of("approval_requested")[0][0].request_id, "allow_conversation")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    client.send.emit(pid, cid, "write two", "chat")
    qtbot.waitUntil(lambda: recorder.finished(2), timeout=10_000)

    assert [args[1] for args in recorder.of("turn_finished")] == ["completed", "completed"]
    assert len(recorder.of("approval_requested")) == 1
    root = Path(store.recent_projects()[0].projectRoot)
    assert (root / "two.md").read_text(encoding="utf-8") == "two"
    assert "fs.write" not in SettingsStore().load().tools.alwaysAllow


def test_a_denied_write_becomes_a_tool_result_the_model_reads(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    args = json.dumps({"path": "@project/out.md", "content": "x"})
    scripted_llm.script(tool_calls(call("call_w", "fs_write", args)), text("OK, I will not."))
    client.send.emit(pid, cid, "write", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=10_000)
    client.answer_approval.emit(recorder.of("approval_requested")[0][0].request_id, "deny")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    result = [m for _, m in recorder.of("message_persisted") if m.role == "tool"][0]
    assert result.part_type == "error" and "E_USER_DENIED" in result.text
    assert not (Path(store.recent_projects()[0].projectRoot) / "out.md").exists()


def test_ask_user_waits_for_the_widget_submit(
    qtbot: Any, scripted_llm: ScriptedServer, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    widget = {"type": "selection", "title": "Which colour?", "options": ["red", "blue"]}
    scripted_llm.script(tool_calls(call("call_q", "ui_ask_user", json.dumps(widget))), text("Blue it is."))
    client.send.emit(pid, cid, "pick", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("ask_user_requested")), timeout=10_000)
    (prompt,) = recorder.of("ask_user_requested")[0]
    assert isinstance(prompt, AskUserPrompt) and prompt.call_id == "call_q" and prompt.widget["title"] == "Which colour?"
    client.answer_ask_user.emit(prompt.request_id, {"selected": "blue"})
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    result = [m for _, m in recorder.of("message_persisted") if m.role == "tool"][0]
    assert result.result_json() == {"ok": True, "widgetType": "selection", "response": {"selected": "blue"}}


def test_stop_while_a_question_waits_withdraws_it_and_interrupts_the_call(
    qtbot: Any, scripted_llm: ScriptedServer, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    widget = {"type": "confirmation", "title": "Go?"}
    scripted_llm.script(tool_calls(call("call_q", "ui_ask_user", json.dumps(widget))))
    client.send.emit(pid, cid, "ask me", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("ask_user_requested")), timeout=10_000)
    client.stop.emit(cid)
    qtbot.waitUntil(recorder.finished, timeout=5_000)
    assert recorder.of("prompt_withdrawn") == [(recorder.of("ask_user_requested")[0][0].request_id,)]
    result = [m for _, m in recorder.of("message_persisted") if m.role == "tool"][0]
    assert result.tool_call_id == "call_q" and result.is_error
    assert recorder.of("turn_finished")[-1][1] == "stopped"


def test_set_mode_changes_the_next_requests_system_prefix(
    qtbot: Any, scripted_llm: ScriptedServer, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(text("one"), text("two"))
    client.send.emit(pid, cid, "first", "chat")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    client.set_mode.emit(pid, cid, "agent")
    qtbot.waitUntil(lambda: any(s.active_type == "agent" for _, s in recorder.of("conversation_changed")))
    client.send.emit(pid, cid, "second", "agent")
    qtbot.waitUntil(lambda: recorder.finished(2), timeout=10_000)

    def system_text(body: dict[str, Any]) -> str:
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    first, second = scripted_llm.bodies
    assert "- active: chat" in system_text(first)
    assert "- active: agent" in system_text(second)
    assert [m["content"] for m in second["messages"] if m["role"] == "user"] == ["first", "second"]


def test_shutdown_stops_a_running_turn_cleanly(
    qtbot: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer, store: Any, project: Any, conversation: Any
) -> None:
    scripted_llm.script(slow_text(*[f"w{i} " for i in range(80)], interval=0.03))
    host = WorkerThread(__import__("crewagent.worker", fromlist=["Worker"]).Worker(
        isolated_dirs["data"], provider_factory=lambda s, d: scripted_llm.config(max_retries=0))).start()
    try:
        client, recorder = TurnClient(host.worker), TurnRecorder(host.worker.turns)
        with wait_signal(qtbot, host.worker.project_opened):
            client.open_project.emit(str(project.root))
        client.send.emit(project.id, conversation.id, "go", "chat")
        qtbot.waitUntil(lambda: len(recorder.of("stream_chunk")) >= 2, timeout=10_000)
    finally:
        assert host.worker.turns.shutdown(timeout=5.0)
        host.stop()
    last = store.load_messages(project.id, conversation.id).messages[-1]
    assert last.role == "assistant" and last.interrupted is True


def test_a_long_conversation_opens_with_its_newest_messages_then_the_whole_of_it(
    qtbot: Any, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    from crewagent.worker.turns import FIRST_PAGE

    pid, cid = opened
    count = FIRST_PAGE + 60
    store.append_messages(pid, cid, [ConversationMessage.new("user" if n % 2 else "assistant", f"m{n}") for n in range(count)])

    client.open_conversation.emit(pid, cid)
    qtbot.waitUntil(lambda: len(recorder.of("conversation_loaded")) == 2)
    (first,), (whole,) = recorder.of("conversation_loaded")
    stored = [m.id for m in store.load_messages(pid, cid).messages]
    assert not first.complete and [m.id for m in first.messages] == stored[-FIRST_PAGE:]
    assert whole.complete and [m.id for m in whole.messages] == stored

    # A short one is simply loaded whole.
    short = store.create_conversation(pid)
    store.append_messages(pid, short.id, [ConversationMessage.new("user", "hello")])
    client.open_conversation.emit(pid, short.id)
    qtbot.waitUntil(lambda: len(recorder.of("conversation_loaded")) == 3)
    (only,) = recorder.of("conversation_loaded")[2]
    assert only.complete and [m.text for m in only.messages] == ["hello"]
