"""Deterministic compression of the older part of the context window, oldest first, down to 50 %.

Stages, each applied oldest first and stopped as soon as the request is at the target:

1. ``previews``: tool results over 2,000 characters become their first 500 characters and a
   note (with the alias path when the output was offloaded, so the model can ``fs.read`` it).
2. ``tool_history``: complete tool groups collapse into one assistant text
   ``TOOL_CALL_HISTORY_SUMMARY`` listing each call (tool, arguments), the assistant's stated
   purpose and the outcome; consecutive collapsed groups share one message.
3. ``truncate``: user and assistant texts over 4,000 characters keep their first 2,000.

Previews go first because they lose the least: the full output stays readable through the
alias path. Only pieces of the window are touched; the current turn is never passed in here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewagent.core.context.budget import COMPRESS_TARGET, ContextBudget
from crewagent.core.context.render import Piece, make_piece, truncate
from crewagent.core.context.tokens import TokenCounter, content_text
from crewagent.core.jsonparse import parse_json
from crewagent.core.protocol.chain import Unit

#: Takes a log message id and the full text; returns the alias the text will be readable at.
Spiller = Callable[[str, str], "str | None"]

LARGE_RESULT_CHARS = 2_000
PREVIEW_CHARS = 500
LONG_TEXT_CHARS = 4_000
TRUNCATE_KEEP = 2_000
TOOL_HISTORY_MARKER = "TOOL_CALL_HISTORY_SUMMARY"
_LINE = 160


def one_line(text: str, limit: int = _LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def outcome(content: str) -> str:
    """``ok: ...`` or ``failed CODE: message`` for a tool result text."""
    stripped = content.lstrip()
    if stripped.startswith("{") and len(stripped) < 20_000:
        try:
            body = parse_json(stripped)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("ok") is False:
            err: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
            return one_line(f"failed {err.get('code', 'ERROR')}: {err.get('message', '')}")
    return "ok: " + one_line(content, 120) if content.strip() else "ok (no output)"


def tool_history_lines(unit: Unit) -> list[str]:
    """The TOOL_CALL_HISTORY_SUMMARY bullets of one group."""
    lines: list[str] = []
    purpose = content_text(unit.message.content).strip()
    if purpose:
        lines.append(f"- purpose: {one_line(purpose)}")
    for call in unit.calls:
        result = unit.results.get(call.id)
        result_text = content_text(result.content) if result is not None else ""
        status = outcome(result_text) if result is not None else "failed TOOL_INTERRUPTED: no result"
        lines.append(f"- {call.function.name} {one_line(call.function.arguments, 120)} → {status}")
    return lines


def preview_results(piece: Piece, counter: TokenCounter, spill: Spiller | None = None) -> Piece | None:
    """The group with every result longer than a preview replaced by its preview (an earlier turn's
    results when ``llm.includeToolResultsInContext`` is off); ``None`` when none is that long.
    The piece is not marked compressed: it is what the settings ask for, not a loss to summarise."""
    return _preview_group(piece, counter, spill, above=PREVIEW_CHARS, stage=None)


def _preview_group(
    piece: Piece, counter: TokenCounter, spill: Spiller | None = None, *, above: int = LARGE_RESULT_CHARS, stage: str | None = "previews"
) -> Piece | None:
    """The group with its results over ``above`` characters replaced by previews; ``None`` when none is."""
    unit = piece.sources[0]
    changed = False
    payload: list[dict[str, Any]] = [piece.payload[0]]
    for message in piece.payload[1:]:
        text = content_text(message.get("content"))
        if len(text) > above:
            result = unit.results.get(message.get("tool_call_id") or "")
            path = result.fullOutputPath if result is not None else None
            if path is None and result is not None and spill is not None:
                path = spill(result.id, content_text(result.content))
            where = f"Full output: {path}" if path else "the full output is in the conversation log"
            preview = f"{text[:PREVIEW_CHARS]}\n\n[Preview for context: {len(text)} characters; {where}]"
            message = {**message, "content": preview}
            changed = True
        payload.append(message)
    return make_piece(piece.sources, payload, counter, stage) if changed else None


def _collapse(pieces: list[Piece], counter: TokenCounter) -> Piece:
    units = [u for p in pieces for u in p.sources]
    lines = [TOOL_HISTORY_MARKER]
    for unit in units:
        lines.extend(tool_history_lines(unit))
    return make_piece(units, [{"role": "assistant", "content": "\n".join(lines)}], counter, "tool_history")


def _smaller(new: Piece, *old: Piece) -> bool:
    """Whether ``new`` takes no more characters and tokens than the ``old`` pieces it replaces."""
    return new.chars <= sum(p.chars for p in old) and new.tokens <= sum(p.tokens for p in old)


def compress_window(
    window: list[Piece],
    chars: int,
    tokens: int,
    budget: ContextBudget,
    counter: TokenCounter,
    spill: Spiller | None = None,
) -> tuple[list[Piece], list[str]]:
    """The window compressed oldest first until the whole request is at 50 % of the budget.

    ``chars`` and ``tokens`` are the totals of the whole request including ``window``;
    ``spill`` names the file a previewed result's full text will be written to (see
    :mod:`~crewagent.core.context.compaction`). Returns the new window and the stages that
    changed something.
    """
    pieces = list(window)
    stages: list[str] = []

    def at_target() -> bool:
        return budget.load(chars, tokens) <= COMPRESS_TARGET

    def replace(index: int, new: Piece, stage: str) -> None:
        nonlocal chars, tokens
        old = pieces[index]
        chars += new.chars - old.chars
        tokens += new.tokens - old.tokens
        pieces[index] = new
        if stage not in stages:
            stages.append(stage)

    for index, piece in enumerate(pieces):
        if at_target():
            return pieces, stages
        if piece.sources and piece.sources[0].kind == "group" and piece.compressed is None:
            new = _preview_group(piece, counter, spill)
            if new is not None:
                replace(index, new, "previews")

    index = 0
    while index < len(pieces) and not at_target():
        piece = pieces[index]
        if piece.sources and piece.sources[0].kind == "group" and piece.compressed != "tool_history":
            previous = pieces[index - 1] if index > 0 else None
            if previous is not None and previous.compressed == "tool_history":
                merged = _collapse([previous, piece], counter)
                if _smaller(merged, previous, piece):
                    chars += merged.chars - previous.chars - piece.chars
                    tokens += merged.tokens - previous.tokens - piece.tokens
                    pieces[index - 1 : index + 1] = [merged]
                    continue
            collapsed = _collapse([piece], counter)
            # The summary of a small group (an empty result, a short call) can be longer than the
            # group: such a group stays as it is, or the request would outgrow the budget it fit.
            if _smaller(collapsed, piece):
                replace(index, collapsed, "tool_history")
        index += 1

    for index, piece in enumerate(pieces):
        if at_target():
            break
        if piece.sources and piece.sources[0].kind == "text" and piece.compressed is None:
            text = content_text(piece.payload[0].get("content"))
            if len(text) > LONG_TEXT_CHARS:
                message = {**piece.payload[0], "content": truncate(text, TRUNCATE_KEEP, "to save context")}
                replace(index, make_piece(piece.sources, [message], counter, "truncate"), "truncate")
    return pieces, stages
