"""A project's conversation index (index.json) and its recovery from the conversation folders."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from crewagent.core.errors import StoreReadError, StoreWriteError
from crewagent.core.messages import ConversationMeta, utc_now_iso
from crewagent.core.store._fsutil import atomic_write_bytes, atomic_write_json, json_mode_file_bytes, read_json
from crewagent.core.store.log import LEGACY_NAME, LOG_NAME, LoadResult, count_records, load_log

INDEX_NAME = "index.json"
META_NAME = "meta.json"
#: Marks a conversation folder whose deletion has begun; such a folder is never indexed again.
DELETED_MARKER = ".deleted"
RECOVERED_TITLE = "Recovered conversation"
#: During a burst of appends, index.json is rewritten at most this often (seconds); appends
#: further apart than this are not a burst and do not rewrite it (see ConversationIndex).
SAVE_INTERVAL_S = 1.0
#: Index changes staged by appends that are not a burst are saved by the next append after this
#: long (seconds), if no turn's end or listing saved them before: bounds what another process
#: sees late (it counts the rest from the logs, so it never sees wrong counts).
MAX_STAGED_S = 30.0
#: What a conversation id (and so a conversation folder's name) looks like.
CONVERSATION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def is_marked_deleted(folder: Path) -> bool:
    """True when the folder's deletion has begun; an unreadable folder is not (it is reported on use)."""
    try:
        return (folder / DELETED_MARKER).exists()
    except OSError:
        return False


