"""Search by reading the logs: the reference answer, and the fallback when there is no index.

Logs are read line by line; a line is parsed only when its raw bytes could contain the query.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crewagent.core.errors import ConversationNotFound
from crewagent.core.jsonparse import parse_json
from crewagent.core.messages import ConversationMeta
from crewagent.core.search.hits import IsCancelled, LogMatches, SearchCancelled, SearchHit
from crewagent.core.search.text import match_at, readable_text

_CHECK_EVERY = 256
#: Bytes read at a time when a log is read from an offset.
_BLOCK = 1 << 20
# JSON escapes these, so the raw line may not contain them as they are: such queries parse every line.
_ESCAPED = frozenset('"\\/\b\f\n\r\t')
#: The log file of a conversation id (``RuntimeStore.log_path`` bound to a project).
LogPath = Callable[[str], str | Path]


def _prefilter(needle: str) -> bool:
    """True when a raw line can be skipped on its bytes alone (see ``scan_log``)."""
    return needle.isascii() and not (_ESCAPED & set(needle))


def scan_log(path: str | Path, needle: str, cancelled: IsCancelled, *, start: int = 0, end: int | None = None) -> LogMatches:
    """The messages of ``path`` (bytes ``start`` to ``end``) whose readable text contains ``needle``.

    A line is skipped unparsed when the needle is plain ASCII without JSON escapes and the line,
    case-folded, does not contain it; lines holding ``\\u`` escapes are always parsed (an escaped
    character may fold to the needle's letters, as the Kelvin sign folds to "k").
    """
    found = LogMatches()
    prefilter = _prefilter(needle)
    with open(path, "rb") as handle:
        handle.seek(start)
        remaining = None if end is None else end - start
        number = 0
        for raw in handle:
            if remaining is not None:
                if remaining <= 0:
                    break
                raw = raw[:remaining]
                remaining -= len(raw)
            number += 1
            if number % _CHECK_EVERY == 0 and cancelled():
                raise SearchCancelled
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue
            if prefilter and b"\\u" not in body and needle not in body.decode("utf-8", errors="replace").casefold():
                continue
            try:
                record = parse_json(body.decode("utf-8", errors="replace"))
            except ValueError:
                continue  # a damaged line: the store reports it when the conversation is opened
            text = readable_text(record)
            if match_at(text, needle) >= 0:
                found.add(text, needle, str(record.get("id") or ""))
    return found


def scan_conversations(
    log_of: LogPath, metas: list[ConversationMeta], needle: str, cancelled: IsCancelled
) -> tuple[SearchHit, ...]:
    """Every conversation of ``metas`` (in their order) with a message containing ``needle``."""
    hits: list[SearchHit] = []
    if not needle:
        return ()
    for meta in metas:
        if cancelled():
            raise SearchCancelled
        try:
            found = scan_log(log_of(meta.id), needle, cancelled)
        except (FileNotFoundError, ConversationNotFound):
            continue  # deleted while we searched
        if found.count:
            hits.append(SearchHit(meta.id, found.snippet, found.count, found.message_id))
    return tuple(hits)
