"""Issue 18, item 9 "Stale state": what the window shows follows what the log holds."""

from __future__ import annotations

from typing import Any

from crewagent.core.messages import ConversationMessage
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import ContextUsage
from crewagent.worker.values import ConversationSummary
from tests.fakes.scripted_server import ScriptedServer
from tests.worker.test_turns import client, host, opened, recorder  # noqa: F401  (fixtures)
from tests.worker.turns_support import TurnClient, TurnRecorder


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