class ConversationIndex:
    """index.json of one project, cached while the file is unchanged on disk.

    The caller holds the project lock for every write. The per-conversation ``meta.json`` copy
    (written on create and on every metadata change, not on appends) lets a damaged index be
    rebuilt with titles and modes intact.

    Appends do not rewrite index.json each time (that would triple the fsyncs of an append):
    they update the cached entry. In a burst (appends less than ``SAVE_INTERVAL_S`` apart) the
    index is saved at most once per ``SAVE_INTERVAL_S``; appends further apart (a chat: one per
    model reply or tool result) leave the save to ``flush`` (a turn's end), a listing, or the
    first append after ``MAX_STAGED_S``: the replace of index.json costs 5-10x a durable append.
    Each entry records ``logBytes``, the log size its ``messageCount`` was counted at, so an
    entry that is behind its log (a crash, another process) is caught up by counting only the
    new lines; the title and every other metadata change are saved at once.
    """

    def __init__(self, conversations_dir: Path, notify: Callable[[str], None] | None = None):
        self.dir = conversations_dir
        #: Told, in one line, what a load had to repair (a rebuilt index, conversations brought back).
        self.notify = notify or (lambda message: None)
        self.path = conversations_dir / INDEX_NAME
        self._path_text = os.fspath(self.path)  # stat'ed on every append: no pathlib conversion each time
        self._cache_key: tuple[int, int, int] | None = None
        self._cache: list[ConversationMeta] = []
        self._positions: dict[str, int] = {}  # a hint for position(): checked on every use
        self.recovered_from: Path | None = None
        self.dirty = False
        self._last_save = 0.0
        self._last_stage = float("-inf")
        self._staged_since = 0.0  # when the oldest change not yet saved was staged
        #: Conversation folders marked deleted whose removal a crash interrupted (found by a rebuild).
        self.pending_deletions: list[str] = []

    def load(self, *, copy: bool = True) -> list[ConversationMeta]:
        """The index; raises StoreReadError when the conversations folder itself cannot be read.

        ``copy=False`` (the caller holds the project lock and passes the list back to ``stage``
        or ``save``): while index.json is unchanged, the cached entries themselves, not copies.
        """
        try:
            stat = os.stat(self._path_text)
        except FileNotFoundError:
            try:
                if self.dir.is_dir() and any(self._conversation_dirs()):
                    return self._rebuild(keep_aside=False)
            except OSError as exc:
                raise StoreReadError.from_os_error(self.dir, exc) from exc
            return []
        except OSError as exc:  # the conversations folder is not readable: nothing can be listed
            raise StoreReadError.from_os_error(self.dir, exc) from exc
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if key == self._cache_key:
            return self._cache if not copy else [meta.model_copy() for meta in self._cache]
        try:
            data = read_json(self.path)
            if not isinstance(data, list):
                raise ValueError("index.json is not a list")
            metas = [ConversationMeta.model_validate(item) for item in data]
        except (OSError, ValueError, ValidationError) as exc:
            # The index is a cache of the folders: even an unreadable one is rebuilt (its copy kept aside).
            reason = str(StoreReadError.from_os_error(self.path, exc)) if isinstance(exc, OSError) else ""
            try:
                return self._rebuild(keep_aside=True, reason=reason)
            except OSError as rebuild_exc:
                raise StoreReadError.from_os_error(self.dir, rebuild_exc) from rebuild_exc
        self._cache_key, self._cache = key, metas
        missing = self._unindexed_dirs(metas)
        if missing:
            metas = self._bring_back(metas, missing)
        return [meta.model_copy() for meta in metas]

    def position(self, metas: list[ConversationMeta], conversation_id: str) -> int | None:
        """Where ``conversation_id`` is in ``metas`` (None when it is not there), without a scan
        of the project's entries on every append: positions are remembered, and a remembered
        one is used only if the entry there still has that id."""
        found = self._positions.get(conversation_id)
        if found is not None and found < len(metas) and metas[found].id == conversation_id:
            return found
        positions: dict[str, int] = {}
        for number, meta in enumerate(metas):
            positions.setdefault(meta.id, number)  # the first, as a scan would find (a hand-edited index)
        self._positions = positions
        return positions.get(conversation_id)

    def cached_entry(self, conversation_id: str) -> ConversationMeta | None:
        """The cached entry of ``conversation_id`` itself, while index.json is unchanged on disk
        and the entry is where it was last found: what ``load(copy=False)`` and ``position`` give
        then, in one stat and a few lookups (an append's short path; the caller holds the project
        lock and passes the change to ``stage_cached``). None otherwise: the caller takes the long
        way (``load``, which reads the file again, and ``position``)."""
        try:
            stat = os.stat(self._path_text)
        except OSError:
            return None
        if (stat.st_ino, stat.st_mtime_ns, stat.st_size) != self._cache_key:
            return None
        found = self._positions.get(conversation_id)
        cache = self._cache
        if found is None or found >= len(cache):
            return None
        meta = cache[found]
        return meta if meta.id == conversation_id else None

    def _unindexed_dirs(self, metas: list[ConversationMeta]) -> list[Path]:
        """Conversation folders the index does not list (listing names is cheap; only those are stat'ed)."""
        known = {meta.id for meta in metas}
        try:
            names = sorted(os.listdir(self.dir))
        except OSError:
            return []
        folders = [self.dir / name for name in names if name not in known and CONVERSATION_ID.fullmatch(name)]
        folders = [folder for folder in folders if folder.is_dir()]
        self.pending_deletions.extend(
            folder.name for folder in folders if is_marked_deleted(folder) and folder.name not in self.pending_deletions
        )
        return [folder for folder in folders if not is_marked_deleted(folder)]

    def _bring_back(self, metas: list[ConversationMeta], folders: list[Path]) -> list[ConversationMeta]:
        """Add conversations that are on disk but missing from a stale index (from their meta.json and log)."""
        recovered = [meta for meta in (self._recover_meta(folder) for folder in folders) if meta is not None]
        if not recovered:
            return metas
        metas = [*metas, *recovered]
        try:
            self.save(metas)
        except StoreWriteError:
            self._cache = [meta.model_copy() for meta in metas]  # listed now; saved by a later write
            self.dirty = True
        titles = ", ".join(f"{meta.id} ({meta.title})" for meta in recovered[:5])
        more = "" if len(recovered) <= 5 else f" and {len(recovered) - 5} more"
        self.notify(
            f"{len(recovered)} conversation(s) on disk were missing from {self.path} and were brought back: {titles}{more}"
        )
        return metas

    def save(self, metas: list[ConversationMeta]) -> None:
        atomic_write_bytes(self.path, json_mode_file_bytes([meta.model_dump(mode="json", exclude_none=True) for meta in metas]))
        stat = self.path.stat()
        self._cache_key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        self._cache = [meta.model_copy() for meta in metas]
        self.dirty = False
        self._last_save = time.monotonic()

    def stage(self, metas: list[ConversationMeta]) -> None:
        """Keep ``metas`` as the current index in memory; index.json is written later (see the class)."""
        if metas is not self._cache:
            self._cache = [meta.model_copy() for meta in metas]
        now = time.monotonic()
        in_burst = now - self._last_stage < SAVE_INTERVAL_S
        self._last_stage = now
        if not self.dirty:
            self.dirty = True
            self._staged_since = now
        if (in_burst and now - self._last_save >= SAVE_INTERVAL_S) or now - self._staged_since >= MAX_STAGED_S:
            self.save(metas)

    def stage_cached(self) -> None:
        """``stage`` of the cached entries, changed in place (see ``cached_entry``)."""
        self.stage(self._cache)

    def flush(self) -> None:
        if self.dirty:
            self.save(self._cache)

    def catch_up(self, meta: ConversationMeta, log_path: Path | None = None, *, size: int | None = None) -> bool:
        """Bring one entry's count and activity time up to its log; True when it changed.

        ``size``: count up to this log size, already known to the caller (an append knows the size
        it wrote at), without a stat; the caller sets the activity time itself then.
        """
        log_path = log_path or self.dir / meta.id / LOG_NAME
        if size is not None:
            return self._count_up_to(meta, log_path, size)
        try:
            stat = log_path.stat()
        except OSError:
            return False  # missing or unreadable: the entry stays as it is; opening it reports why
        if not self._count_up_to(meta, log_path, stat.st_size):
            return False
        modified = datetime.fromtimestamp(stat.st_mtime, timezone.utc).isoformat(timespec="milliseconds")
        meta.lastActiveAt = max(meta.lastActiveAt, modified.replace("+00:00", "Z"))
        return True

    @staticmethod
    def _count_up_to(meta: ConversationMeta, log_path: Path, size: int) -> bool:
        """Count the log's records up to ``size`` into the entry (only the new ones when it can)."""
        recorded = meta.logBytes
        if recorded == size:
            return False
        try:
            if isinstance(recorded, int) and 0 <= recorded < size:
                meta.messageCount += count_records(log_path, recorded, size)
            else:
                meta.messageCount = count_records(log_path, 0, size)
        except OSError:
            return False
        meta.logBytes = size
        return True

    def write_meta(self, meta: ConversationMeta) -> None:
        atomic_write_json(self.dir / meta.id / META_NAME, meta.model_dump(mode="json", exclude_none=True))

    def _conversation_dirs(self) -> list[Path]:
        return [
            entry
            for entry in sorted(self.dir.iterdir())
            if entry.is_dir() and not entry.name.startswith(".") and not is_marked_deleted(entry)
        ]

    def _rebuild(self, *, keep_aside: bool, reason: str = "") -> list[ConversationMeta]:
        """Recreate index.json from the conversation folders; the damaged original is kept."""
        if keep_aside and self.path.exists():
            stamp = utc_now_iso().replace(":", "").replace(".", "")
            aside = self.path.with_name(f"{INDEX_NAME}.corrupt-{stamp}")
            try:
                os.replace(self.path, aside)
            except OSError as exc:
                raise StoreReadError.from_os_error(self.path, exc) from exc
            self.recovered_from = aside
            what = f"{reason.rstrip('.')}; it" if reason else f"{self.path} was damaged and"
            self.notify(f"{what} was rebuilt from the conversation folders; the old copy is {aside}")
        elif not keep_aside:
            self.notify(f"{self.path} was missing and was rebuilt from the conversation folders")
        self.pending_deletions = [
            entry.name for entry in self.dir.iterdir() if entry.is_dir() and is_marked_deleted(entry)
        ]
        recovered = [self._recover_meta(folder) for folder in self._conversation_dirs()]
        metas = [meta for meta in recovered if meta is not None]
        metas.sort(key=lambda meta: meta.lastActiveAt, reverse=True)
        self.save(metas)
        return [meta.model_copy() for meta in metas]

    def _recover_meta(self, folder: Path) -> ConversationMeta | None:
        log_path = folder / LOG_NAME
        try:
            has_log = log_path.exists() or (folder / LEGACY_NAME).exists()
        except OSError:
            has_log = True  # an unreadable folder is listed; opening it says why it cannot be read
        meta: ConversationMeta | None = None
        try:
            meta = ConversationMeta.model_validate(read_json(folder / META_NAME))
        except (OSError, ValueError, ValidationError):
            if not has_log:
                return None
        try:
            loaded = load_log(log_path)
            log_bytes = log_path.stat().st_size if log_path.exists() else 0
        except OSError:
            loaded, log_bytes = LoadResult([]), 0
        first_time = loaded.messages[0].createdAt if loaded.messages else utc_now_iso()
        last_time = loaded.messages[-1].createdAt if loaded.messages else first_time
        if meta is None:
            first_user = next((m.text for m in loaded.messages if m.role == "user" and m.text.strip()), "")
            meta = ConversationMeta(
                id=folder.name,
                title=title_from_text(first_user) or RECOVERED_TITLE,
                createdAt=first_time,
                lastActiveAt=last_time,
            )
        meta.id = folder.name
        meta.messageCount = len(loaded.messages)
        meta.logBytes = log_bytes
        if loaded.messages:
            meta.lastActiveAt = max(meta.lastActiveAt, last_time)
        return meta


#: The fields of an entry every append sets.
_APPEND_FIELDS = ("messageCount", "logBytes", "lastActiveAt")


def record_append(meta: ConversationMeta, log_bytes: int, now: str) -> None:
    """Count one more message in ``meta``, whose log now ends at ``log_bytes``, active at ``now``.

    Written into the model's fields directly: this is what pydantic's ``__setattr__`` does for a
    plain field of a model that does not validate assignments (ConversationMeta does not), less
    its dispatch, which costs about 1 µs a field, and every append sets these three.
    """
    fields = meta.__dict__
    fields["messageCount"] += 1
    fields["logBytes"] = log_bytes
    fields["lastActiveAt"] = now
    meta.__pydantic_fields_set__.update(_APPEND_FIELDS)


def title_from_text(text: str, limit: int = 60) -> str:
    """A conversation title from the first words of a message."""
    single = " ".join(text.split())
    return single if len(single) <= limit else single[: limit - 1].rstrip() + "…"
