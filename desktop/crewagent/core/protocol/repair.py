"""Repair a log whose tool calls never got results: append one synthetic TOOL_INTERRUPTED result each."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crewagent.core.messages import ConversationMessage, ToolCall
from crewagent.core.protocol.chain import ChainReport, assemble, interrupted_result

Append = Callable[[ConversationMessage], ConversationMessage]


@dataclass(frozen=True, slots=True)
class RepairResult:
    """The log after repair, the synthetic messages that were appended, and what stays excluded."""

    messages: list[ConversationMessage | Mapping[str, Any]]
    appended: list[ConversationMessage]
    report: ChainReport

    @property
    def changed(self) -> bool:
        return bool(self.appended)


def interrupted_message(call: ToolCall, assistant: ConversationMessage) -> ConversationMessage:
    """The synthetic ``role=tool`` result for ``call``, tagged like the assistant that issued it."""
    return ConversationMessage.new(
        "tool",
        interrupted_result(call),
        tool_call_id=call.id,
        toolName=call.function.name,
        partType="error",
        synthetic=True,
        mode=assistant.mode,
        runId=assistant.runId,
        agentId=assistant.agentId,
        workflowId=assistant.workflowId,
    )


def plan_repair(
    messages: Sequence[ConversationMessage | Mapping[str, Any]],
    *,
    running_call_ids: Iterable[str] = (),
) -> list[ConversationMessage]:
    """The synthetic results the log needs, in call order; nothing for calls still running."""
    chain = assemble(messages, pending_call_ids=running_call_ids)
    unanswered = set(chain.report.unansweredToolCallIds)
    synthetic: list[ConversationMessage] = []
    for unit in chain.units:
        if unit.kind != "group":
            continue
        for call in unit.missing_calls():
            if call.id in unanswered:
                synthetic.append(interrupted_message(call, unit.message))
    return synthetic


def repair_conversation(
    messages: Sequence[ConversationMessage | Mapping[str, Any]],
    append: Append,
    *,
    running_call_ids: Iterable[str] = (),
) -> RepairResult:
    """Persist a TOOL_INTERRUPTED result for every call without one (through ``append``).

    Called when a conversation is opened and before any request. Calls in
    ``running_call_ids`` belong to a loop that is still running and are left alone. Orphan and
    duplicate results are not touched: they stay in the log, the context builder leaves them
    out, and the returned report names them.
    """
    running = tuple(running_call_ids)
    appended = [append(message) for message in plan_repair(messages, running_call_ids=running)]
    repaired: list[ConversationMessage | Mapping[str, Any]] = [*messages, *appended]
    report = assemble(repaired, pending_call_ids=running).report
    return RepairResult(repaired, appended, report)
