"""Compaction inside the current turn: when the turn alone exceeds the budget, shrink it, oldest first.

A turn that read three 45 KB files, or wrote a 2 MB file, must still reach the model. Its
items are shrunk one at a time, oldest first, until the request fits:

- an earlier tool result becomes a preview plus the alias of its full output (the offloaded
  file when the store already wrote one, else a file written on demand, see :class:`Spill`);
- large tool-call arguments become a preview (other keys intact, still a JSON object) plus the
  alias of the arguments saved in full.

A first pass keeps a 500-character preview; when every item has one and the turn is still too
large, a second pass keeps only the note with the alias. Only contents and arguments change:
every call keeps its id and its one result, so the chain stays valid. This is a view for the
request; the log on disk keeps everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crewagent.core.context.budget import ContextBudget
from crewagent.core.context.render import Piece
from crewagent.core.context.tokens import TokenCounter, content_text, message_chars, message_tokens
from crewagent.core.protocol.chain import Unit
from crewagent.core.store.offload import offload_alias

#: Items at most this long are left alone in the first pass (as in window compression).
LARGE_CHARS = 2_000
#: What the first pass keeps of a large item.
PREVIEW_CHARS = 500
#: Items at most this long are left alone in the second pass too: their note would be as long.
MINIMAL_CHARS = 400


@dataclass(frozen=True, slots=True)
class Spill:
    """A full text the request refers to by ``alias``; it must be on disk before the request is sent."""

    alias: str
    text: str


@dataclass(slots=True)
class Compaction:
    """What compaction changed: the new totals, the files to write and the log ids it shortened."""

    chars: int
    tokens: int
    spills: list[Spill]
    message_ids: list[str]


def _result_note(size: int, unit: str, alias: str | None) -> str:
    if alias is None:
        return f"[Shortened for this request: {size} {unit} in all; the full output is kept in the conversation log.]"
    return f"[Shortened for this request: {size} {unit} in all. The full output is at {alias}; read it with fs.read if you need more.]"


def _arguments_note(size: int, alias: str | None) -> str:
    if alias is None:
        return f"[... {size} characters of arguments omitted from this request]"
    return f"[... {size} characters of arguments omitted from this request; the arguments in full are at {alias}]"


def shorten_result(text: str, keep: int, alias: str | None, *, size: int | None = None, unit: str = "characters") -> str:
    """A tool result as its first ``keep`` characters and a note naming where the rest is."""
    note = _result_note(len(text) if size is None else size, unit, alias)
    return f"{text[:keep]}\n\n{note}" if keep > 0 else note


def shorten_arguments(arguments: str, keep: int, alias: str | None) -> str:
    """Tool-call arguments with every large value cut to ``keep`` characters and a note.

    A JSON object stays a JSON object with the same keys (a path or a mode stays readable);
    anything else becomes ``{"argumentsPreview": ..., "note": ...}``.
    """
    note = _arguments_note(len(arguments), alias)
    try:
        value = json.loads(arguments)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return json.dumps({"argumentsPreview": arguments[:keep], "note": note}, ensure_ascii=False)
    limit = max(keep, 200)
    out: dict[str, Any] = {}
    for key, item in value.items():
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        out[key] = item if len(text) <= limit else f"{text[:keep]}{note}"
    shortened = json.dumps(out, ensure_ascii=False)
    if len(shortened) >= len(arguments) or len(shortened) > 4 * (limit + len(note)):
        # Many medium values: no single one is large, but together they are.
        return json.dumps({"argumentsPreview": arguments[:keep], "note": note}, ensure_ascii=False)
    return shortened


class _Sizer:
    """Keeps the request's totals while messages of the pieces are replaced."""

    def __init__(self, pieces: list[Piece], chars: int, tokens: int, counter: TokenCounter) -> None:
        self.pieces = pieces
        self.chars = chars
        self.tokens = tokens
        self.counter = counter

    def replace_message(self, index: int, position: int, new: dict[str, Any]) -> None:
        piece = self.pieces[index]
        old = piece.payload[position]
        d_chars = message_chars(new) - message_chars(old)
        d_tokens = message_tokens(new, self.counter) - message_tokens(old, self.counter)
        payload = list(piece.payload)
        payload[position] = new
        self.pieces[index] = Piece(piece.sources, payload, piece.chars + d_chars, piece.tokens + d_tokens, "turn_compaction")
        self.chars += d_chars
        self.tokens += d_tokens


