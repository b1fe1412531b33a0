"""build_llm_messages: the exact messages[] of the next LLM call for chat, agent and run modes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crewagent.core import texts
from crewagent.core.context.budget import COMPRESS_ABOVE, ContextBudget, usage
from crewagent.core.context.compaction import Spill, compact_turn
from crewagent.core.context.compression import compress_window, preview_results
from crewagent.core.context.prompts import RunContext, run_blocks, system_prefix, user_input_block
from crewagent.core.context.render import Piece, make_piece, render_unit, total_size, truncate
from crewagent.core.context.tokens import (
    CHARS_PER_TOKEN,
    TOKENS_PER_REPLY,
    TokenCounter,
    content_text,
    default_counter,
    message_size,
)
from crewagent.core.messages import ConversationMessage, Mode
from crewagent.core.protocol.chain import ChainReport, Unit, assemble
from crewagent.core.protocol.validator import DOTTED_FUNCTION_NAME, first_error
from crewagent.core.store.gcpause import gc_paused
from crewagent.core.store.offload import offload_alias

CONTEXT_STILL_TOO_LARGE = "CONTEXT_STILL_TOO_LARGE"
CONTEXT_PROTOCOL_INVALID = "CONTEXT_PROTOCOL_INVALID"
#: The compacted turn refers to full outputs that could not be written (disk full ...).
CONTEXT_SPILL_FAILED = "CONTEXT_SPILL_FAILED"


@dataclass(frozen=True, slots=True)
class ContextError:
    """Why no request can be built; the tool loop persists it as an error part."""

    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(slots=True)
class ContextResult:
    """The messages to send (empty when ``error`` is set) and the debug metadata."""

    messages: list[dict[str, Any]]
    debug: dict[str, Any]
    error: ContextError | None = None
    #: The persisted summary in use, if any.
    summary: ConversationMessage | None = None
    #: Oldest-first units whose content did not reach the model intact (trimmed or compressed):
    #: what a rolling summary should cover. Filled only when compression was triggered.
    summary_candidates: list[Unit] = field(default_factory=list)
    #: Full texts the request refers to by alias (shortened items of the current turn, previews
    #: of older results): they must be written, if not on disk yet, before ``messages`` is sent.
    spills: list[Spill] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def _protected_start(units: Sequence[Unit]) -> int:
    """Where the current turn begins: the latest user message, else the trailing tool loop."""
    for index in range(len(units) - 1, -1, -1):
        if units[index].message.role == "user":
            return index
    index = len(units)
    while index > 0 and units[index - 1].kind == "group":
        index -= 1
    return index


def _without_retried_attempts(units: list[Unit], report: ChainReport) -> list[Unit]:
    """The units without the failed attempts a retry goes past (reported as skipped).

    A failed attempt is an error part (an answer cut off by an LLM error or a Stop). Followed by
    the user's next message it stays: "continue" resumes from it. Followed by another answer (the
    retry's), or by nothing (the retry's own request), it was retried: the request is the failed
    one again, and the log keeps the attempt only for the user to see.
    """
    dropped = [
        index
        for index, unit in enumerate(units)
        if unit.kind == "text"
        and unit.message.partType == "error"
        and unit.message.role == "assistant"
        and (index + 1 == len(units) or units[index + 1].message.role != "user")
    ]
    if not dropped:
        return units
    report.skippedMessageIds.extend(units[index].message.id for index in dropped)
    skip = set(dropped)
    return [unit for index, unit in enumerate(units) if index not in skip]


def _fixed_piece(payload: list[dict[str, Any]], counter: TokenCounter) -> Piece:
    return make_piece([], payload, counter)


class LineCounter:
    """``counter`` applied line by line (each line keeps its line break), for the run blocks.

    RUN_DIRECTIVE is a few lines that change with every run and node (the run id, the node, the
    intent) above the long fixed protocol; counted whole, the counter's cache never hits and
    every model call of a run paid a fresh tiktoken pass over the protocol (~0.2 ms a block,
    twice a state-write turn). Line by line the protocol's lines are counted once per process.
    A token never spans a line break kept at the end of its line, except runs of blank lines
    (one token whole, one per line here): the sum is the exact count or a few tokens over.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.name = counter.name
        self.exact = counter.exact

    def count(self, text: str) -> int:
        count = self.counter.count
        return sum(count(line) for line in text.splitlines(keepends=True))


