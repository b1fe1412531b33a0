"""The conversation log's data model: ConversationMessage, ConversationMeta, OpenAI conversion.

A ConversationMessage is a superset of an OpenAI chat message (ARCHITECTURE.md, contract).
The app's own fields are declared and typed; fields this build does not know are kept
(``extra="allow"``) so that a log written by a newer build, or by another tool, survives a
load/save round trip through an older one. Serialisation uses
``exclude_unset``: what was never set is not written, what was set to ``null`` stays ``null``
(an assistant message with tool calls and ``"content": null`` round-trips exactly).
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, model_validator

from crewagent.core import bigjson

Role = Literal["system", "user", "assistant", "tool"]
PartType = Literal["content", "thinking", "tool_start", "tool_result", "error"]
Mode = Literal["chat", "agent", "run"]

MODES: tuple[Mode, ...] = ("chat", "agent", "run")

#: Fields that describe a message to the app and never go to the model.
APP_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "createdAt",
        "partType",
        "toolName",
        "duration",
        "isCollapsed",
        "widget",
        "mode",
        "runId",
        "workflowId",
        "agentId",
        "includeInContext",
        "fullOutputPath",
        "fullOutputBytes",
        "fullOutputSha256",
        "synthetic",
        "answersMessageId",
        "interrupted",
        "error",
        "usage",
        "reasoningSeconds",
        "summaryOf",
        "subagent",
        # Subagents (issue 6): the parent's link to a sidechain, and every sidechain line's links.
        "subagentSessionId",
        "subagentType",
        "subagentStatus",
        "subagentSummary",
        "sessionId",
        "parentSessionId",
        "isSidechain",
        "parentToolCallId",
        # Message actions (issue 18 item 12): an edited or regenerated turn's branch point.
        "replaces",
    }
)


def utc_now_iso() -> str:
    """The current time as an ISO-8601 UTC string with milliseconds, e.g. ``2026-01-01T00:00:00.000Z``."""
    ns = time.time_ns()
    start, end, text = _milli_text  # one tuple: a thread never sees a millisecond with another's text
    if start <= ns < end:
        return text  # a burst stamps several appends in one millisecond: no division, no lookup
    return iso_from_ns(ns)


#: The last whole second formatted, and its text up to the seconds: every append stamps the time,
#: and building a datetime to format it costs 3-4 µs against well under 1 µs for reusing it.
_second_text: tuple[int, str] = (-1, "")


def iso_from_ns(ns: int) -> str:
    """:func:`utc_now_iso`'s text for a ``time.time_ns()`` value: the same text as
    ``datetime.now(timezone.utc).isoformat(timespec="milliseconds")`` with ``Z``, which reads the
    same clock and floors it to microseconds (so to milliseconds too)."""
    global _second_text, _milli_text
    milli = ns // 1_000_000
    second, millis = divmod(milli, 1000)
    cached_second, text = _second_text  # one tuple: a thread never sees a second with another's text
    if second != cached_second:
        text = datetime.fromtimestamp(second, timezone.utc).isoformat()[:19]
        _second_text = (second, text)
    text += _MILLIS_TEXT[millis]
    start = milli * 1_000_000
    _milli_text = (start, start + 1_000_000, text)
    return text


#: The last millisecond formatted: the ``time_ns()`` values it spans, [start, end), and its text.
_milli_text: tuple[int, int, str] = (0, 0, "")


#: ".000Z" to ".999Z": a lookup instead of formatting the milliseconds on every append.
_MILLIS_TEXT: tuple[str, ...] = tuple(f".{millis:03d}Z" for millis in range(1000))


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def new_conversation_id() -> str:
    return f"conv_{uuid.uuid4().hex}"


class FunctionCall(BaseModel):
    """The ``function`` member of a tool call; ``arguments`` is the model's raw JSON text."""

    model_config = ConfigDict(extra="allow")

    name: str
    arguments: str


