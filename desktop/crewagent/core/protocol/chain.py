"""Turn a conversation log into protocol units: plain messages and complete tool-call groups.

The log is append-only, so it can hold what a valid request may not: a result appended after a
later user message (a repair after a crash), a result for an id nobody issued, a second answer,
an id issued twice. ``assemble`` reads the log once and attaches every result to the call that
issued it, whatever its position; what cannot be placed is left out and reported by message id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from pydantic import ValidationError

from crewagent.core import texts
from crewagent.core.messages import ConversationMessage, ToolCall
from crewagent.core.protocol.branches import split_branch
from crewagent.core.protocol.validator import DOTTED_FUNCTION_NAME

INTERRUPTED_CODE = "TOOL_INTERRUPTED"
SUMMARY_MARKER = "CONVERSATION_SUMMARY"


def interrupted_result(call: ToolCall) -> str:
    """The content of the result that stands in for a call that never returned."""
    return json.dumps(
        {
            "ok": False,
            "error": {
                "code": INTERRUPTED_CODE,
                "message": texts.TOOL_NEVER_RETURNED.format(name=call.function.name, call_id=call.id),
            },
        }
    )


def is_summary(message: ConversationMessage) -> bool:
    """A persisted rolling summary: a system message that records the ids it covers."""
    return message.role == "system" and message.summaryOf is not None


_NO_RESULTS: Mapping[str, ConversationMessage] = MappingProxyType({})


class Unit:
    """What trimming keeps or drops as a whole: one message, or an assistant and all its results.

    A plain slotted class rather than a dataclass: one is made per log message on every build.
    """

    __slots__ = ("kind", "message", "position", "calls", "results")

    def __init__(
        self,
        kind: Literal["text", "group"],
        message: ConversationMessage,
        position: int,
        calls: tuple[ToolCall, ...] = (),
    ) -> None:
        self.kind = kind
        self.message = message
        self.position = position
        self.calls = calls
        #: Call id -> its result, filled while the log is read (text units share one empty
        #: read-only mapping: a dict per log message is most of the allocation of a build).
        self.results: dict[str, ConversationMessage] = {} if calls else _NO_RESULTS  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Unit({self.kind!r}, {self.message.id!r}, calls={[c.id for c in self.calls]})"

    @property
    def ids(self) -> list[str]:
        """The ids of the log messages this unit sends."""
        if self.kind == "text":
            return [self.message.id]
        return [self.message.id, *(r.id for r in self.results.values())]

    @property
    def size(self) -> int:
        """How many messages this unit sends (one per call for a group, answered or not)."""
        return 1 + len(self.calls)

    def missing_calls(self) -> list[ToolCall]:
        return [call for call in self.calls if call.id not in self.results]


@dataclass(slots=True)
class ChainReport:
    """What the log held that cannot go to the model as it is, by message (or call) id."""

    skippedMessageIds: list[str] = field(default_factory=list)
    invalidMessageIds: list[str] = field(default_factory=list)
    orphanToolMessageIds: list[str] = field(default_factory=list)
    duplicateToolResultIds: list[str] = field(default_factory=list)
    duplicateToolCallIds: list[str] = field(default_factory=list)
    invalidToolCallIds: list[str] = field(default_factory=list)
    unansweredToolCallIds: list[str] = field(default_factory=list)
    droppedSystemMessageIds: list[str] = field(default_factory=list)
    #: Messages of an old branch: an edited question, a regenerated answer (protocol/branches.py).
    supersededMessageIds: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {name: list(getattr(self, name)) for name in self.__slots__}


@dataclass(slots=True)
class Chain:
    """The log as units in order, the latest summary (if any), and the report."""

    units: list[Unit]
    summary: ConversationMessage | None
    report: ChainReport
    total: int


def coerce(raw: ConversationMessage | Mapping[str, Any]) -> ConversationMessage | None:
    """A ConversationMessage, or ``None`` when a raw entry cannot be read as one."""
    if isinstance(raw, ConversationMessage):
        return raw
    if not isinstance(raw, Mapping):
        return None
    data = dict(raw)
    data.setdefault("id", "")
    data.setdefault("createdAt", "")
    try:
        return ConversationMessage.model_validate(data)
    except ValidationError:
        return None


def assemble(
    messages: Sequence[ConversationMessage | Mapping[str, Any]],
    *,
    pending_call_ids: Iterable[str] = (),
) -> Chain:
    """Group the log into units; results attach to the call that issued them.

    ``pending_call_ids`` are calls whose tools are still running: they are not reported as
    unanswered (the caller decides what to do with them). Only the current branch is read: what
    an edit or a regenerate superseded is reported, never grouped (protocol/branches.py).
    """
    return _assemble(messages, pending_call_ids, None)


def _branched(messages: Sequence[ConversationMessage | Mapping[str, Any]], pending_call_ids: Iterable[str]) -> Chain:
    """:func:`assemble` of a log with an edit or a regenerate in it: the old branches skipped.

    Positions stay those of ``messages`` (repair places units by them).
    """
    superseded = split_branch(messages)[1]
    chain = _assemble(messages, pending_call_ids, {id(old) for old in superseded})
    chain.report.supersededMessageIds.extend(str(old.get("id") if isinstance(old, Mapping) else old.id) for old in superseded)
    return chain


def _assemble(
    messages: Sequence[ConversationMessage | Mapping[str, Any]], pending_call_ids: Iterable[str], gone: set[int] | None
) -> Chain:
    """``gone``: the messages of old branches (None: not looked for yet; a branch point starts over)."""
    report = ChainReport()
    units: list[Unit] = []
    open_calls: dict[str, Unit] = {}
    issued: set[str] = set()
    answered: set[str] = set()
    summary: ConversationMessage | None = None
    names_ok: dict[str, bool] = {}  # few distinct tool names: match each once
    for position, raw in enumerate(messages):
        if gone and id(raw) in gone:
            continue
        message = raw if isinstance(raw, ConversationMessage) else coerce(raw)
        if message is None:
            raw_id = raw.get("id") if isinstance(raw, Mapping) else None
            report.invalidMessageIds.append(str(raw_id) if raw_id else f"#{position}")
            continue
        if gone is None and message.replaces is not None:
            return _branched(messages, pending_call_ids)  # rare: the plain read costs one check a message
        if not message.includeInContext:
            report.skippedMessageIds.append(message.id)
            continue
        role = message.role
        if role == "user":
            content = message.content
            if content is not None and (content or not isinstance(content, list)):
                units.append(Unit("text", message, position))
            else:
                report.invalidMessageIds.append(message.id)
        elif role == "assistant":
            calls: list[ToolCall] = []
            for call in message.tool_calls or ():
                name = call.function.name
                ok = names_ok.get(name)
                if ok is None:
                    ok = names_ok[name] = DOTTED_FUNCTION_NAME.match(name) is not None
                if not call.id or not ok:
                    report.invalidToolCallIds.append(call.id or f"{message.id}#empty")
                elif call.id in issued:
                    report.duplicateToolCallIds.append(call.id)
                else:
                    issued.add(call.id)
                    calls.append(call)
            if calls:
                unit = Unit("group", message, position, tuple(calls))
                for call in calls:
                    open_calls[call.id] = unit
                units.append(unit)
            elif message.content:  # neither None, "" nor an empty list of parts
                units.append(Unit("text", message, position))
            else:
                report.invalidMessageIds.append(message.id)
        elif role == "tool":
            call_id = message.tool_call_id
            owner = open_calls.pop(call_id, None) if call_id else None
            if owner is not None and call_id is not None:
                owner.results[call_id] = message
                answered.add(call_id)
            elif not call_id:
                report.invalidMessageIds.append(message.id)
            elif call_id in answered:
                report.duplicateToolResultIds.append(message.id)
            else:
                report.orphanToolMessageIds.append(message.id)
        elif is_summary(message):
            if summary is not None:
                report.droppedSystemMessageIds.append(summary.id)
            summary = message
        else:
            report.droppedSystemMessageIds.append(message.id)
    pending = set(pending_call_ids)
    report.unansweredToolCallIds.extend(call_id for call_id in open_calls if call_id not in pending)
    return Chain(units, summary, report, len(messages))