def compact_turn(
    pieces: list[Piece],
    chars: int,
    tokens: int,
    budget: ContextBudget,
    counter: TokenCounter,
    *,
    conversation_id: str | None = None,
) -> Compaction:
    """Shrink the tool groups of the current turn (``pieces``, replaced in place) until the request fits.

    ``chars`` and ``tokens`` are the totals of the whole request. With ``conversation_id`` the
    notes name an ``@state`` alias for every shortened item (:class:`Spill` for the ones not on
    disk yet); without it they say the full text is in the conversation log.
    """
    sizer = _Sizer(pieces, chars, tokens, counter)
    spills: dict[str, Spill] = {}
    shortened: list[str] = []

    def fits() -> bool:
        return budget.fits(sizer.chars, sizer.tokens)

    for keep, large in ((PREVIEW_CHARS, LARGE_CHARS), (0, MINIMAL_CHARS)):
        for index in range(len(pieces)):
            if fits():
                break
            piece = pieces[index]
            if len(piece.sources) != 1 or piece.sources[0].kind != "group" or len(piece.payload) < 2:
                continue
            unit = piece.sources[0]
            for step in _items(unit):
                if fits():
                    break
                step(sizer, index, keep, large, conversation_id, spills, shortened)
    return Compaction(sizer.chars, sizer.tokens, list(spills.values()), list(dict.fromkeys(shortened)))


_Step = Callable[[_Sizer, int, int, int, "str | None", dict[str, Spill], list[str]], None]


def _items(unit: Unit) -> list[_Step]:
    """The shrinkable items of a group, oldest first: each call's arguments, then the results."""
    steps: list[_Step] = []
    for position in range(len(unit.calls)):
        steps.append(_arguments_step(unit, position))
    for position, call in enumerate(unit.calls):
        if call.id in unit.results:
            steps.append(_result_step(unit, position))
    return steps


def _arguments_step(unit: Unit, position: int) -> _Step:
    call = unit.calls[position]

    def step(sizer: _Sizer, index: int, keep: int, large: int, cid: str | None, spills: dict[str, Spill], shortened: list[str]) -> None:
        assistant = sizer.pieces[index].payload[0]
        calls = list(assistant.get("tool_calls") or ())
        current = calls[position]["function"]["arguments"] if position < len(calls) else ""
        full = call.function.arguments
        if len(current) <= large or len(full) <= large:
            return
        alias: str | None = None
        if cid is not None:
            alias = offload_alias(cid, f"{unit.message.id}-arguments-{call.id}")
            spills.setdefault(alias, Spill(alias, full))
        new_arguments = shorten_arguments(full, keep, alias)
        if len(new_arguments) >= len(current):
            return
        calls[position] = {**calls[position], "function": {**calls[position]["function"], "arguments": new_arguments}}
        sizer.replace_message(index, 0, {**assistant, "tool_calls": calls})
        shortened.append(unit.message.id)

    return step


def _result_step(unit: Unit, position: int) -> _Step:
    call = unit.calls[position]
    result = unit.results[call.id]

    def step(sizer: _Sizer, index: int, keep: int, large: int, cid: str | None, spills: dict[str, Spill], shortened: list[str]) -> None:
        message = sizer.pieces[index].payload[1 + position]
        current = content_text(message.get("content"))
        if len(current) <= large:
            return
        full = content_text(result.content)
        alias = result.fullOutputPath
        size = len(full)
        if alias is not None:
            # Offloaded by the store: the stored content is already a preview of the file.
            full = full.split("\n\n[Full output: ", 1)[0]
            size = result.fullOutputBytes or size
        elif cid is not None:
            alias = offload_alias(cid, result.id)
            spills.setdefault(alias, Spill(alias, full))
        text = shorten_result(full, keep, alias, size=size, unit="bytes" if result.fullOutputPath else "characters")
        if len(text) >= len(current):
            return
        sizer.replace_message(index, 1 + position, {**message, "content": text})
        shortened.append(result.id)

    return step
