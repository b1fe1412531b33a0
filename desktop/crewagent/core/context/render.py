"""Log units rendered as OpenAI payload messages, with their size (characters and tokens)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crewagent.core.context.tokens import TokenCounter, content_text, message_size
from crewagent.core.messages import ConversationMessage, ToolCall
from crewagent.core.protocol.chain import Unit, interrupted_result


@dataclass(slots=True)
class Piece:
    """Payload messages standing for one or more log units, and what they cost."""

    sources: list[Unit]
    payload: list[dict[str, Any]]
    chars: int
    tokens: int
    #: The compression stage that changed it (``None`` when sent as stored).
    compressed: str | None = None

    @property
    def ids(self) -> list[str]:
        return [i for unit in self.sources for i in unit.ids]


def make_piece(
    sources: list[Unit], payload: list[dict[str, Any]], counter: TokenCounter, compressed: str | None = None
) -> Piece:
    chars = tokens = 0
    for message in payload:
        c, t = message_size(message, counter)
        chars += c
        tokens += t
    return Piece(sources, payload, chars, tokens, compressed)


def _call_dict(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}


def tool_result_content(message: ConversationMessage) -> str | list[dict[str, Any]]:
    """What the model gets for a stored result: as stored, plus the alias path when offloaded."""
    content = message.content
    if content is None:
        content = ""
    path = message.fullOutputPath
    if path and path not in content_text(content):
        # The store writes the preview with the path; a log from elsewhere may not have it.
        if isinstance(content, str):
            return f"{content}\n\n[Full output: {path}]"
        return [*content, {"type": "text", "text": f"\n\n[Full output: {path}]"}]
    return content


def render_text(message: ConversationMessage, content: Any = None) -> dict[str, Any]:
    return {"role": message.role, "content": message.content if content is None else content}


def render_group(unit: Unit) -> list[dict[str, Any]]:
    """The assistant with its valid calls, then one result per call in call order.

    A call without a result gets the same TOOL_INTERRUPTED result that repair persists, so the
    payload stays valid even for a log that was not repaired.
    """
    assistant = unit.message
    out: list[dict[str, Any]] = [
        {"role": "assistant", "content": assistant.content, "tool_calls": [_call_dict(c) for c in unit.calls]}
    ]
    for call in unit.calls:
        result = unit.results.get(call.id)
        content = tool_result_content(result) if result is not None else interrupted_result(call)
        out.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return out


def render_unit(unit: Unit) -> list[dict[str, Any]]:
    if unit.kind == "group":
        return render_group(unit)
    return [render_text(unit.message)]


def truncate(text: str, keep: int, why: str = "to fit the context budget") -> str:
    """The first ``keep`` characters of ``text`` and a marker saying how much was cut."""
    if len(text) <= keep:
        return text
    keep = max(0, keep)
    return f"{text[:keep]}\n\n[... truncated {why}: {len(text) - keep} of {len(text)} characters cut]"


def total_size(pieces: Sequence[Piece]) -> tuple[int, int]:
    return sum(p.chars for p in pieces), sum(p.tokens for p in pieces)
