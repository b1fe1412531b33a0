"""Message search over a store's projects: through each project's index, or by scanning the logs."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

from crewagent.core import paths
from crewagent.core.messages import ConversationMeta
from crewagent.core.search.hits import IsCancelled, LogMatches, SearchHit
from crewagent.core.search.index import Coverage, IndexDamaged, SearchIndex, fts5_available
from crewagent.core.search.scan import scan_conversations, scan_log
from crewagent.core.search.text import needle_of
from crewagent.core.store import RuntimeStore
from crewagent.core.store.index import CONVERSATION_ID, INDEX_NAME
from crewagent.core.store.log import LOG_NAME

log = logging.getLogger(__name__)

#: A search waits this long for an index update another job is running (the first build of a
#: large project), then scans the logs instead of waiting for it.
BUSY_WAIT_S = 0.25


def _never() -> bool:
    return False


class MessageSearch:
    """Finds the conversations of a project whose messages contain a text (see search/index.py).

    The answer is always the one a scan of the logs gives; the index only makes it fast. Without
    FTS5 (an SQLite built without it), or when the index cannot be used, the logs are scanned and
    a notice is logged once.
    """

    def __init__(self, store: RuntimeStore, *, use_index: bool = True):
        self._store = store
        self._indexes: dict[str, SearchIndex] = {}
        self._listed: dict[str, tuple[tuple[int, int, int], list[ConversationMeta], list[tuple[str, str]]]] = {}
        self._guard = threading.Lock()
        self._warned = False
        self.use_index = use_index and fts5_available()
        if use_index and not self.use_index:
            self._notice("this Python's SQLite has no FTS5 trigram tokenizer")

    def _notice(self, reason: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("Message search scans the conversation logs: %s.", reason)

    def _listed_now(self, project_id: str) -> tuple[list[ConversationMeta], list[tuple[str, str]]]:
        """The project's conversations and their logs: the store's list, listed again only when
        its index.json changed.

        Creating or deleting a conversation rewrites index.json (a new file), so the set of
        conversations is never stale; appends only stage it, and their order here may lag behind
        (nothing shows search hits in this order: the list orders them). Listing costs more than
        the rest of an indexed search (every log is checked twice, by the store and by the index).
        """
        runtime = paths.project_runtime_dir(self._store.data_dir, project_id)
        try:
            info = os.stat(paths.conversations_dir(runtime) / INDEX_NAME)
            key: tuple[int, int, int] | None = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            key = None  # missing or unreadable: the store rebuilds or reports it
        with self._guard:
            cached = self._listed.get(project_id)
        if key is not None and cached is not None and cached[0] == key:
            return cached[1], cached[2]
        metas = self._store.list_conversations(project_id)  # key taken before: a change meanwhile lists again
        logs = self._logs(project_id, metas)
        if key is not None:
            with self._guard:
                self._listed[project_id] = (key, metas, logs)
        return metas, logs

    def index_of(self, project_id: str) -> SearchIndex:
        with self._guard:
            index = self._indexes.get(project_id)
            if index is None:
                runtime = paths.project_runtime_dir(self._store.data_dir, project_id)
                index = self._indexes[project_id] = SearchIndex(paths.search_index_file(runtime))
            return index

    def close(self) -> None:
        with self._guard:
            indexes, self._indexes = list(self._indexes.values()), {}
        for index in indexes:
            with index.lock:
                index.close()

    def warm(self, project_id: str, cancelled: IsCancelled = _never) -> None:
        """Bring the project's index up to its logs now (off the GUI thread: when a project opens)."""
        if not self.use_index:
            return
        metas = self._store.list_conversations(project_id)
        index = self.index_of(project_id)
        with index.lock:
            self._update(index, self._logs(project_id, metas), cancelled)

    def search(self, project_id: str, query: str, cancelled: IsCancelled = _never) -> tuple[SearchHit, ...]:
        """Conversations of ``project_id`` whose messages' readable text contains ``query``
        (case-insensitive), most recently active first. Raises ``SearchCancelled`` when superseded."""
        needle = needle_of(query)
        if not needle:
            return ()
        metas, logs = self._listed_now(project_id)
        if self.use_index:
            answer = self._from_index(project_id, logs, needle, cancelled)
            if answer is not None:
                return self._hits(metas, logs, needle, *answer, cancelled)
        return scan_conversations(dict(logs).__getitem__, metas, needle, cancelled)

    def _logs(self, project_id: str, metas: list[ConversationMeta]) -> list[tuple[str, str]]:
        if not metas:
            return []
        # One validated path, then plain joins: a thousand Path objects cost more than the stats.
        folder = str(self._store.log_path(project_id, metas[0].id).parent.parent)
        return [(meta.id, os.path.join(folder, meta.id, LOG_NAME)) if CONVERSATION_ID.fullmatch(meta.id)
                else (meta.id, str(self._store.log_path(project_id, meta.id))) for meta in metas]

    def _from_index(
        self, project_id: str, logs: list[tuple[str, str]], needle: str, cancelled: IsCancelled
    ) -> tuple[dict[str, Coverage], dict[int, LogMatches]] | None:
        """The index's answer, after bringing it up to the logs; None when it cannot answer now.

        A damaged index is deleted and rebuilt from the logs once; if that fails too, or the
        index is busy with another job, the caller scans the logs.
        """
        index = self.index_of(project_id)
        if not index.lock.acquire(timeout=BUSY_WAIT_S):
            return None  # being built by another job: this query scans
        try:
            for attempt in (1, 2):
                try:
                    coverage = index.update(logs, cancelled)
                    return coverage, index.query(needle)
                except IndexDamaged as exc:
                    index.discard(str(exc))
                    if attempt == 2:
                        self._notice(f"the index {index.path} could not be rebuilt: {exc}")
                except (sqlite3.Error, OSError) as exc:
                    self._notice(f"the index {index.path} failed: {exc}")
                    return None
            return None
        finally:
            index.lock.release()

    def _update(self, index: SearchIndex, logs: list[tuple[str, str]], cancelled: IsCancelled) -> None:
        """Update (a damaged index is rebuilt once); failures leave the scan to answer."""
        for attempt in (1, 2):
            try:
                index.update(logs, cancelled)
                return
            except IndexDamaged as exc:
                index.discard(str(exc))
                if attempt == 2:
                    self._notice(f"the index {index.path} could not be rebuilt: {exc}")
            except (sqlite3.Error, OSError) as exc:
                self._notice(f"the index {index.path} cannot be updated: {exc}")
                return

    @staticmethod
    def _hits(
        metas: list[ConversationMeta],
        logs: list[tuple[str, str]],
        needle: str,
        coverage: dict[str, Coverage],
        found: dict[int, LogMatches],
        cancelled: IsCancelled,
    ) -> tuple[SearchHit, ...]:
        hits: list[SearchHit] = []
        for meta, (_id, path) in zip(metas, logs):
            covered = coverage[meta.id]
            matches = found.get(covered.conv)
            if matches is None:
                if covered.size == covered.indexed:
                    continue
                matches = LogMatches()
            if covered.size > covered.indexed:  # the newest bytes, not indexed yet: read from the log
                try:
                    matches = matches.then(scan_log(path, needle, cancelled, start=covered.indexed, end=covered.size))
                except FileNotFoundError:
                    pass
            if matches.count:
                hits.append(SearchHit(meta.id, matches.snippet, matches.count, matches.message_id))
        return tuple(hits)