def _run_piece(run_context: RunContext, counter: TokenCounter) -> Piece:
    """RUN_DIRECTIVE and NODE_BRIEF (counted line by line with a tokenizer: see LineCounter).

    The size of blocks seen before is remembered by their text: every model call of a run sends
    them, and a run's turns on one node send the same text again (sizing it took ~60 µs a call,
    most of a run call's own build). A new run or node is sized, once.
    """
    payload = run_blocks(run_context)
    # By the counter object (kept in the value, so that its id names no other counter meanwhile).
    key = (id(counter), *(message["content"] for message in payload))
    known = _RUN_PIECE_SIZES.get(key)
    if known is not None and known[0] is counter:
        return Piece([], payload, known[1], known[2])
    piece = make_piece([], payload, LineCounter(counter) if counter.exact else counter)
    if len(_RUN_PIECE_SIZES) >= _RUN_PIECE_SIZES_MAX:
        _RUN_PIECE_SIZES.clear()
    _RUN_PIECE_SIZES[key] = (counter, piece.chars, piece.tokens)
    return piece


#: The counter, characters and tokens of run blocks, by the counter's id and the blocks' texts (see _run_piece).
_RUN_PIECE_SIZES: dict[tuple[object, ...], tuple[TokenCounter, int, int]] = {}
_RUN_PIECE_SIZES_MAX = 256


