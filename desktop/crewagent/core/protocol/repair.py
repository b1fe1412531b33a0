"""Repair a log whose tool calls never got results: append one synthetic TOOL_INTERRUPTED result each.

:func:`repaired_chain` is the same repair done in memory, for what leaves the app (an export)
or enters it (``import --repair``): the chain exactly as a request would carry it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crewagent.core.messages import ConversationMessage, ToolCall
from crewagent.core.protocol.branches import current_branch
from crewagent.core.protocol.chain import ChainReport, assemble, coerce, interrupted_result
from crewagent.core.protocol.order import ANSWERS_FIELD, log_order

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
    """The synthetic ``role=tool`` result for ``call``, tagged like the assistant that issued it.

    It names that assistant (``answersMessageId``): appended after later messages, it is still
    read as part of the call's block (see :mod:`.order`).
    """
    fields: dict[str, Any] = {ANSWERS_FIELD: assistant.id} if assistant.id else {}
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
        **fields,
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


@dataclass(frozen=True, slots=True)
class RepairedChain:
    """A log as a valid chain, with all of its history: what a request would carry of it.

    ``messages`` are the log's own messages (an assistant trimmed to its valid calls, a message
    whose calls are all invalid without them) and, for each call left unanswered, a synthetic
    TOOL_INTERRUPTED result. ``moved_result_ids`` are results the log holds away from their call.
    """

    messages: list[ConversationMessage]
    report: ChainReport
    moved_result_ids: list[str]

    @property
    def changes(self) -> list[str]:
        """What the chain changed compared with the log read in its own order; empty when nothing."""
        return self.describe()

    def describe(self, label: Callable[[str], str] = str) -> list[str]:
        """:attr:`changes`, with each message id shown as ``label(id)`` (call ids as they are)."""
        report = self.report

        def labelled(ids: list[str]) -> list[str]:
            return [label(i) for i in ids]

        found = [
            (report.unansweredToolCallIds, "tool call(s) without a result answered with TOOL_INTERRUPTED"),
            (labelled(self.moved_result_ids), "tool result(s) moved next to the call they answer"),
            (labelled(report.orphanToolMessageIds), "tool result(s) answering no earlier call left out"),
            (labelled(report.duplicateToolResultIds), "second answer(s) to a tool call left out"),
            (report.duplicateToolCallIds, "tool call(s) reusing an id left out"),
            (report.invalidToolCallIds, "tool call(s) with an empty id or an invalid name left out"),
            (labelled(report.invalidMessageIds), "invalid message(s) left out"),
        ]
        return [f"{len(ids)} {what} ({_some(ids)})" for ids, what in found if ids]


def _some(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", and {len(ids) - limit} more" if len(ids) > limit else "")


def repaired_chain(messages: Sequence[ConversationMessage | Mapping[str, Any]]) -> RepairedChain:
    """The log as one valid chain, nothing persisted: read in :func:`~.order.log_order`, each
    assistant followed by the results of its calls (real ones in log order, then repair results;
    a missing one becomes TOOL_INTERRUPTED), what cannot be placed left out. System messages and
    empty messages stay where they are; messages kept out of context are left out.
    """
    # Only the current branch (protocol/branches.py): an edit's or a regenerate's old one is not exported.
    ordered = [m if isinstance(m, ConversationMessage) else (coerce(m) or m) for m in current_branch(log_order(list(messages)))]
    chain = assemble(ordered)
    report = chain.report
    position = {id(m): index for index, m in enumerate(ordered)}
    placed: list[tuple[int, list[ConversationMessage]]] = []
    moved: list[str] = []
    for unit in chain.units:
        message = unit.message
        if unit.kind == "text":
            if message.role == "assistant" and message.tool_calls is not None:
                # Every call it had was invalid: the message goes without them.
                data = {k: v for k, v in message.to_log_dict().items() if k != "tool_calls"}
                message = ConversationMessage.model_validate(data)
            placed.append((unit.position, [message]))
            continue
        if len(unit.calls) != len(message.tool_calls or ()):
            message = message.model_copy(update={"tool_calls": list(unit.calls)})
        end = unit.position + 1
        while end < len(ordered) and _role(ordered[end]) == "tool":
            end += 1
        # Real results in the log's order, then repair results: the same chain before and after
        # recovery persists them (a repair result may be read before a real one written late).
        results = sorted(unit.results.values(), key=lambda r: (r.synthetic is True, position[id(r)]))
        moved.extend(r.id for r in results if not unit.position < position[id(r)] < end)
        missing = [interrupted_message(call, unit.message) for call in unit.missing_calls()]
        placed.append((unit.position, [message, *results, *missing]))
    blank: set[str] = set()
    for index, entry in enumerate(ordered):
        if not isinstance(entry, ConversationMessage) or not entry.includeInContext:
            continue
        if entry.role == "system":
            if entry.content is None:
                report.invalidMessageIds.append(entry.id)
            else:
                placed.append((index, [entry]))
        elif _blank(entry):
            placed.append((index, [entry]))
            blank.add(entry.id)
    if blank:
        report.invalidMessageIds[:] = [i for i in report.invalidMessageIds if i not in blank]
    placed.sort(key=lambda item: item[0])
    return RepairedChain([m for _, group in placed for m in group], report, moved)


def _blank(message: ConversationMessage) -> bool:
    """An empty user or assistant message: valid on the wire, left out of requests by the builder.

    It is part of the conversation, so the chain keeps it (an import gives back what it got).
    """
    if message.role == "user":
        return message.content == []
    return message.role == "assistant" and message.tool_calls is None and message.content in ("", [])


def _role(entry: object) -> Any:
    if isinstance(entry, ConversationMessage):
        return entry.role
    return entry.get("role") if isinstance(entry, Mapping) else None
