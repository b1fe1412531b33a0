"""Full-text search over a project's conversation logs, and reading project files for preview tabs.

Both run in the worker's background pool, off the GUI thread, and a newer search supersedes an
older one (``cancelled`` is checked between conversations and every few hundred lines). The
search itself lives in core/search (an FTS5 index derived from the logs, or a scan).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crewagent.core.search import MessageSearch, SearchCancelled
from crewagent.worker.background import Cancelled
from crewagent.worker.values import FilePreview, SearchHit

#: The biggest file a preview tab reads; larger ones offer "Open in system app".
PREVIEW_LIMIT_BYTES = 2 * 1024 * 1024
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})

def search_messages(
    search: MessageSearch, project_id: str, query: str, cancelled: Callable[[], bool]
) -> tuple[SearchHit, ...]:
    """Conversations of ``project_id`` whose messages' readable text contains ``query``
    (case-insensitive), most recently active first, through the project's search index.

    Raises :class:`Cancelled` as soon as ``cancelled()`` is true.
    """
    try:
        return search.search(project_id, query, cancelled)
    except SearchCancelled:
        raise Cancelled from None


def warm_search_index(search: MessageSearch, project_id: str, cancelled: Callable[[], bool]) -> None:
    """Bring a project's search index up to its logs (a background job when the project opens)."""
    try:
        search.warm(project_id, cancelled)
    except SearchCancelled:
        raise Cancelled from None


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
