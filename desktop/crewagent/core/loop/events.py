"""What a turn reports while it runs: typed, immutable events (the UI turns them into signals).

A turn yields, in order: ``TurnStarted``; then per model call ``ContextBuilt``, ``StreamStarted``,
any number of ``TextDelta`` / ``ReasoningDelta``, ``MessagePersisted`` (the assistant message);
per tool call ``ToolCallStarted`` and, in call order, ``ToolCallFinished`` followed by
``MessagePersisted`` (its ``role=tool`` result); and finally exactly one ``TurnFinished``.
In Run mode a write to the run's state is followed by a ``RunProgress``, and a turn whose model
stops calling tools ends ``completed`` only when the workflow is complete, else ``waiting_user``.
Every message the turn writes to the log is announced by a ``MessagePersisted`` — errors and
interruptions included — so a consumer that applies those events sees exactly the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from crewagent.core.llm.events import ReasoningDelta, TextDelta
from crewagent.core.messages import ConversationMessage

# A streamed piece of text or reasoning reaches the UI as the adapter produced it.


FinishReason = Literal["completed", "stopped", "error", "waiting_user"]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    conversation_id: str
    mode: str
    type: Literal["turn_started"] = field(default="turn_started", init=False)


@dataclass(frozen=True, slots=True)
class ContextBuilt:
    """The context of the next model call: ``debug`` is the builder's metadata (usage, drops)."""

    debug: dict[str, Any]
    type: Literal["context_built"] = field(default="context_built", init=False)

    @property
    def usage(self) -> dict[str, Any]:
        value = self.debug.get("usage")
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class StreamStarted:
    """A model call began streaming; ``step`` counts model calls within the turn (1-based)."""

    step: int
    model: str
    type: Literal["stream_started"] = field(default="stream_started", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    call_id: str
    name: str
    arguments: str
    type: Literal["tool_call_started"] = field(default="tool_call_started", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call_id: str
    name: str
    ok: bool
    result: dict[str, Any]
    duration_ms: float
    type: Literal["tool_call_finished"] = field(default="tool_call_finished", init=False)

    @property
    def error_code(self) -> str | None:
        error = self.result.get("error")
        return str(error.get("code")) if isinstance(error, dict) and error.get("code") else None


@dataclass(frozen=True, slots=True)
class ToolCallOutput:
    """Live output of a running call (a command's stdout or stderr), between its start and finish.

    Display only: nothing of it is persisted (the result carries the output, bounded). Arrives
    coalesced, at most a few per second per stream, each at most ~16 KB.
    """

    call_id: str
    name: str
    stream: str
    text: str
    type: Literal["tool_call_output"] = field(default="tool_call_output", init=False)


@dataclass(frozen=True, slots=True)
class MessagePersisted:
    """A message is now durable in the log (as stored: a large tool output arrives offloaded)."""

    message: ConversationMessage
    type: Literal["message_persisted"] = field(default="message_persisted", init=False)


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn is over. ``error`` is the ``{code, message, ...}`` block of a failure, if any."""

    reason: FinishReason
    error: dict[str, Any] | None = None
    type: Literal["turn_finished"] = field(default="turn_finished", init=False)

    @property
    def ok(self) -> bool:
        return self.reason == "completed"


@dataclass(frozen=True, slots=True)
class RunProgress:
    """Run mode: the run's state file was written and re-read (after the tool's ``ToolCallFinished``)."""

    run_id: str
    current_node_id: str
    steps_completed: tuple[str, ...]
    complete: bool
    type: Literal["run_progress"] = field(default="run_progress", init=False)


LoopEvent = (
    TurnStarted
    | ContextBuilt
    | StreamStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallFinished
    | ToolCallOutput
    | MessagePersisted
    | RunProgress
    | TurnFinished
)
