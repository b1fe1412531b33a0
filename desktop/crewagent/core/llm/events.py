"""The request given to the adapter and the typed events it yields while a completion streams.

Events are small frozen dataclasses; ``LlmEvent`` is their union and ``type`` is the
discriminator, so a consumer can ``match`` on the class or switch on ``event.type``. A call yields
``StreamStarted`` once (when the first response arrives) and ``RetryScheduled`` for each retry
(always before the first delta), then ``ReasoningDelta`` / ``TextDelta`` / ``ToolCallDelta``
interleaved as the provider sends them, and finally exactly one ``Completed`` -- or it raises
:class:`~.errors.LlmError`.
Tool names in events are always the ORIGINAL names (``fs.read``), never the wire encoding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """One chat completion call. ``messages`` and ``tools`` are OpenAI-shaped, with original tool names."""

    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    #: Overrides the provider config's model.
    model: str | None = None
    #: ``"auto" | "none" | "required"`` or ``{"type": "function", "function": {"name": ...}}``.
    tool_choice: str | Mapping[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    #: Overrides the provider config's timeout (seconds), e.g. a short one for the summarizer.
    timeout: float | None = None
    #: Extra JSON merged into the request body (provider-specific options).
    extra_body: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class StreamStarted:
    """The provider accepted the request; ``streaming`` is False on the non-streaming fallback."""

    model: str
    streaming: bool
    type: Literal["stream_started"] = field(default="stream_started", init=False)


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A retryable failure before any delta; the next attempt starts after ``delay`` seconds."""

    attempt: int
    delay: float
    code: str
    message: str
    status: int | None
    type: Literal["retry_scheduled"] = field(default="retry_scheduled", init=False)


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's ``reasoning_content`` (or ``reasoning``)."""

    text: str
    type: Literal["reasoning_delta"] = field(default="reasoning_delta", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """Progress on tool call number ``index`` (0-based, in the order calls appeared).

    ``id`` and ``name`` are what is known so far (None until the provider sent them);
    ``arguments_delta`` is the new piece of the JSON argument text.
    """

    index: int
    id: str | None
    name: str | None
    arguments_delta: str
    type: Literal["tool_call_delta"] = field(default="tool_call_delta", init=False)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    #: Provider-specific details kept as sent (cached tokens, reasoning tokens ...).
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        out.update(self.details)
        return out


@dataclass(frozen=True, slots=True)
class Completed:
    """The whole assistant turn.

    ``tool_calls`` are OpenAI-shaped dicts ``{id, type: "function", function: {name, arguments}}``
    with original names, unique non-empty ids and ``arguments`` exactly as the model sent them
    (possibly invalid JSON: the tool loop reports that to the model), except that an empty
    argument string becomes ``"{}"``.
    """

    content: str | None
    tool_calls: list[dict[str, Any]]
    reasoning_content: str | None
    finish_reason: str | None
    usage: Usage | None
    model: str | None = None
    type: Literal["completed"] = field(default="completed", init=False)

    def assistant_message(self) -> dict[str, Any]:
        """The OpenAI assistant message for this turn (with ``reasoning_content`` when there is some)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": dict(c["function"])} for c in self.tool_calls
            ]
        if self.reasoning_content:
            message["reasoning_content"] = self.reasoning_content
        return message


LlmEvent = StreamStarted | RetryScheduled | TextDelta | ReasoningDelta | ToolCallDelta | Completed
