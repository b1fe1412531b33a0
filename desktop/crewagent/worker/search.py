"""Full-text search over a project's conversation logs, and reading project files for preview tabs.

Both run in the worker's background pool: they only read, and a newer search supersedes an
older one (``cancelled`` is checked between conversations and every few hundred lines).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crewagent.core.errors import ConversationNotFound
from crewagent.core.jsonparse import parse_json
from crewagent.core.store import RuntimeStore
from crewagent.core.store.log import iter_log
from crewagent.worker.background import Cancelled
from crewagent.worker.values import FilePreview, SearchHit

#: Characters of context on each side of the first match.
SNIPPET_CONTEXT = 36
#: The biggest file a preview tab reads; larger ones offer "Open in system app".
PREVIEW_LIMIT_BYTES = 2 * 1024 * 1024
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_CHECK_EVERY = 256
# JSON escapes these, so a raw-line prefilter could miss them; such queries parse every line.
_ESCAPED = frozenset('"\\/\b\f\n\r\t')


def _snippet(text: str, start: int, length: int) -> str:
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), start + length + SNIPPET_CONTEXT)
    body = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + body + ("…" if right < len(text) else "")


def search_messages(
    store: RuntimeStore, project_id: str, query: str, cancelled: Callable[[], bool]
) -> tuple[SearchHit, ...]:
    """Conversations of ``project_id`` whose message text contains ``query`` (case-insensitive).

    Most recently active first. Raises :class:`Cancelled` as soon as ``cancelled()`` is true.
    Logs are read line by line; a line is parsed only when its raw text could contain the query.
    """
    needle = query.casefold().strip()
    if not needle:
        return ()
    prefilter = not (_ESCAPED & set(needle)) and needle.isascii()
    hits: list[SearchHit] = []
    for meta in store.list_conversations(project_id):
        if cancelled():
            raise Cancelled
        snippet, matches = "", 0
        try:
            lines = iter_log(store.log_path(project_id, meta.id))
            for number, raw in lines:
                if number % _CHECK_EVERY == 0 and cancelled():
                    raise Cancelled
                line = raw.decode("utf-8", errors="replace")
                if prefilter and needle not in line.casefold():
                    continue
                try:
                    content = parse_json(line).get("content")
                except (ValueError, AttributeError):
                    continue  # a damaged line: the store reports it when the conversation is opened
                if not isinstance(content, str):
                    continue
                position = content.casefold().find(needle)
                if position < 0:
                    continue
                matches += 1
                if not snippet:
                    snippet = _snippet(content, position, len(needle))
        except (FileNotFoundError, ConversationNotFound):
            continue  # deleted while we searched
        if matches:
            hits.append(SearchHit(meta.id, snippet, matches))
    return tuple(hits)


def read_preview(path: str, *, limit: int = PREVIEW_LIMIT_BYTES) -> FilePreview:
    """Read a project file for a workspace tab: Markdown, text, or why it cannot be shown."""
    file = Path(path)
    try:
        size = file.stat().st_size
        if not file.is_file():
            return FilePreview(path, "error", size, message=f"{file.name} is not a regular file.")
        if size > limit:
            return FilePreview(
                path, "too_large", size, message=f"{file.name} is too large to preview ({size / 1_048_576:.1f} MB)."
            )
        data = file.read_bytes()
    except OSError as exc:
        return FilePreview(path, "error", message=f"{file.name} cannot be read: {exc.strerror or exc}.")
    if b"\0" in data[:8192]:
        return FilePreview(path, "binary", size, message=f"{file.name} is not a text file.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FilePreview(path, "binary", size, message=f"{file.name} is not UTF-8 text.")
    kind = "markdown" if file.suffix.lower() in MARKDOWN_SUFFIXES else "text"
    return FilePreview(path, kind, size, text=text)
