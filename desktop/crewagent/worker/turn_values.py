"""Immutable values of a conversation's turns, handed from the worker to the UI (thread-safe to share).

The UI never receives a ``ConversationMessage`` (a mutable pydantic model the store and the loop
keep working with): :class:`TimelineMessage` is a frozen copy with what the timeline shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from crewagent.core.attachments import image_urls
from crewagent.core.jsonparse import parse_json
from crewagent.core.llm.usage import UsageTotals, sum_usage
from crewagent.core.messages import ConversationMessage
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents.events import SubagentStatusChanged
from crewagent.core.subagents.links import status_event

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def frozen_json(value: Any) -> Any:
    """A read-only copy of a JSON-like value: dicts become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): frozen_json(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen_json(v) for v in value)
    return value


def previewed_json(value: Any, limit: int) -> Any:
    """:func:`frozen_json` of ``value`` with every string longer than ``limit`` cut to it and "…"."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): previewed_json(v, limit) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(previewed_json(v, limit) for v in value)
    return value


def thawed_json(value: Any) -> Any:
    """The plain ``dict``/``list`` form of :func:`frozen_json` (for ``json.dumps`` and replies)."""
    if isinstance(value, Mapping):
        return {k: thawed_json(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed_json(v) for v in value]
    return value


#: Characters of a tool call's arguments the UI receives. The rest stays with the worker: an
#: fs.write of a 20 MB file must not reach the GUI thread, which parses what it shows (issue 14).
ARGUMENTS_PREVIEW_CHARS = 16_000


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    """One tool call of an assistant message: ``arguments`` is the model's raw JSON text, or its
    first :data:`ARGUMENTS_PREVIEW_CHARS` characters and "…" when ``arguments_chars`` is larger."""

    id: str
    name: str
    arguments: str
    #: Characters of the arguments in full (-1: not counted, ``arguments`` is whole).
    arguments_chars: int = -1

    @classmethod
    def of(cls, call_id: str, name: str, arguments: str) -> ToolCallRef:
        """The call as the UI gets it: long arguments cut to a preview."""
        if len(arguments) <= ARGUMENTS_PREVIEW_CHARS:
            return cls(call_id, name, arguments, len(arguments))
        return cls(call_id, name, arguments[:ARGUMENTS_PREVIEW_CHARS] + "…", len(arguments))

    @property
    def cut(self) -> bool:
        """``arguments`` is a preview of longer ones."""
        return self.arguments_chars > len(self.arguments)


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """A subagent as its parent's Task part shows it: what it is, how it is doing, where it hangs.

    Built from a stored Task result's app-only fields (``subagentSessionId`` ...), from a
    sidechain's meta, or from a live status change; ``status`` is running, completed, failed or
    cancelled. ``parent_session_id`` is the conversation id (a child) or the parent's
    ``agent_<id>`` (a grandchild); with ``parent_call_id`` it names the Task call it answers.
    """

    session_id: str
    subagent_type: str
    status: str
    summary: str = ""
    description: str = ""
    conversation_id: str = ""
    parent_session_id: str = ""
    parent_call_id: str = ""
    depth: int = 1
    background: bool = False

    @property
    def running(self) -> bool:
        return self.status == "running"

    @classmethod
    def from_status(cls, event: SubagentStatusChanged) -> SubagentInfo:
        """A live status change of the manager."""
        return cls(
            session_id=event.session_id,
            subagent_type=event.subagent_type,
            status=event.status,
            summary=event.summary,
            description=event.description,
            conversation_id=event.conversation_id,
            parent_session_id=event.parent_session_id,
            parent_call_id=event.parent_call_id,
            depth=event.depth,
            background=event.background,
        )

    @classmethod
    def from_meta(cls, meta: SidechainMeta) -> SubagentInfo:
        """A sidechain's meta, as its status would announce it."""
        return cls.from_status(status_event(meta))

    @classmethod
    def from_links(cls, message: ConversationMessage) -> SubagentInfo | None:
        """The child a stored Task result or notice links to (its app-only fields); None: no link."""
        if not message.subagentSessionId:
            return None
        return cls(
            session_id=message.subagentSessionId,
            subagent_type=message.subagentType or "",
            status=message.subagentStatus or "",
            summary=message.subagentSummary or "",
            parent_call_id=message.tool_call_id or "",
        )


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens the provider reported (one model call, or a sum), and their cost when prices are known."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cost_usd: float | None = None

    @classmethod
    def of(cls, record: Mapping[str, Any] | None) -> TokenUsage | None:
        """The usage stored on an assistant message (core/llm/usage.py); None without one."""
        totals = sum_usage([record])
        return cls._from(totals) if totals.calls else None

    @classmethod
    def total(cls, items: Iterable[TokenUsage | None]) -> TokenUsage | None:
        known = [item for item in items if item is not None]
        if not known:
            return None
        costs = [item.cost_usd for item in known if item.cost_usd is not None]
        return cls(
            sum(i.prompt for i in known), sum(i.completion for i in known), sum(i.cached for i in known), sum(costs) if costs else None
        )

    @classmethod
    def _from(cls, totals: UsageTotals) -> TokenUsage:
        return cls(totals.prompt_tokens, totals.completion_tokens, totals.cached_tokens, totals.cost_usd)


