"""A derived full-text index of a project's conversation logs (SQLite FTS5, trigram tokenizer).

The logs stay the source of truth; this file only makes search fast, and is never trusted on its
own word:

- every search first compares each log's inode, size and mtime with what was indexed; a log
  that grew is indexed from where the index stopped (after checking that the bytes before that
  point are still the ones indexed: logs are append-only), any other change re-indexes that log
  from the start, and a conversation that is gone leaves the index;
- whatever of a log is not indexed yet (a line still being written) is read from the log itself;
- a missing, unreadable, damaged (``PRAGMA quick_check``) or older-schema index is deleted and
  rebuilt from the logs, never repaired or read.

Matching is exactly the scan's (search/text.py): the index holds each message's readable text
case-folded, and a query is one FTS5 phrase of the folded query, quoted, so that ``"``, ``*``,
``NEAR`` or ``-`` are text, never query syntax. The trigram tokenizer needs no word boundaries
(Chinese and Japanese text matches like any other); queries shorter than three characters,
which trigrams cannot answer, are matched with ``instr`` over the stored folded text.

A row id is ``(conversation number << 40) | sequence``, so counting the matches of each
conversation needs no join, and the smallest row id of a conversation is its first match.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import BinaryIO

from crewagent.core.jsonparse import parse_json
from crewagent.core.search.hits import IsCancelled, LogMatches, SearchCancelled
from crewagent.core.search.text import fold, readable_text, snippet

log = logging.getLogger(__name__)

#: Bumped when the tables change: an index of another version is rebuilt.
SCHEMA_VERSION = 1
_SHIFT = 40
#: Bytes before the indexed end that must be unchanged for a grown log to be indexed incrementally.
_TAIL = 1024
#: Bytes of a log indexed per transaction (a long first build keeps its progress when cancelled).
_CHUNK = 8 << 20
_CHECK_EVERY = 512
#: FTS5's merge settings as SQLite ships them. A build of more than a chunk holds merges off and
#: merges once at its end (``_hold_merges``); these are put back afterwards, and on the next open
#: if a process died in the middle.
_MERGES = (("automerge", 4), ("crisismerge", 16))
_HELD = (("automerge", 0), ("crisismerge", 2000))  # FTS5 caps crisismerge below 2000 segments a level
#: SQLite result codes that mean the file is not a usable index (it is then rebuilt).
_DAMAGED_CODES = frozenset({1, 11, 17, 24, 26})  # ERROR (no such table ...), CORRUPT, SCHEMA, FORMAT, NOTADB

_SCHEMA = f"""
CREATE TABLE logs(
    conv INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL UNIQUE,
    inode INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    indexed INTEGER NOT NULL,
    tail BLOB NOT NULL,
    next_seq INTEGER NOT NULL
);
CREATE TABLE docs(id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, text TEXT NOT NULL, folded TEXT NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(folded, content='', tokenize='trigram case_sensitive 1');
PRAGMA user_version = {SCHEMA_VERSION};
"""


class IndexDamaged(Exception):
    """The index file cannot be trusted (damaged, foreign, another schema): it is to be rebuilt."""


@cache
def fts5_available() -> bool:
    """True when this Python's SQLite has FTS5 with the trigram tokenizer (SQLite 3.34+)."""
    try:
        with sqlite3.connect(":memory:") as probe:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        return True
    except sqlite3.Error:
        return False


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
    return (code & 0xFF) in _DAMAGED_CODES


def files_of(path: Path) -> tuple[Path, ...]:
    """The index file and SQLite's side files (write-ahead log, shared memory)."""
    return (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a log the index answers for: bytes ``[0, indexed)``; ``[indexed, size)`` is read
    from the log itself at query time (a line still being written)."""

    conv: int
    indexed: int
    size: int


@dataclass(frozen=True)
class _Indexed:
    """A row of ``logs``: what was indexed of one log, and the log's stat when it was."""

    conv: int
    inode: int
    size: int
    mtime_ns: int
    indexed: int
    tail: bytes
    next_seq: int

    @cached_property
    def stat(self) -> tuple[int, int, int]:
        return (self.inode, self.size, self.mtime_ns)

    @cached_property
    def coverage(self) -> Coverage:
        return Coverage(self.conv, self.indexed, self.size)


class SearchIndex:
    """The index file of one project (see the module docstring). Thread-safe; one connection."""

    def __init__(self, path: Path):
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._known: dict[str, _Indexed] | None = None
        self._version = -1
        self._merges_held = False
        #: Held while the index is brought up to date and queried (callers may wait on it).
        self.lock = threading.Lock()

    # -- opening, damage -------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        except sqlite3.Error as exc:
            raise IndexDamaged(str(exc)) from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version == 0 and tables == 0:
                conn.executescript(_SCHEMA)
            elif version != SCHEMA_VERSION:
                raise IndexDamaged(f"schema version {version}, this build uses {SCHEMA_VERSION}")
            else:
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise IndexDamaged(f"quick_check: {check}")
                held = conn.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchone()
                if held is not None and held[0] == 0:  # a build that held merges off never ended
                    self._set_merges(conn, _MERGES)
        except (sqlite3.Error, IndexDamaged) as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error) and not _is_damage(exc):
                raise
            raise IndexDamaged(str(exc)) from exc
        self._conn = conn
        return conn

    def close(self) -> None:
        self._known = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def discard(self, reason: str) -> None:
        """Forget the file (it is rebuilt from the logs by the next update)."""
        log.warning("The search index %s cannot be trusted (%s); it is rebuilt from the conversation logs.", self.path, reason)
        self.close()
        for file in files_of(self.path):
            try:
                file.unlink()
            except FileNotFoundError:
                pass

    # -- keeping up with the logs ----------------------------------------------------------------

    def update(self, logs: list[tuple[str, str]], cancelled: IsCancelled) -> dict[str, Coverage]:
        """Bring the index up to the logs ``(conversation id, log path)``; returns what it covers.

        Conversations not in ``logs`` leave the index. Raises :class:`SearchCancelled` (progress
        is kept), :class:`IndexDamaged`, or ``sqlite3.Error`` for anything else (disk full ...).
        """
        try:
            return self._update(logs, cancelled)
        except sqlite3.Error as exc:
            if _is_damage(exc):
                raise IndexDamaged(str(exc)) from exc
            raise

    def _rows(self, db: sqlite3.Connection) -> dict[str, _Indexed]:
        """What the index holds per log, read again only when another connection wrote the file
        (``PRAGMA data_version``) or this one changed it."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if self._known is None or version != self._version:
            self._known = {
                row[0]: _Indexed(*row[1:])
                for row in db.execute("SELECT conversation_id, conv, inode, size, mtime_ns, indexed, tail, next_seq FROM logs")
            }
            self._version = version
        return self._known

    def _update(self, logs: list[tuple[str, str]], cancelled: IsCancelled) -> dict[str, Coverage]:
        db = self._db()
        known = self._rows(db)
        changed = False
        done = False
        try:
            gone = known.keys() - {conversation_id for conversation_id, _path in logs}
            for conversation_id in gone:
                changed = True
                self._forget(db, known[conversation_id].conv, conversation_id)
            coverage: dict[str, Coverage] = {}
            for number, (conversation_id, path) in enumerate(logs):
                if number % 64 == 0 and cancelled():
                    raise SearchCancelled
                row = known.get(conversation_id)
                try:
                    info = os.stat(path)
                    stat = (info.st_ino, info.st_size, info.st_mtime_ns)
                except FileNotFoundError:
                    stat = (0, 0, 0)
                if row is not None and row.stat == stat:
                    coverage[conversation_id] = row.coverage
                    continue
                changed = True
                coverage[conversation_id] = self._follow(db, conversation_id, path, row, stat, cancelled)
            done = True
            return coverage
        finally:
            if changed:
                self._known = None
            if self._merges_held:
                self._release_merges(db, merge=done)

    def _follow(
        self, db: sqlite3.Connection, conversation_id: str, path: str, row: _Indexed | None, stat: tuple[int, int, int], cancelled: IsCancelled
    ) -> Coverage:
        """Index what changed in one log since it was indexed (see the module docstring)."""
        inode, size, _mtime_ns = stat
        start, seq = 0, 0
        if row is not None and row.inode == inode and size > row.size and self._tail_matches(path, row):
            start, seq = row.indexed, row.next_seq
            if row.mtime_ns == 0 and not self._merges_held:  # the rest of a long build a cancel stopped:
                self._hold_merges(db)  # its segments are not merged yet either; it ends with the one merge
        elif row is not None:
            self._forget(db, row.conv, conversation_id)
            row = None
        conv = row.conv if row is not None else self._new_conv(db)
        return self._index_from(db, conversation_id, conv, path, start, seq, stat, cancelled)

    @staticmethod
    def _tail_matches(path: str, row: _Indexed) -> bool:
        """The bytes just before the indexed end are still the ones indexed (the log only grew)."""
        try:
            with open(path, "rb") as handle:
                handle.seek(row.indexed - len(row.tail))
                return handle.read(len(row.tail)) == row.tail
        except OSError:
            return False

    @staticmethod
    def _new_conv(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT coalesce(max(conv), 0) + 1 FROM logs").fetchone()[0])

    def _forget(self, db: sqlite3.Connection, conv: int, conversation_id: str) -> None:
        low, high = conv << _SHIFT, ((conv + 1) << _SHIFT) - 1
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute("SELECT id, folded FROM docs WHERE id BETWEEN ? AND ?", (low, high)).fetchall()
            db.executemany("INSERT INTO fts(fts, rowid, folded) VALUES('delete', ?, ?)", rows)
            db.execute("DELETE FROM docs WHERE id BETWEEN ? AND ?", (low, high))
            db.execute("DELETE FROM logs WHERE conversation_id = ?", (conversation_id,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _index_from(
        self,
        db: sqlite3.Connection,
        conversation_id: str,
        conv: int,
        path: str,
        start: int,
        seq: int,
        stat: tuple[int, int, int],
        cancelled: IsCancelled,
    ) -> Coverage:
        """Index the whole lines of ``path`` from ``start`` to its size when it was looked at."""
        inode, size, mtime_ns = stat
        position = start
        if size - start > _CHUNK and not self._merges_held:
            self._hold_merges(db)
        handle: BinaryIO | None
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            handle = None
        try:
            while True:
                batch: list[tuple[int, str, str, str]] = []
                chunk_end = position
                if handle is not None and position < size:
                    handle.seek(position)
                    data = handle.read(min(_CHUNK, size - position))
                    cut = data.rfind(b"\n")
                    if cut < 0 and len(data) == _CHUNK:  # one line longer than a chunk
                        data += handle.readline(size - position - len(data))
                        cut = data.rfind(b"\n")
                    if cut >= 0:
                        data = data[: cut + 1]
                        chunk_end = position + len(data)
                        for number, line in enumerate(data.split(b"\n")):
                            if number % _CHECK_EVERY == 0 and cancelled():
                                raise SearchCancelled
                            text, message_id = _readable(line)
                            if text:
                                batch.append(((conv << _SHIFT) | seq, message_id, text, fold(text)))
                                seq += 1
                last = chunk_end >= size or chunk_end == position
                tail = _read_tail(handle, chunk_end)
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany("INSERT INTO docs(id, message_id, text, folded) VALUES(?, ?, ?, ?)", batch)
                    db.executemany("INSERT INTO fts(rowid, folded) VALUES(?, ?)", ((row[0], row[3]) for row in batch))
                    # Until the last chunk is in, the recorded size is the chunk's end: a cancelled
                    # build is then seen as "grown" and carries on from there next time.
                    db.execute(
                        "INSERT OR REPLACE INTO logs(conv, conversation_id, inode, size, mtime_ns, indexed, tail, next_seq)"
                        " VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                        (conv, conversation_id, inode, size if last else chunk_end, mtime_ns if last else 0, chunk_end, tail, seq),
                    )
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                position = chunk_end
                if last:
                    return Coverage(conv, chunk_end, size)
        finally:
            if handle is not None:
                handle.close()

    # -- FTS5's merges during a long build -------------------------------------------------------

    @staticmethod
    def _set_merges(db: sqlite3.Connection, settings: tuple[tuple[str, int], ...]) -> None:
        for name, value in settings:
            db.execute("INSERT INTO fts(fts, rank) VALUES(?, ?)", (name, value))

    def _hold_merges(self, db: sqlite3.Connection) -> None:
        """No segment merges until ``_release_merges``: FTS5 writes each transaction's terms as a
        segment and merges 4 of a level into one of the next, so over a long build each term is
        rewritten once per level and the build costs n log n (16 CPU-s at 100,000 messages, 15x
        a decade: docs/benchmarks.md "Session 11: a robust scaling verdict"). Held off, the
        segments are merged once, all together, at the end."""
        self._set_merges(db, _HELD)
        self._merges_held = True

    def _release_merges(self, db: sqlite3.Connection, *, merge: bool) -> None:
        """Merges back on; ``merge``: the build is complete, merge its segments into one now (a
        cancelled build leaves them to the next update, which holds merges again and ends it)."""
        self._merges_held = False
        self._set_merges(db, _MERGES)
        if merge:
            db.execute("INSERT INTO fts(fts) VALUES('optimize')")

    # -- answering -------------------------------------------------------------------------------

    def query(self, needle: str) -> dict[int, LogMatches]:
        """Matches per conversation number, for a folded needle (see ``text.needle_of``)."""
        if not needle:
            return {}
        try:
            return self._query(needle)
        except sqlite3.Error as exc:
            if _is_damage(exc):
                raise IndexDamaged(str(exc)) from exc
            raise

    def _query(self, needle: str) -> dict[int, LogMatches]:
        db = self._db()
        if len(needle) >= 3:
            phrase = '"' + needle.replace('"', '""') + '"'
            groups = db.execute(
                f"SELECT rowid >> {_SHIFT}, count(*), min(rowid) FROM fts WHERE fts MATCH ? GROUP BY 1", (phrase,)
            ).fetchall()
        else:
            groups = db.execute(
                f"SELECT id >> {_SHIFT}, count(*), min(id) FROM docs WHERE instr(folded, ?) > 0 GROUP BY 1", (needle,)
            ).fetchall()
        found: dict[int, LogMatches] = {}
        for conv, count, first in groups:
            row = db.execute("SELECT message_id, text FROM docs WHERE id = ?", (first,)).fetchone()
            if row is None:
                raise IndexDamaged(f"row {first} is in the full-text index but not in its documents")
            found[int(conv)] = LogMatches(int(count), snippet(row[1], needle), row[0])
        return found


def _readable(line: bytes) -> tuple[str, str]:
    """(readable text, message id) of one raw log line; ("", "") for a blank or damaged one."""
    if not line.strip():
        return "", ""
    try:
        record = parse_json(line.decode("utf-8", errors="replace"))
    except ValueError:
        return "", ""
    text = readable_text(record)
    return text, (str(record.get("id") or "") if text else "")


def _read_tail(handle: BinaryIO | None, end: int) -> bytes:
    """The bytes just before ``end`` (checked by the next update before it trusts what precedes them)."""
    if end <= 0 or handle is None:
        return b""
    start = max(0, end - _TAIL)
    handle.seek(start)
    return handle.read(end - start)