@gc_paused()  # it makes many short-lived objects, none in cycles: see store/gcpause.py
def build_llm_messages(
    messages: Sequence[ConversationMessage | Mapping[str, Any]],
    *,
    mode: Mode = "chat",
    budget: ContextBudget | None = None,
    persona: str | None = None,
    extra_system: Sequence[str] = (),
    merge_system: bool = False,
    run_context: RunContext | None = None,
    counter: TokenCounter | None = None,
    compress: bool = True,
    pending_call_ids: Iterable[str] = (),
    conversation_id: str | None = None,
    tool_results: bool = True,
) -> ContextResult:
    """The messages[] the next call of ``mode`` sends, built from the conversation log.

    Never raises on data: whatever the log holds, the result either validates or carries an
    error (and no messages). Nothing in ``messages`` is modified. ``conversation_id`` names
    the ``@state`` files a compacted current turn refers to (``ContextResult.spills``).
    ``tool_results`` False (``llm.includeToolResultsInContext`` off): earlier turns' tool
    results go as previews, their full text readable at the path the preview names; the current
    turn's results always go in full, and every call still gets its result.
    """
    counter = counter or default_counter()
    budget = (budget or ContextBudget()).for_counter(counter)
    chain = assemble(messages, pending_call_ids=pending_call_ids)
    units = _without_retried_attempts(chain.units, chain.report)
    start = _protected_start(units)

    summary = chain.summary
    covered: set[str] = set()
    if summary is not None:
        covered = set(summary.summaryOf or [])
    older = [u for u in units[:start] if u.message.id not in covered] if covered else units[:start]
    protected_units = units[start:]

    extra = list(extra_system)
    if summary is not None:
        extra.append(summary.text)
    prefix = system_prefix(mode, persona=persona, extra_system=extra, merge=merge_system)
    fixed = [_fixed_piece(prefix, counter)]

    latest_user = protected_units[0] if protected_units and protected_units[0].message.role == "user" else None
    protected: list[Piece] = []
    if mode == "run" and run_context is not None:
        fixed.append(_run_piece(run_context, counter))
        if latest_user is None and run_context.user_input is not None:
            block = user_input_block(run_context, run_context.user_input)
            fixed.append(_fixed_piece([{"role": "user", "content": block}], counter))
    for unit in protected_units:
        payload = render_unit(unit)
        if unit is latest_user and mode == "run" and run_context is not None:
            payload = [{"role": "user", "content": user_input_block(run_context, unit.message.text)}]
        protected.append(make_piece([unit], payload, counter))

    chars, tokens = total_size([*fixed, *protected])
    tokens += TOKENS_PER_REPLY
    turn_chars, turn_tokens = chars, tokens
    spills: list[Spill] = []
    compacted_ids: list[str] = []
    turn_compacted = not budget.fits(chars, tokens)
    if turn_compacted:
        compaction = compact_turn(protected, chars, tokens, budget, counter, conversation_id=conversation_id)
        chars, tokens = compaction.chars, compaction.tokens
        spills, compacted_ids = compaction.spills, compaction.message_ids
    truncated_user = False
    if not budget.fits(chars, tokens) and latest_user is not None:
        truncated_user, chars, tokens = _truncate_latest_user(protected, chars, tokens, budget, counter)

    error: ContextError | None = None
    if not budget.fits(chars, tokens):
        spills = []
        error = ContextError(
            CONTEXT_STILL_TOO_LARGE,
            texts.CONTEXT_TOO_LARGE.format(
                chars=chars, tokens=tokens, turn_chars=turn_chars, turn_tokens=turn_tokens, budget=budget.source
            ),
        )

    # The window: older units, newest first, while every budget holds; it stops at the first
    # unit that does not fit so that the history has no holes.
    count = sum(len(p.payload) for p in protected)
    window: list[Piece] = []
    first_kept = len(older)
    for index in range(len(older) - 1, -1, -1):
        unit = older[index]
        if count + unit.size > budget.max_messages:
            break
        piece = make_piece([unit], render_unit(unit), counter)
        previewed: list[Spill] = []
        if not tool_results and unit.kind == "group":
            piece = preview_results(piece, counter, _spiller(conversation_id, previewed)) or piece
        if not budget.fits(chars + piece.chars, tokens + piece.tokens):
            break
        spills.extend(spill for spill in previewed if all(s.alias != spill.alias for s in spills))
        window.append(piece)
        count += unit.size
        chars += piece.chars
        tokens += piece.tokens
        first_kept = index
    window.reverse()
    dropped_units = older[:first_kept]

    load_before = budget.load(chars, tokens)
    stages: list[str] = []
    candidates: list[Unit] = []
    if compress and load_before > COMPRESS_ABOVE and error is None:
        window, stages = compress_window(window, chars, tokens, budget, counter, _spiller(conversation_id, spills))
        chars, tokens = total_size([*fixed, *protected, *window])
        tokens += TOKENS_PER_REPLY
        last_compressed = max((i for i, p in enumerate(window) if p.compressed), default=-1)
        candidates = [*dropped_units, *(u for p in window[: last_compressed + 1] for u in p.sources)]

    history = [m for p in window for m in p.payload]
    if mode == "run" and run_context is not None:
        current = [m for p in fixed[1:] for m in p.payload] + [m for p in protected for m in p.payload]
    else:
        current = [m for p in protected for m in p.payload]
    payload = [*prefix, *history, *current]

    problem = first_error(payload, name_pattern=DOTTED_FUNCTION_NAME)
    if problem is not None and error is None:
        # A bug of the builder, not of the data: never send what the provider would reject.
        error = ContextError(CONTEXT_PROTOCOL_INVALID, f"{problem.code}: {problem.message} ({problem.param})")

    debug: dict[str, Any] = {
        "mode": mode,
        "totalMessages": chain.total,
        "includedMessages": sum(len(p.ids) for p in [*window, *protected]) + (1 if summary else 0),
        "sentMessages": len(payload),
        "droppedMessageIds": _ids_of(dropped_units),
        "estimatedTokens": tokens,
        "estimatedChars": chars,
        "systemPromptIncluded": bool(prefix),
        "usage": usage(chars, tokens, budget),
        "budget": budget.as_dict(),
        "tokenCounter": counter.name,
        "excluded": chain.report.as_dict(),
        "summary": (
            {"messageId": summary.id, "coveredMessages": len(covered)} if summary is not None else None
        ),
        "compression": {
            "triggered": bool(stages) or (compress and load_before > COMPRESS_ABOVE and error is None),
            "loadBeforePercent": round(load_before * 100, 1),
            "stages": stages,
            "compressedMessageIds": [i for p in window if p.compressed for i in p.ids],
        },
        "turnCompaction": {
            "triggered": turn_compacted,
            "charsBefore": turn_chars,
            "tokensBefore": turn_tokens,
            "shortenedMessageIds": compacted_ids,
        },
        "toolResults": "full" if tool_results else "previews",
        "spilledAliases": [spill.alias for spill in spills],
        "truncatedLatestUserMessage": truncated_user,
        "protectedMessages": sum(len(p.payload) for p in protected),
        "validation": problem.envelope() if problem is not None else None,
        "error": error.as_dict() if error is not None else None,
    }
    return ContextResult(
        [] if error is not None else payload,
        debug,
        error,
        summary,
        candidates,
        spills,
    )