@dataclass(frozen=True, slots=True)
class TimelineMessage:
    """One stored message, as the timeline shows it."""

    id: str
    role: str
    created_at: str
    text: str
    part_type: str = "content"
    reasoning: str = ""
    tool_calls: tuple[ToolCallRef, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    duration_ms: float | None = None
    interrupted: bool = False
    synthetic: bool = False
    #: The ``error`` block of an error part (``{code, message, ...}``), empty when there is none.
    error: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: Bytes of the complete output when a large tool result was offloaded (``text`` is a preview).
    full_output_bytes: int | None = None
    mode: str | None = None
    include_in_context: bool = True
    is_summary: bool = False
    #: The subagent a Task result or a background notice links to (its app-only fields).
    subagent: SubagentInfo | None = None
    #: How long the model thought before answering (None: unknown, or no reasoning).
    reasoning_seconds: float | None = None
    #: An edited (or regenerated) question: the id of the message it takes the place of; that row
    #: and the rows after it leave the timeline (core/protocol/branches.py).
    replaces: str | None = None
    #: The tokens of the model call that produced this assistant message (None: not reported).
    usage: TokenUsage | None = None
    #: A user message's attached images: their references (``@state/attachments/...``) or URLs.
    images: tuple[str, ...] = ()

    @classmethod
    def from_message(cls, message: ConversationMessage) -> TimelineMessage:
        calls = tuple(ToolCallRef.of(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ())
        return cls(
            id=message.id,
            role=message.role,
            created_at=message.createdAt,
            text=message.text,
            part_type=message.partType or "content",
            reasoning=message.reasoning_content or "",
            tool_calls=calls,
            tool_call_id=message.tool_call_id,
            tool_name=message.toolName,
            duration_ms=message.duration,
            interrupted=bool(message.interrupted),
            synthetic=bool(message.synthetic),
            error=frozen_json(message.error) if message.error is not None else _EMPTY,
            full_output_bytes=message.fullOutputBytes if message.is_offloaded else None,
            mode=message.mode,
            include_in_context=message.includeInContext,
            is_summary=bool(message.summaryOf),
            subagent=SubagentInfo.from_links(message),
            reasoning_seconds=message.reasoningSeconds,
            replaces=message.replaces,
            usage=TokenUsage.of(message.usage) if message.role == "assistant" else None,
            images=tuple(image_urls(message.content)) if message.role == "user" else (),
        )

    @property
    def is_error(self) -> bool:
        return self.part_type == "error"

    @property
    def is_subagent_notice(self) -> bool:
        """The automatic notice of a finished background subagent (not something the user said)."""
        return self.role == "user" and self.synthetic and self.subagent is not None

    @property
    def offloaded(self) -> bool:
        return self.full_output_bytes is not None

    def result_json(self) -> Any:
        """A tool message's content parsed as JSON (None when it is not JSON, e.g. a preview)."""
        try:
            return parse_json(self.text)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class LoadedConversation:
    """A conversation opened for the timeline: its messages after recovery, and what went wrong.

    ``running`` is True when a turn is running in it right now (its events follow);
    ``streaming_text``/``streaming_reasoning`` are what that turn has streamed so far.
    """

    project_id: str
    conversation_id: str
    messages: tuple[TimelineMessage, ...]
    problems: tuple[str, ...] = ()
    running: bool = False
    streaming: bool = False
    streaming_text: str = ""
    streaming_reasoning: str = ""
    #: The subagents this conversation (or sidechain) started, as their metas say now: a Task
    #: result written when a background child started still says ``running``, its meta does not.
    subagents: tuple[SubagentInfo, ...] = ()
    #: False for the first page of a long conversation: its newest messages, read from the end of
    #: the log before the conversation is recovered and loaded whole. The complete one follows.
    complete: bool = True


@dataclass(frozen=True, slots=True)
class LoadedSubagent:
    """A sidechain opened for its read-only tab: ``timeline`` is keyed by the subagent's session id.

    ``info`` is None (and ``error`` says why) when the sidechain cannot be read.
    """

    project_id: str
    conversation_id: str
    session_id: str
    info: SubagentInfo | None
    timeline: LoadedConversation
    error: str = ""


@dataclass(frozen=True, slots=True)
class SubagentProgress:
    """A running subagent's progress that is not a stored message, for its tab to follow.

    ``kind``: stream_started, stream_chunk / reasoning_chunk (``text``), tool_started
    (``call``), tool_finished (``finish``) or finished (its loop ended; its status follows).
    """

    kind: str
    text: str = ""
    call: ToolCallRef | None = None
    finish: ToolFinish | None = None


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """How full the next model call's context is; ``status`` is normal, warning, critical or compressing."""

    used_tokens: int
    total_budget: int
    percent: float
    status: str

    @classmethod
    def from_debug(cls, debug: Mapping[str, Any]) -> ContextUsage:
        usage = debug.get("usage") if isinstance(debug.get("usage"), Mapping) else {}
        assert isinstance(usage, Mapping)
        compression = debug.get("compression")
        compressing = isinstance(compression, Mapping) and bool(compression.get("triggered"))
        status = str(usage.get("status") or "normal")
        return cls(
            used_tokens=int(usage.get("usedTokens") or 0),
            total_budget=int(usage.get("totalBudget") or 0),
            percent=float(usage.get("usagePercent") or 0.0),
            status="compressing" if compressing else status,
        )


@dataclass(frozen=True, slots=True)
class ToolFinish:
    """A tool call ended (its result message follows with ``message_persisted``)."""

    call_id: str
    name: str
    ok: bool
    duration_ms: float
    error_code: str | None
    result: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutputChunk:
    """Live output of a running call (a command's stdout or stderr); display only, never stored."""

    call_id: str
    stream: str
    text: str


@dataclass(frozen=True, slots=True)
class ApprovalPrompt:
    """A write tool waits for the user's permission; answer with ``TurnWorker.answer_approval``."""

    request_id: str
    conversation_id: str
    tool: str
    summary: str
    arguments: Mapping[str, Any]
    call_id: str | None = None
    #: What "allow for this conversation" covers when narrower than the tool (a program: "git").
    scope_label: str | None = None


@dataclass(frozen=True, slots=True)
class AskUserPrompt:
    """``ui.ask_user`` waits for an answer; reply with ``TurnWorker.answer_ask_user``.

    ``widget`` is the validated widget (``type`` form, selection or confirmation, with ``callId``).
    """

    request_id: str
    conversation_id: str
    call_id: str
    widget: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """The active provider as the status bar names it."""

    provider: str
    model: str
    label: str
    problem: str = ""
    #: The model takes images (core/providers.py ``accepts_images``); the composer refuses them otherwise.
    vision: bool = True


@dataclass(frozen=True, slots=True)
class FullOutput:
    """The complete content of a tool result, decoded for reading (``error`` set when it could not be read).

    ``text`` is :func:`crewagent.core.tools.results.readable` of the stored output.
    """

    conversation_id: str
    message_id: str
    text: str
    error: str = ""


@dataclass(frozen=True, slots=True)
class AgentMenuEntry:
    """One item of an agent's menu; ``number`` is what the user types (1-based).

    ``kind`` is ``menu`` (shows the menu), ``prompt`` (sends an instruction), ``workflow`` (starts
    a run) or ``exec`` (a file of the agent's package).
    """

    number: int
    trigger: str
    description: str
    kind: str


@dataclass(frozen=True, slots=True)
class AgentMenu:
    """Agent-mode input that did not start a turn: show the agent's menu, or ask which item.

    ``reason``: ``menu`` (asked for, or a number out of range: ``query``), ``ambiguous``
    (``query`` matches every item in ``entries``), or ``needs_package`` (the picked item, alone in
    ``entries``, runs a package file that is not a workflow, which the app cannot do yet).
    """

    conversation_id: str
    agent_id: str
    agent_name: str
    reason: str
    entries: tuple[AgentMenuEntry, ...]
    query: str = ""


class TurnRequest(StrEnum):
    """The TurnWorker request a :class:`TurnError` answers (the slot's name, continue aside)."""

    OPEN_CONVERSATION = "open_conversation"
    SEND = "send"
    CONTINUE = "continue"
    RETRY = "retry"
    EDIT = "edit_message"
    REGENERATE = "regenerate"
    SET_MODE = "set_mode"
    SET_AGENT = "set_agent"
    LOAD_FULL_OUTPUT = "load_full_output"
    LOAD_TOOL_IMAGES = "load_tool_images"
    READ_MCP_LOG = "read_mcp_log"
    DESCRIBE_PROVIDER = "describe_provider"
    OPEN_SUBAGENT = "open_subagent"
    CANCEL_SUBAGENT = "cancel_subagent"
    LOAD_RUNS = "load_runs"
    START_RUN = "start_run"
    RESUME_RUN = "resume_run"
    #: Not a request: the title generated after a first exchange.
    TITLE = "title"
    #: Not a request: the summary refresh after a background subagent's notice.
    SUBAGENT_NOTICE = "subagent_notice"

    @property
    def starts_turn(self) -> bool:
        """True for the requests the composer waits on (it is busy until the turn starts)."""
        return self in (
            TurnRequest.SEND, TurnRequest.CONTINUE, TurnRequest.RETRY, TurnRequest.EDIT, TurnRequest.REGENERATE,
            TurnRequest.START_RUN, TurnRequest.RESUME_RUN,
        )


@dataclass(frozen=True, slots=True)
class TurnError:
    """A TurnWorker request failed; ``message`` is a sentence for the user.

    ``conversation_id`` is the conversation the request was about ("" for one about none, such
    as ``describe_provider``), so that a failure in one conversation never touches another's state.
    """

    request: TurnRequest
    conversation_id: str
    message: str
