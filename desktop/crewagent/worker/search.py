"""Full-text search over a project's conversation logs, and reading project files for preview tabs.

Both run in the worker's background pool, off the GUI thread, and a newer search supersedes an
older one (``cancelled`` is checked between conversations and every few hundred lines). The
search itself lives in core/search (an FTS5 index derived from the logs, or a scan).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewagent.core import texts
from crewagent.core.search import MessageSearch, SearchCancelled
from crewagent.core.store import RuntimeStore
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
            return FilePreview(path, "error", size, message=texts.PATH_NOT_REGULAR.format(path=file.name))
        if size > limit:
            return FilePreview(
                path, "too_large", size, message=f"{file.name} is too large to preview ({size / 1_048_576:.1f} MB)."
            )
        data = file.read_bytes()
    except OSError as exc:
        return FilePreview(path, "error", message=texts.PATH_UNREADABLE.format(path=file.name, reason=exc.strerror or exc))
    if b"\0" in data[:8192]:
        return FilePreview(path, "binary", size, message=f"{file.name} is not a text file.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FilePreview(path, "binary", size, message=f"{file.name} is not UTF-8 text.")
    kind = "markdown" if file.suffix.lower() in MARKDOWN_SUFFIXES else "text"
    return FilePreview(path, kind, size, text=text)


class SearchRequests:
    """The Worker's message search: one MessageSearch over the store (it keeps each project's index
    open), its index warmed when a project opens, and only the latest query answered.

    Runs on the worker thread; the searches themselves run in the background pool (``submit``).
    """

    def __init__(
        self,
        store: Callable[[], RuntimeStore],
        lock: threading.Lock,
        submit: Callable[[str, Callable[[], Any], Callable[[Any], None]], None],
    ) -> None:
        self._store = store
        self._store_lock = lock
        self._submit = submit
        self._search_instance: MessageSearch | None = None
        self._search_generation = 0
        self._search_project = ""  # the project whose search index is being warmed (issue 18)

    @property
    def _search(self) -> MessageSearch:
        """Message search over the store (it keeps each project's search index open)."""
        store = self._store()
        with self._store_lock:
            if self._search_instance is None:
                self._search_instance = MessageSearch(store)
            return self._search_instance

    def warm(self, project_id: str) -> None:
        """Bring the project's search index up to its logs in the background (the first build of a
        large project takes a while; searches meanwhile scan the logs). Opening another project stops it."""
        self._search_project = project_id
        search = self._search

        def superseded() -> bool:
            return self._search_project != project_id

        self._submit("warm_search_index", lambda: warm_search_index(search, project_id, superseded), lambda _none: None)

    def search(self, project_id: str, query: str, emit: Callable[[str, str, object], None]) -> None:
        """Search the message text of a project's conversations; a newer search cancels this one."""
        self._search_generation += 1
        generation = self._search_generation
        if not query.strip():
            emit(project_id, query, ())
            return
        search = self._search

        def superseded() -> bool:
            return generation != self._search_generation

        def done(hits: object) -> None:
            if not superseded():
                emit(project_id, query, hits)

        self._submit("search_conversations", lambda: search_messages(search, project_id, query, superseded), done)

    def stop(self) -> None:
        """A running search or index build stops at its next check."""
        self._search_generation += 1
        self._search_project = ""

    def close(self) -> None:
        if self._search_instance is not None:
            self._search_instance.close()