def _spiller(conversation_id: str | None, spills: list[Spill]) -> Callable[[str, str], str | None] | None:
    """Names the ``@state`` file of a previewed older result (added to ``spills``), like compaction does."""
    if conversation_id is None:
        return None

    def spill(name: str, text: str) -> str:
        alias = offload_alias(conversation_id, name)
        if all(s.alias != alias for s in spills):
            spills.append(Spill(alias, text))
        return alias

    return spill


def _ids_of(units: Sequence[Unit]) -> list[str]:
    """The log message ids of ``units`` in order (a flat loop: this runs over the whole log)."""
    out: list[str] = []
    for unit in units:
        out.append(unit.message.id)
        if unit.kind == "group":
            out.extend(result.id for result in unit.results.values())
    return out


def _truncate_latest_user(
    protected: list[Piece], chars: int, tokens: int, budget: ContextBudget, counter: TokenCounter
) -> tuple[bool, int, int]:
    """Shorten the latest user message (``protected[0]``) until the request fits; keep a marker.

    Returns whether it was shortened and the new totals. When even an empty message would not
    fit, the message is left as it is and the caller reports CONTEXT_STILL_TOO_LARGE.
    """
    piece = protected[0]
    message = piece.payload[0]
    text = content_text(message.get("content"))
    other_chars, other_tokens = chars - piece.chars, tokens - piece.tokens
    room_chars = budget.max_chars - other_chars if budget.count_chars else len(text)
    room_tokens = (budget.max_tokens - other_tokens) if budget.max_tokens else None
    keep = min(len(text), room_chars)
    if room_tokens is not None:
        keep = min(keep, room_tokens * CHARS_PER_TOKEN)
    marker_room = len(truncate("x" * (len(text) + 1), 0)) - 1  # upper bound of the marker's length
    keep -= marker_room
    while keep >= 0:
        candidate = {"role": message["role"], "content": truncate(text, keep)}
        c_chars, c_tokens = message_size(candidate, counter)
        if budget.fits(other_chars + c_chars, other_tokens + c_tokens):
            protected[0] = Piece(piece.sources, [candidate, *piece.payload[1:]], c_chars, c_tokens, "truncated")
            return True, other_chars + c_chars, other_tokens + c_tokens
        if keep == 0:
            break
        # Token counts are not linear in characters: shrink by the overshoot, at least 10 %.
        over = other_chars + c_chars - budget.max_chars if budget.count_chars else 0
        keep = max(0, min(keep - max(1, keep // 10), keep - over))
    return False, chars, tokens
