"""Repair appends one TOOL_INTERRUPTED result per unanswered call, so the reloaded log is valid."""

from __future__ import annotations

import json
from typing import Any

from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.protocol import (
    DOTTED_FUNCTION_NAME,
    INTERRUPTED_CODE,
    assemble,
    plan_repair,
    repair_conversation,
    validate_messages,
)


def msg(role: str, content: str | None = None, **fields: Any) -> ConversationMessage:
    return ConversationMessage.new(role, content, **fields)  # type: ignore[arg-type]


def tool_calls(*ids: str, name: str = "fs.read") -> ConversationMessage:
    return msg(
        "assistant",
        None,
        tool_calls=[{"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}} for i in ids],
        mode="run",
        runId="run_1",
    )


def tool(call_id: str, content: str = '{"ok": true}') -> ConversationMessage:
    return msg("tool", content, tool_call_id=call_id, toolName="fs.read")


class Log:
    """Stands in for the store's append: keeps what was appended, in order."""

    def __init__(self, messages: list[ConversationMessage]) -> None:
        self.messages = list(messages)
        self.appended: list[ConversationMessage] = []

    def append(self, message: ConversationMessage) -> ConversationMessage:
        stored = ConversationMessage.model_validate_json(message.to_log_line())  # what a reload sees
        self.messages.append(stored)
        self.appended.append(stored)
        return stored


def test_crash_during_a_tool_appends_interrupted_results_and_the_log_validates() -> None:
    log = Log([msg("user", "read both"), tool_calls("call_a", "call_b"), tool("call_a")])
    result = repair_conversation(log.messages, log.append)

    assert [m.tool_call_id for m in result.appended] == ["call_b"]
    synthetic = log.appended[0]
    assert synthetic.role == "tool" and synthetic.partType == "error"
    assert getattr(synthetic, "synthetic") is True
    assert synthetic.toolName == "fs.read" and synthetic.mode == "run" and synthetic.runId == "run_1"
    body = json.loads(synthetic.text)
    assert body["ok"] is False and body["error"]["code"] == INTERRUPTED_CODE
    assert "call_b" in body["error"]["message"]

    payload = [to_openai(m) for m in log.messages]
    assert validate_messages(payload, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert result.report.unansweredToolCallIds == []


def test_repair_is_idempotent() -> None:
    log = Log([msg("user", "go"), tool_calls("call_a")])
    repair_conversation(log.messages, log.append)
    second = repair_conversation(log.messages, log.append)
    assert second.appended == [] and not second.changed
    assert len(log.appended) == 1


def test_calls_of_a_running_loop_are_left_alone() -> None:
    log = Log([msg("user", "go"), tool_calls("call_a", "call_b")])
    result = repair_conversation(log.messages, log.append, running_call_ids=["call_b"])
    assert [m.tool_call_id for m in result.appended] == ["call_a"]


def test_result_appended_after_a_later_message_is_attached_to_its_call() -> None:
    # An older build let a user message in before the repair ran.
    log = Log([msg("user", "go"), tool_calls("call_a"), msg("user", "hello?")])
    repair_conversation(log.messages, log.append)
    chain = assemble(log.messages)
    group = chain.units[1]
    assert group.kind == "group" and set(group.results) == {"call_a"}
    assert chain.report.unansweredToolCallIds == []


def test_orphans_and_duplicates_stay_in_the_log_and_are_reported() -> None:
    orphan = tool("call_nobody")
    first = tool("call_a")
    duplicate = tool("call_a", "again")
    log = Log([msg("user", "go"), orphan, tool_calls("call_a"), first, duplicate])
    result = repair_conversation(log.messages, log.append)
    assert result.appended == []
    assert orphan in result.messages and duplicate in result.messages
    assert result.report.orphanToolMessageIds == [orphan.id]
    assert result.report.duplicateToolResultIds == [duplicate.id]


def test_every_call_of_every_interrupted_turn_is_repaired_in_order() -> None:
    messages = [msg("user", "1"), tool_calls("a1", "a2"), msg("user", "2"), tool_calls("b1")]
    assert [m.tool_call_id for m in plan_repair(messages)] == ["a1", "a2", "b1"]