class ToolCall(BaseModel):
    """One entry of an assistant message's ``tool_calls``."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall

    @model_validator(mode="after")
    def _always_write_type(self) -> ToolCall:
        # OpenAI requires "type" on every tool call; write it even when the input left it out.
        self.__pydantic_fields_set__.add("type")
        return self


class SharedFieldsSet(set[str]):
    """The set of field names that many loaded messages share (pydantic's ``__pydantic_fields_set__``).

    Each message parsed from the log gets a set of its own, ~0.7 KB for the usual seven names: 70 MB
    for a log of 10^5 messages, a fifth of its parsed size (issue 14, item 3). A loaded message
    takes the one shared set for its names instead (:func:`share_fields_set`). A shared set is never
    changed in place: a message about to set a field takes a plain copy first
    (``ConversationMessage.__setattr__``), a copy (``model_copy``) is a plain set, and any other
    change raises.
    """

    __slots__ = ()

    def _shared(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a shared fields set is not changed in place; copy it first")

    add = update = discard = remove = pop = clear = _shared
    intersection_update = difference_update = symmetric_difference_update = _shared
    __ior__ = __iand__ = __isub__ = __ixor__ = _shared

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (set, (list(self),))


#: One shared set per distinct set of names (a log holds a handful); bounded against odd logs
#: whose every line has different extra fields (those keep sets of their own).
_shared_sets: dict[frozenset[str], SharedFieldsSet] = {}
_MAX_SHARED_SETS = 512


class ConversationMessage(BaseModel):
    """One line of ``messages.jsonl``."""

    model_config = ConfigDict(extra="allow")

    id: str
    role: Role
    createdAt: str
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    partType: PartType | None = None
    toolName: str | None = None
    duration: float | None = None
    isCollapsed: bool | None = None
    widget: dict[str, Any] | None = None
    mode: Mode | None = None
    runId: str | None = None
    workflowId: str | None = None
    agentId: str | None = None
    includeInContext: bool = True
    fullOutputPath: str | None = None
    fullOutputBytes: int | None = None
    fullOutputSha256: str | None = None
    reasoning_content: str | None = None
    # The app-only fields below (APP_FIELDS) are declared so that they are typed; like every
    # field here they are written only when set (``exclude_unset``). Their order is the order
    # they were written in when they were extra fields, so a log line keeps its bytes.
    #: A context summary: the ids of the messages it replaces.
    summaryOf: list[str] | None = None
    #: Written by the app, not said by the user or the model (a repair result, a notice, a summary).
    synthetic: bool | None = None
    #: A repair result: the assistant message whose call it answers (protocol/order.py).
    answersMessageId: str | None = None
    #: The process stopped (or the user did) while this message was being produced.
    interrupted: bool | None = None
    #: An error part's structured error ({code, message, ...}).
    error: dict[str, Any] | None = None
    #: The provider's token usage of the call that produced this assistant message.
    usage: dict[str, Any] | None = None
    #: How long the model thought before it answered (its first reasoning to its first text), in seconds.
    reasoningSeconds: float | None = None
    #: Subagents (issue 6): a parent's Task result or notice, linked to the child's sidechain.
    subagentSessionId: str | None = None
    subagentType: str | None = None
    subagentStatus: str | None = None
    subagentSummary: str | None = None
    #: Subagents: on every line of a sidechain, the sidechain and the Task call it answers.
    sessionId: str | None = None
    parentSessionId: str | None = None
    isSidechain: bool | None = None
    parentToolCallId: str | None = None
    #: Message actions (issue 18 item 12): on a user message that starts a new branch (an Edit, or
    #: a Regenerate's copy of the question), the id of the message it takes the place of; that
    #: message and every one after it, up to this one, are superseded (protocol/branches.py).
    replaces: str | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        if type(self.__pydantic_fields_set__) is SharedFieldsSet:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))  # its own, to change
        super().__setattr__(name, value)

    @classmethod
    def new(cls, role: Role, content: str | list[dict[str, Any]] | None = None, **fields: Any) -> ConversationMessage:
        """A fresh message with a new id and the current time."""
        fields.setdefault("id", new_message_id())
        fields.setdefault("createdAt", utc_now_iso())
        if content is not None or role != "assistant" or "tool_calls" in fields:
            fields["content"] = content
        return cls(role=role, **fields)

    def to_log_dict(self) -> dict[str, Any]:
        """The JSON object written to the log (only what was set)."""
        return self.model_dump(mode="json", exclude_unset=True)

    def to_log_line(self) -> str:
        """One log line, without the newline (a message of megabytes is written in slices: bigjson.py)."""
        if self._is_large():
            return bigjson.dumps(self.to_log_dict())
        return self.model_dump_json(exclude_unset=True)

    def to_log_bytes(self, end: bytes = b"") -> bytes:
        """:meth:`to_log_line` as UTF-8, followed by ``end`` (``b""`` or ``b"\\n"``).

        Every append encodes its message here. The usual message (plain JSON values, set fields
        only) is written by orjson from its fields, in the order pydantic writes them: the same
        bytes as pydantic's serializer in about 40 % of its CPU (issue 14; the bytes are compared
        for any message in tests/core/test_log_encoding.py). Anything orjson would write
        differently or not at all (a value that is not plain JSON, an integer past 64 bits, a
        model where a dict was expected) takes pydantic's serializer, as before.
        """
        if self._is_large():
            return bigjson.dumps_utf8(self.to_log_dict(), end)
        try:
            line = end == b"\n"
            encoded = orjson.dumps(_log_fields(self), default=_not_plain_json, option=_ORJSON_LINE if line else _ORJSON_PLAIN)
            return encoded if line else encoded + end
        except (TypeError, AttributeError, orjson.JSONEncodeError):
            # The serializer's own bytes: model_dump_json would decode them to a str, to be encoded again.
            return self.__pydantic_serializer__.to_json(self, exclude_unset=True) + end

    def _is_large(self) -> bool:
        """A text of the message is megabytes long (the model's arguments of an fs.write of a big file ...)."""
        large = bigjson.LARGE_CHARS
        values = self.__dict__  # one attribute read: each one of a model passes its __getattr__ hook
        content = values["content"]
        if (isinstance(content, str) and len(content) > large) or len(values["reasoning_content"] or "") > large:
            return True
        for call in values["tool_calls"] or ():  # a loop, not any() over a generator: every append asks
            if len(call.function.arguments) > large:
                return True
        return False

    @property
    def is_offloaded(self) -> bool:
        return self.fullOutputPath is not None

    @property
    def text(self) -> str:
        """The content as plain text (content parts joined), '' when there is none."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(part.get("text", "")) for part in self.content if isinstance(part, dict))


#: orjson writes these types in its own way (datetimes, dataclasses, subclasses of str, int, dict,
#: list): they go to ``default`` instead, which sends the message to pydantic's serializer.
_ORJSON_PLAIN = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
_ORJSON_LINE = _ORJSON_PLAIN | orjson.OPT_APPEND_NEWLINE
#: Where each declared field comes in pydantic's output (the declaration order); extra fields follow.
_FIELD_ORDER: dict[str, int] = {name: number for number, name in enumerate(ConversationMessage.model_fields)}
_DECLARED: frozenset[str] = frozenset(_FIELD_ORDER)


def _not_plain_json(value: Any) -> Any:
    raise TypeError(f"not plain JSON: {type(value).__name__}")


def _call_fields(call: ToolCall) -> dict[str, Any]:
    function = call.function
    written: dict[str, Any] = {"name": function.name, "arguments": function.arguments}
    if function.__pydantic_extra__:
        written.update(function.__pydantic_extra__)
    fields: dict[str, Any] = {"id": call.id, "type": call.type, "function": written}
    if call.__pydantic_extra__:
        fields.update(call.__pydantic_extra__)
    return fields


def _log_fields(message: ConversationMessage) -> dict[str, Any]:
    """What ``model_dump(exclude_unset=True)`` gives for the usual message, built from its fields:
    the set declared fields in declaration order, then the extra ones in the order they came."""
    values = message.__dict__
    names = frozenset(message.__pydantic_fields_set__)  # a copy of a set's table: no hashing again
    order = _LOG_ORDER.get(names)
    if order is None:
        order = tuple(sorted(names & _DECLARED, key=_FIELD_ORDER.__getitem__))
        if len(_LOG_ORDER) < _MAX_LOG_ORDERS:
            _LOG_ORDER[names] = order
    fields = {name: values[name] for name in order}
    calls = fields.get("tool_calls")
    if calls:
        fields["tool_calls"] = [_call_fields(call) for call in calls]
    extra = message.__pydantic_extra__
    if extra:
        fields.update(extra)
    return fields


#: The set declared fields in declaration order, by a message's set of field names: a few shapes
#: recur (a user message, a tool call, its result ...), and every append encodes one, so its
#: order is looked up rather than intersected and sorted each time (a third of the encoding).
_LOG_ORDER: dict[frozenset[str], tuple[str, ...]] = {}
_MAX_LOG_ORDERS = 512


def share_fields_set(message: ConversationMessage) -> ConversationMessage:
    """``message`` with the shared set of its field names (see :class:`SharedFieldsSet`); for messages
    loaded in bulk. Nothing a caller can see changes: equality, dumps and copies are as before."""
    names = message.__pydantic_fields_set__
    key = frozenset(names)
    shared = _shared_sets.get(key)
    if shared is None:
        if len(_shared_sets) >= _MAX_SHARED_SETS:
            return message
        shared = _shared_sets.setdefault(key, SharedFieldsSet(names))
    object.__setattr__(message, "__pydantic_fields_set__", shared)
    return message


class ConversationMeta(BaseModel):
    """One entry of a project's ``conversations/index.json``."""

    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    entryType: Mode = "chat"
    activeType: Mode = "chat"
    createdAt: str
    lastActiveAt: str
    messageCount: int = 0
    agentId: str | None = None
    workflowId: str | None = None
    packageId: str | None = None
    #: Run mode: the runs started in this conversation, oldest first ({runId, packageId, workflowId, createdAt}).
    workflowRuns: list[dict[str, Any]] | None = None
    #: The run a Run-mode turn continues (the latest one started here).
    activeRunId: str | None = None
    #: The title is the placeholder, replaced by the first user message's text.
    autoTitle: bool | None = None
    #: The log size ``messageCount`` was counted at (store/index.py).
    logBytes: int | None = None
    #: Where the title came from: ``auto`` (the first message), ``generated`` (by the provider from
    #: the first exchange) or ``user`` (a rename, which nothing replaces); None in older indexes.
    titleSource: Literal["user", "auto", "generated"] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The entry as a listing shows it: the store's bookkeeping fields only when they are set."""
        unset = {name for name in ("autoTitle", "logBytes", "titleSource") if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=unset)


def stamp_fields(
    mode: Mode, *, run_id: str | None = None, agent_id: str | None = None, workflow_id: str | None = None
) -> dict[str, Any]:
    """The fields every message of a turn carries: its mode, and its run, agent and workflow when set."""
    fields: dict[str, Any] = {"mode": mode}
    for key, value in (("runId", run_id), ("agentId", agent_id), ("workflowId", workflow_id)):
        if value:
            fields[key] = value
    return fields


def stamped(message: ConversationMessage, fields: dict[str, Any]) -> ConversationMessage:
    """``message`` with ``fields`` filled in where it has none: a copy, ``message`` is not changed."""
    missing = {key: value for key, value in fields.items() if getattr(message, key, None) is None}
    return message.model_copy(update=missing) if missing else message


def from_openai(
    message: dict[str, Any],
    *,
    message_id: str | None = None,
    created_at: str | None = None,
    **app_fields: Any,
) -> ConversationMessage:
    """Wrap an OpenAI chat message as a ConversationMessage, keeping every key it has."""
    data = dict(message)
    data["id"] = message_id or new_message_id()
    data["createdAt"] = created_at or utc_now_iso()
    data.update(app_fields)
    return ConversationMessage.model_validate(data)


def to_openai(message: ConversationMessage, *, content: str | None = None) -> dict[str, Any]:
    """The OpenAI chat message for a log entry: app metadata removed, everything else kept.

    ``content`` replaces the stored content (used to put an offloaded output back in full).
    """
    data = message.to_log_dict()
    out = {key: value for key, value in data.items() if key not in APP_FIELDS}
    if content is not None:
        out["content"] = content
    return out

