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
from dataclasses import dataclass
from typing import Any

from crewagent.core.context.budget import ContextBudget
from crewagent.core.context.render import Piece
from crewagent.core.context.tokens import TokenCounter, content_text, message_size
from crewagent.core.jsonparse import parse_json
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
    limit = max(keep, 200)
    try:
        # Megabytes (an fs.write of a big file) are parsed in slices, and a long string only as far
        # as a preview needs (limit + 1 characters: still too long to keep, and its start is the
        # same): every request after such a call shortens them again, the tool parsed them in full.
        value = parse_json(arguments, head=limit + 1)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return json.dumps({"argumentsPreview": arguments[:keep], "note": note}, ensure_ascii=False)
    out: dict[str, Any] = {}
    for key, item in value.items():
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        out[key] = item if len(text) <= limit else f"{text[:keep]}{note}"
    shortened = json.dumps(out, ensure_ascii=False)
    if len(shortened) >= len(arguments) or len(shortened) > 4 * (limit + len(note)):
        # Many medium values: no single one is large, but together they are.
        return json.dumps({"argumentsPreview": arguments[:keep], "note": note}, ensure_ascii=False)
    return shortened


class _Compactor:
    """Replaces messages of the turn's pieces with shortened ones, keeping the request's totals."""

    def __init__(self, pieces: list[Piece], chars: int, tokens: int, counter: TokenCounter, conversation_id: str | None) -> None:
        self.pieces = pieces
        self.chars = chars
        self.tokens = tokens
        self.counter = counter
        self.conversation_id = conversation_id
        self.spills: dict[str, Spill] = {}
        self.shortened: list[str] = []

    def _replace(self, index: int, position: int, new: dict[str, Any]) -> None:
        piece = self.pieces[index]
        old = piece.payload[position]
        (new_chars, new_tokens), (old_chars, old_tokens) = message_size(new, self.counter), message_size(old, self.counter)
        d_chars, d_tokens = new_chars - old_chars, new_tokens - old_tokens
        payload = list(piece.payload)
        payload[position] = new
        self.pieces[index] = Piece(piece.sources, payload, piece.chars + d_chars, piece.tokens + d_tokens, "turn_compaction")
        self.chars += d_chars
        self.tokens += d_tokens

    def _spill(self, name: str, text: str) -> str | None:
        """The alias the full ``text`` will have (written by the session before sending)."""
        if self.conversation_id is None:
            return None
        alias = offload_alias(self.conversation_id, name)
        self.spills.setdefault(alias, Spill(alias, text))
        return alias

    def shorten_arguments(self, index: int, unit: Unit, position: int, keep: int, large: int) -> None:
        call = unit.calls[position]
        assistant = self.pieces[index].payload[0]
        calls = list(assistant.get("tool_calls") or ())
        current = calls[position]["function"]["arguments"]
        full = call.function.arguments
        if len(current) <= large:
            return
        name = f"{unit.message.id}-arguments-{call.id}"
        alias = offload_alias(self.conversation_id, name) if self.conversation_id is not None else None
        arguments = shorten_arguments(full, keep, alias)
        if len(arguments) >= len(current):
            return
        self._spill(name, full)
        calls[position] = {**calls[position], "function": {**calls[position]["function"], "arguments": arguments}}
        self._replace(index, 0, {**assistant, "tool_calls": calls})
        self.shortened.append(unit.message.id)

    def shorten_result(self, index: int, unit: Unit, position: int, keep: int, large: int) -> None:
        result = unit.results[unit.calls[position].id]
        message = self.pieces[index].payload[1 + position]
        current = content_text(message.get("content"))
        if len(current) <= large:
            return
        full = content_text(result.content)
        if result.fullOutputPath is not None:
            # Offloaded by the store: the stored content is already a 500-character preview.
            alias: str | None = result.fullOutputPath
            text = shorten_result(full, keep, alias, size=result.fullOutputBytes or len(full), unit="bytes")
        else:
            alias = offload_alias(self.conversation_id, result.id) if self.conversation_id is not None else None
            text = shorten_result(full, keep, alias)
        if len(text) >= len(current):
            return
        if result.fullOutputPath is None:
            self._spill(result.id, full)
        self._replace(index, 1 + position, {**message, "content": text})
        self.shortened.append(result.id)


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
    work = _Compactor(pieces, chars, tokens, counter, conversation_id)

    def fits() -> bool:
        return budget.fits(work.chars, work.tokens)

    for keep, large in ((PREVIEW_CHARS, LARGE_CHARS), (0, MINIMAL_CHARS)):
        for index in range(len(pieces)):
            sources = pieces[index].sources
            if len(sources) != 1 or sources[0].kind != "group":
                continue
            unit = sources[0]
            # Oldest first: the calls' arguments, then their results, in call order.
            for position in range(len(unit.calls)):
                if fits():
                    break
                work.shorten_arguments(index, unit, position, keep, large)
            for position, call in enumerate(unit.calls):
                if fits():
                    break
                if call.id in unit.results:
                    work.shorten_result(index, unit, position, keep, large)
    return Compaction(work.chars, work.tokens, list(work.spills.values()), list(dict.fromkeys(work.shortened)))
