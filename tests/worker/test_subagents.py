"""The TurnWorker runs the Task tool: children report live as signals, sidechains open for their tab, shutdown stops them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, Signal

from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import LoadedConversation, LoadedSubagent, SubagentInfo, SubagentProgress, TimelineMessage
from tests.fakes.scripted_server import ScriptedServer, slow_text, text
from tests.fakes.subagent_helpers import marker, sidechain_valid, task_step
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_worker

SUBAGENT_SIGNALS = ("subagent_status_changed", "subagent_message_persisted", "subagent_progress", "subagent_notice", "subagent_loaded")
WORDS = [f"word{n} " for n in range(120)]


class SubagentClient(TurnClient):
    open_subagent = Signal(str, str, str)
    cancel_subagent = Signal(str)

    def __init__(self, host: WorkerThread):
        super().__init__(host.worker)
        self.turns = host.worker.turns
        queued = Qt.ConnectionType.QueuedConnection
        self.open_subagent.connect(host.worker.turns.open_subagent, queued)
        self.cancel_subagent.connect(host.worker.turns.cancel_subagent, queued)


class SubagentRecorder(TurnRecorder):
    def __init__(self, host: WorkerThread):
        super().__init__(host.worker.turns)
        for name in SUBAGENT_SIGNALS:
            self.listen(host.worker.turns, name)

    def statuses(self) -> list[SubagentInfo]:
        return [args[0] for args in self.of("subagent_status_changed")]

    def child_messages(self, session_id: str) -> list[TimelineMessage]:
        return [message for _cid, sid, message in self.of("subagent_message_persisted") if sid == session_id]

    def progress(self, kind: str) -> list[SubagentProgress]:
        return [p for _sid, p in self.of("subagent_progress") if p.kind == kind]


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def client(host: WorkerThread) -> SubagentClient:
    return SubagentClient(host)


@pytest.fixture
def recorder(host: WorkerThread) -> SubagentRecorder:
    return SubagentRecorder(host)


@pytest.fixture
def opened(qtbot: Any, project: Any, conversation: Any, client: SubagentClient, host: WorkerThread) -> tuple[str, str]:
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    return project.id, conversation.id


def _task_result(recorder: SubagentRecorder) -> TimelineMessage:
    return next(m for _cid, m in recorder.of("message_persisted") if m.role == "tool")


def test_a_delegated_turn_reports_the_child_live_and_links_its_result(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: SubagentClient, recorder: SubagentRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(task_step("call_task", "child-W", prompt="Look around."), text("Parent: done."))
    scripted_llm.script_for(marker("child-W"), text("The child's ", "answer."))
    client.send.emit(pid, cid, "delegate it", "agent")
    qtbot.waitUntil(recorder.finished, timeout=10_000)

    assert recorder.of("turn_finished")[-1][1] == "completed"
    running, done = recorder.statuses()
    assert (running.status, done.status) == ("running", "completed")
    assert running.session_id == done.session_id and running.session_id.startswith("agent_")
    assert (done.parent_session_id, done.parent_call_id, done.conversation_id) == (cid, "call_task", cid)
    assert (done.subagent_type, done.description, done.summary, done.depth) == ("general-purpose", "child-W", "The child's answer.", 1)
    sid = done.session_id
    child = recorder.child_messages(sid)
    assert [(m.role, m.text) for m in child] == [("user", "Look around."), ("assistant", "The child's answer.")]
    assert recorder.progress("stream_started") and "".join(p.text for p in recorder.progress("stream_chunk")) == "The child's answer."
    # the child's events never pass as the parent's
    assert all(m.text != "The child's answer." for _cid, m in recorder.of("message_persisted") if m.role == "assistant")
    result = _task_result(recorder)
    assert result.subagent is not None
    assert (result.subagent.session_id, result.subagent.subagent_type, result.subagent.status) == (sid, "general-purpose", "completed")
    assert result.subagent.parent_call_id == "call_task" and result.subagent.summary == "The child's answer."
    sidechain_valid(store, pid, cid, sid)

    # the sidechain opens for its tab, with what the parent's Task part needs to say about it
    with wait_signal(qtbot, client.turns.subagent_loaded, timeout=5_000) as blocker:
        client.open_subagent.emit(pid, cid, sid)
    loaded: LoadedSubagent = blocker.args[0]
    assert loaded.error == "" and loaded.info is not None and loaded.info.status == "completed"
    assert loaded.timeline.conversation_id == sid and not loaded.timeline.running
    assert [m.id for m in loaded.timeline.messages] == [m.id for m in child]

    # and the parent, opened again, knows its child's status from the meta
    with wait_signal(qtbot, client.turns.conversation_loaded, timeout=5_000) as blocker:
        client.open_conversation.emit(pid, cid)
    reopened: LoadedConversation = blocker.args[0]
    assert [(i.session_id, i.status, i.parent_call_id) for i in reopened.subagents] == [(sid, "completed", "call_task")]


def test_a_background_child_outlives_the_turn_and_its_notice_is_reported(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: SubagentClient, recorder: SubagentRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(task_step("call_bg", "bg-W", run_in_background=True), text("Started it."))
    scripted_llm.script_for(marker("bg-W"), slow_text("background ", "work ", "finished.", interval=0.1))
    client.send.emit(pid, cid, "in the background please", "agent")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    assert _task_result(recorder).subagent is not None and _task_result(recorder).subagent.status == "running"  # type: ignore[union-attr]

    qtbot.waitUntil(lambda: bool(recorder.of("subagent_notice")), timeout=10_000)
    notice_cid, notice = recorder.of("subagent_notice")[0]
    assert notice_cid == cid and notice.is_subagent_notice and notice.text.startswith("SUBAGENT_NOTICE")
    assert notice.subagent is not None and (notice.subagent.status, notice.subagent.summary) == ("completed", "background work finished.")
    assert [s.status for s in recorder.statuses()] == ["running", "completed"]
    # the notice is in the log, and the Works list hears of the new message
    assert store.load_messages(pid, cid).messages[-1].id == notice.id
    qtbot.waitUntil(lambda: any(s.message_count == 5 for _pid, s in recorder.of("conversation_changed")), timeout=5_000)

    # reopened: the Task result still says running, the meta (and so the timeline) says completed
    with wait_signal(qtbot, client.turns.conversation_loaded, timeout=5_000) as blocker:
        client.open_conversation.emit(pid, cid)
    loaded: LoadedConversation = blocker.args[0]
    assert [i.status for i in loaded.subagents] == ["completed"]
    assert loaded.messages[-1].is_subagent_notice


def test_stop_cancels_a_foreground_child_and_its_sidechain_ends_cancelled(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: SubagentClient, recorder: SubagentRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(task_step("call_fg", "fg-W"))
    scripted_llm.script_for(marker("fg-W"), slow_text(*WORDS, interval=0.05))
    client.send.emit(pid, cid, "delegate and wait", "agent")
    qtbot.waitUntil(lambda: len(recorder.progress("stream_chunk")) >= 3, timeout=10_000)
    sid = recorder.statuses()[0].session_id

    # opened while it runs: the tab's snapshot says running and holds the prompt
    with wait_signal(qtbot, client.turns.subagent_loaded, timeout=5_000) as blocker:
        client.open_subagent.emit(pid, cid, sid)
    live: LoadedSubagent = blocker.args[0]
    assert live.info is not None and live.info.running and live.timeline.running
    assert [m.role for m in live.timeline.messages] == ["user"]
    assert live.timeline.streaming and live.timeline.streaming_text.startswith("word0 word1 word2")

    client.stop.emit(cid)
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    assert [s.status for s in recorder.statuses()] == ["running", "cancelled"]
    result = _task_result(recorder)
    assert result.subagent is not None and result.subagent.status == "cancelled" and "TOOL_INTERRUPTED" in result.text
    last = recorder.child_messages(sid)[-1]
    assert last.is_error and last.interrupted and last.error["code"] == "SUBAGENT_CANCELLED"
    assert recorder.progress("finished")
    messages = sidechain_valid(store, pid, cid, sid)
    assert messages[-1].id == last.id


def test_cancel_subagent_stops_a_background_child(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: SubagentClient, recorder: SubagentRecorder
) -> None:
    pid, cid = opened
    scripted_llm.script(task_step("call_bg", "bg-X", run_in_background=True), text("Started it."))
    scripted_llm.script_for(marker("bg-X"), slow_text(*WORDS, interval=0.05))
    client.send.emit(pid, cid, "in the background please", "agent")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    qtbot.waitUntil(lambda: len(recorder.progress("stream_chunk")) >= 2, timeout=10_000)
    sid = recorder.statuses()[0].session_id

    client.cancel_subagent.emit(sid)
    qtbot.waitUntil(lambda: bool(recorder.of("subagent_notice")), timeout=10_000)
    assert [s.status for s in recorder.statuses()] == ["running", "cancelled"]
    assert recorder.of("subagent_notice")[0][1].subagent.status == "cancelled"
    assert store.sidechains(pid, cid).read_meta(sid).status == "cancelled"


def test_shutdown_stops_a_running_background_child_in_bounded_time(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: SubagentClient, recorder: SubagentRecorder,
    host: WorkerThread,
) -> None:
    pid, cid = opened
    scripted_llm.script(task_step("call_bg", "bg-Y", run_in_background=True), text("Started it."))
    scripted_llm.script_for(marker("bg-Y"), slow_text(*WORDS, interval=0.05))
    client.send.emit(pid, cid, "in the background please", "agent")
    qtbot.waitUntil(recorder.finished, timeout=10_000)
    qtbot.waitUntil(lambda: len(recorder.progress("stream_chunk")) >= 2, timeout=10_000)
    sid = recorder.statuses()[0].session_id

    assert host.worker.turns.shutdown(timeout=5.0) is True
    meta = store.sidechains(pid, cid).read_meta(sid)
    assert meta.status == "cancelled" and "shut down" in (meta.summary or "")
    messages = sidechain_valid(store, pid, cid, sid)
    assert messages[-1].to_log_dict()["error"]["code"] == "SUBAGENT_CANCELLED"
