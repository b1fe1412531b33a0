"""Issue 18, item 9 "Stale state": what the window shows follows what the log holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.messages import ConversationMessage
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import ContextUsage
from crewagent.worker.values import ConversationSummary
from tests.fakes.scripted_server import ScriptedServer
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
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    return project.id, conversation.id


def test_after_a_kill_opening_a_conversation_reports_the_count_its_log_holds(
    qtbot: Any, host: WorkerThread, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    store.append_message(pid, cid, ConversationMessage.new("user", "write"))
    # The app was killed while the answer streamed: the list was read with one message.
    store.save_stream_checkpoint(pid, cid, {"messageId": "msg_dead", "content": "half an ans", "reasoning": ""})
    assert store.list_conversations(pid)[0].messageCount == 1

    recorder.listen(host.worker.turns, "conversation_counted")
    client.open_conversation.emit(pid, cid)
    qtbot.waitUntil(lambda: bool(recorder.of("conversation_counted")), timeout=10_000)
    changed = recorder.of("conversation_counted")[-1]
    assert changed[0] == pid
    summary = changed[1]
    assert isinstance(summary, ConversationSummary) and summary.id == cid
    # The recovered partial answer is in the log now: the row must say so.
    assert summary.message_count == len(store.load_messages(pid, cid).messages) == 2


def test_opening_a_conversation_reports_its_context_usage_before_any_send(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, opened: tuple[str, str], client: TurnClient, recorder: TurnRecorder
) -> None:
    pid, cid = opened
    store.append_message(pid, cid, ConversationMessage.new("user", "a question " * 200))
    store.append_message(pid, cid, ConversationMessage.new("assistant", "an answer " * 200))

    client.open_conversation.emit(pid, cid)
    qtbot.waitUntil(lambda: bool(recorder.of("context_usage")), timeout=10_000)
    reported_cid, usage = recorder.of("context_usage")[-1]
    assert reported_cid == cid
    assert isinstance(usage, ContextUsage)
    assert usage.used_tokens > 400 and usage.total_budget > usage.used_tokens and 0 < usage.percent < 100
    assert usage.status == "normal"
    assert not scripted_llm.bodies  # computed from the log: no model call
