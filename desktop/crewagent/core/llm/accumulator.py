"""Turns the deltas of a streamed chat completion into events and, at the end, one Completed.

Tool calls are accumulated per call, in the order they first appear:

- the provider's ``index`` says which call a delta continues; ``id`` and ``name`` usually arrive
  only in the first delta of an index, and ``arguments`` arrive in pieces to be concatenated;
- a provider that repeats ``id``/``name`` in every delta is fine: the first non-empty value wins;
- a provider that reuses one index for several calls (seen with some OpenAI-compatible servers)
  is recognised by a new, different ``id`` on that index and gets a new call;
- a delta without ``index`` continues the last call unless it brings a new ``id``, or a name while
  the last call already has its name and complete JSON arguments (Ollama sends each call whole,
  in one chunk, with neither index nor id; several may share one chunk);
- a call without an id gets ``call_<random hex>``; an id the model already used in this message
  (duplicate tool_call ids) is renamed ``<id>_<n>`` so that every tool result can answer exactly
  one call. The renamed id is what the events, the log and later requests carry.

Names are decoded from the wire form (``fs_read``) back to the original (``fs.read``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from crewagent.core.llm.events import (
    Completed,
    LlmEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)


class BadChunk(Exception):
    """A chunk that is not shaped like a chat completion chunk."""


class _Call:
    __slots__ = ("raw_id", "id", "name", "arguments")

    def __init__(self, raw_id: str | None, call_id: str) -> None:
        self.raw_id = raw_id
        self.id = call_id
        self.name: str | None = None
        self.arguments: list[str] = []


def _whole(call: _Call) -> bool:
    """The call has its name and arguments that already parse: a new name starts another call."""
    if call.name is None or not call.arguments:
        return False
    try:
        json.loads("".join(call.arguments))
    except ValueError:
        return False
    return True


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


class StreamAccumulator:
    """Accumulates one assistant turn; feed it chunks (or parts), then call :meth:`completed`."""

    def __init__(
        self, decode_name: Callable[[str], str] = lambda name: name, *, decode_id: Callable[[str], str] | None = None
    ) -> None:
        self._decode = decode_name
        #: Wire id -> the log's id, for a provider whose ids are mapped (callids.py).
        self._decode_id = decode_id
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_Call] = []
        self._by_index: dict[int, int] = {}
        self._ids: set[str] = set()
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None

    # what was streamed so far (for an error's partial output)

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    # chunk level

    def add_chunk(self, chunk: Any) -> list[LlmEvent]:
        """Events for one ``chat.completion.chunk``, as the decoded JSON object (a dict)."""
        if not isinstance(chunk, dict):
            raise BadChunk(f"a stream event is {type(chunk).__name__}, not an object")
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self.model = model
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.set_usage(usage)
        choices = chunk.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, list):
            raise BadChunk(f"'choices' is {type(choices).__name__}, not a list")
        events: list[LlmEvent] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise BadChunk(f"a choice is {type(choice).__name__}, not an object")
            if choice.get("index", 0) not in (0, None):
                continue  # n > 1 is never requested; ignore stray alternatives
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self.add_message_parts(delta, events)
            elif delta is not None:
                raise BadChunk(f"a delta is {type(delta).__name__}, not an object")
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        return events

    def add_message_parts(self, delta: dict[str, Any], events: list[LlmEvent], *, whole: bool = False) -> None:
        """A streamed delta -- or, with ``whole``, a complete non-streamed message (same fields)."""
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.append(self.add_reasoning(reasoning))
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                events.append(self.add_text(content))
        elif content is not None:
            raise BadChunk(f"content is {type(content).__name__}, not a string")
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            events.append(self.add_text(refusal))
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            if not isinstance(tool_calls, list):
                raise BadChunk(f"tool_calls is {type(tool_calls).__name__}, not a list")
            for position, part in enumerate(tool_calls):
                if not isinstance(part, dict):
                    raise BadChunk(f"a tool call is {type(part).__name__}, not an object")
                function = part.get("function")
                if not isinstance(function, dict):
                    function = {}
                index = position if whole else part.get("index")
                event = self.add_tool_call_part(index, part.get("id"), function.get("name"), function.get("arguments"))
                if event is not None:
                    events.append(event)

    # part level (also used to replay a non-streaming response)

    def add_text(self, text: str) -> TextDelta:
        self._text.append(text)
        return TextDelta(text)

    def add_reasoning(self, text: str) -> ReasoningDelta:
        self._reasoning.append(text)
        return ReasoningDelta(text)

    def add_tool_call_part(
        self, index: Any, call_id: Any, name: Any, arguments: Any
    ) -> ToolCallDelta | None:
        call_id = call_id if isinstance(call_id, str) and call_id else None
        if call_id is not None and self._decode_id is not None:
            call_id = self._decode_id(call_id)
        name = name if isinstance(name, str) and name else None
        if arguments is not None and not isinstance(arguments, str):
            raise BadChunk(f"tool call arguments are {type(arguments).__name__}, not a string")
        index = index if isinstance(index, int) else None

        position: int | None = None
        if index is not None:
            position = self._by_index.get(index)
            if position is not None:
                existing = self._calls[position]
                if call_id and existing.raw_id and call_id != existing.raw_id:
                    position = None  # the same index reused for a new call
        elif self._calls:
            last = self._calls[-1]
            if (not call_id or call_id == last.raw_id) and not (name and not call_id and _whole(last)):
                position = len(self._calls) - 1

        created = position is None
        if position is None:
            position = len(self._calls)
            self._calls.append(_Call(call_id, self._unique_id(call_id)))
            if index is not None:
                self._by_index[index] = position
        call = self._calls[position]
        named = False
        if name and call.name is None:
            call.name = self._decode(name)
            named = True
        if arguments:
            call.arguments.append(arguments)
        if not (created or named or arguments):
            return None
        return ToolCallDelta(position, call.id, call.name, arguments or "")

    def _unique_id(self, call_id: str | None) -> str:
        if call_id is None:
            new = _new_call_id()
        else:
            new, n = call_id, 1
            while new in self._ids:
                n += 1
                new = f"{call_id}_{n}"
        self._ids.add(new)
        return new

    def set_usage(self, usage: dict[str, Any]) -> None:
        def as_int(value: Any) -> int | None:
            return value if isinstance(value, int) else None

        counts = ("prompt_tokens", "completion_tokens", "total_tokens")
        self.usage = Usage(
            prompt_tokens=as_int(usage.get("prompt_tokens")),
            completion_tokens=as_int(usage.get("completion_tokens")),
            total_tokens=as_int(usage.get("total_tokens")),
            details={k: v for k, v in usage.items() if k not in counts and v is not None},
        )

    # the end

    @property
    def has_output(self) -> bool:
        return bool(self._text or self._reasoning or self._calls)

    def completed(self) -> Completed:
        tool_calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name or "", "arguments": "".join(call.arguments) or "{}"},
            }
            for call in self._calls
        ]
        text = "".join(self._text)
        return Completed(
            content=text if text or not tool_calls else None,
            tool_calls=tool_calls,
            reasoning_content="".join(self._reasoning) or None,
            finish_reason=self.finish_reason,
            usage=self.usage,
            model=self.model,
        )
