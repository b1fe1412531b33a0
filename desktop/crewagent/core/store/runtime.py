"""RuntimeStore: projects, conversations and their append-only logs under one data folder."""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from crewagent.core import paths, texts
from crewagent.core.errors import (
    ConversationNotFound,
    NotAProjectError,
    ProjectError,
    ProjectFolderMissing,
    SetupError,
    StoreReadError,
    StoreWriteError,
)
from crewagent.core.messages import (
    ConversationMessage,
    ConversationMeta,
    Mode,
    new_conversation_id,
    utc_now_iso,
)
from crewagent.core.store import checkpoint, offload
from crewagent.core.store._fsutil import append_records, append_records_span
from crewagent.core.store._lock import LOCK_TIMEOUT_S, ProcessLock, Timeout, hold_error
from crewagent.core.store.index import (
    CONVERSATION_ID,
    DELETED_MARKER,
    ConversationIndex,
    is_marked_deleted,
    record_append,
    title_from_text,
)
from crewagent.core.store.log import (
    LEGACY_NAME,
    LOG_NAME,
    LoadResult,
    append_message_span,
    encode_message,
    load_log,
    load_tail,
    migrate_legacy,
    write_quarantine,
)
from crewagent.core.store.projects import (
    ProjectFile,
    ProjectInfo,
    RecentProject,
    load_recent,
    read_project_file,
    save_recent,
    touch_recent,
    write_project_file,
)
from crewagent.core.store.sidechain import Sidechains

DEFAULT_TITLE = "New conversation"
log = logging.getLogger(__name__)


class _ConversationFiles:
    """The files of one conversation folder an append looks at, joined once (the two it opens or
    stats every time as text: a Path converts itself to text on each call), and where this
    process's last append to the log ended."""

    __slots__ = ("deleted", "folder", "index", "lock", "log", "log_end")

    def __init__(self, folder: Path, log: str, deleted: str) -> None:
        self.folder = folder
        self.log = log
        self.deleted = deleted
        #: The log's size after this process's last append (a newline), -1 before the first one.
        self.log_end = -1
        #: The project's lock and index, once an append has taken the long way (RuntimeStore.append_message).
        self.lock: ProcessLock | None = None
        self.index: ConversationIndex | None = None


class RuntimeStore:
    """Everything CrewAgent persists about projects and conversations (no Qt, thread-safe).

    Every write holds the project's file lock, so two processes (the app and the CLI) can work
    on the same project without interleaving lines or losing appends. An append is durable
    (fsync'd) before it returns, and its cost does not depend on the length of the conversation.
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None):
        self.data_dir = paths.data_dir(data_dir)
        _check_folder(self.data_dir)
        self._projects: dict[str, ProjectInfo] = {}
        self._indexes: dict[str, ConversationIndex] = {}
        self._guards: dict[str, Any] = {}  # each lock file's holder (ProcessLock.guarded), by key
        self._runtime_dirs: dict[str, Path] = {}
        self._conversation_dirs: dict[tuple[str, str], Path] = {}
        self._conversation_files: dict[tuple[str, str], _ConversationFiles] = {}
        self._guard = threading.Lock()
        self._notices: list[str] = []

    def _notice(self, message: str) -> None:
        """Something a load repaired on its own (it is logged too: the CLI prints it on stderr)."""
        log.warning("%s", message)
        with self._guard:
            self._notices.append(message)

    def take_notices(self) -> list[str]:
        """What loads repaired since the last call (a rebuilt index, conversations brought back)."""
        with self._guard:
            notices, self._notices = self._notices, []
        return notices

    # -- locking ---------------------------------------------------------------------------

    def _locked(self, key: str, lock_path: Path) -> AbstractContextManager[None]:
        guard = self._guards.get(key)
        if guard is None:
            with self._guard:
                guard = self._guards.get(key)
                if guard is None:
                    lock_path.parent.mkdir(parents=True, exist_ok=True)
                    lock = ProcessLock(lock_path, timeout=LOCK_TIMEOUT_S)
                    guard = self._guards[key] = lock.guarded()  # holds no state: one serves every hold
        return guard

    def _project_lock(self, project_id: str) -> Any:
        guard = self._guards.get(project_id)  # made by the first hold, whose path is computed once
        if guard is not None:
            return guard
        return self._locked(project_id, paths.project_lock_file(self._runtime_dir(project_id)))

    # -- projects --------------------------------------------------------------------------

    def create_project(self, root: str | os.PathLike[str], name: str | None = None) -> ProjectInfo:
        """Make ``root`` a project (creating the folder and artifacts/); an existing project is opened."""
        return self._open(_project_folder(root), create=True, name=name)

    def open_project(self, root: str | os.PathLike[str], *, create: bool = False) -> ProjectInfo:
        """Open a project folder and put it at the top of the recent list."""
        return self._open(_project_folder(root), create=create, name=None)

    def _open(self, folder: Path, *, create: bool, name: str | None) -> ProjectInfo:
        if folder.exists() and not folder.is_dir():
            raise ProjectError(texts.PROJECT_IS_FILE.format(folder=folder))
        project = read_project_file(folder) if folder.exists() else None
        if project is None:
            if not create and not folder.exists():
                raise ProjectFolderMissing(texts.FOLDER_MISSING.format(folder=folder))
            if not create:
                raise NotAProjectError(texts.NOT_A_PROJECT.format(folder=folder))
            with self._locked("projects", paths.projects_lock_file(self.data_dir)):
                project = read_project_file(folder) or write_project_file(folder, name or folder.name)
        info = self._info(project, folder)
        with self._locked("projects", paths.projects_lock_file(self.data_dir)):
            try:
                recent = load_recent(paths.projects_file(self.data_dir))
            except OSError:
                return info  # an unreadable recent list is not overwritten; the project opens anyway
            save_recent(paths.projects_file(self.data_dir), touch_recent(recent, project, folder))
        return info

    def _info(self, project: ProjectFile, folder: Path) -> ProjectInfo:
        info = ProjectInfo(
            id=project.projectId,
            name=project.projectName,
            root=folder,
            runtime_dir=self._runtime_dir(project.projectId),
            artifacts_dir=folder / project.artifactsDir,
            active_package_id=project.activePackageId,
        )
        self._projects[info.id] = info
        return info

    def recent_projects(self) -> list[RecentProject]:
        """Recent projects, most recent first (``entry.exists`` is False for a folder gone missing)."""
        try:
            return load_recent(paths.projects_file(self.data_dir))
        except OSError as exc:
            raise StoreReadError.from_os_error(paths.projects_file(self.data_dir), exc) from exc

    def forget_project(self, project_id: str) -> None:
        """Remove a project from the recent list (its folder and data are kept)."""
        with self._locked("projects", paths.projects_lock_file(self.data_dir)):
            try:
                recent = load_recent(paths.projects_file(self.data_dir))
            except OSError as exc:
                raise StoreReadError.from_os_error(paths.projects_file(self.data_dir), exc) from exc
            save_recent(paths.projects_file(self.data_dir), [e for e in recent if e.projectId != project_id])

    def _runtime_dir(self, project_id: str) -> Path:
        # Cached: every append needs it several times, and pathlib's joins cost microseconds each.
        found = self._runtime_dirs.get(project_id)
        if found is None:
            if not CONVERSATION_ID.fullmatch(project_id):
                raise ProjectError(f"Invalid project id {project_id!r}")
            found = self._runtime_dirs[project_id] = paths.project_runtime_dir(self.data_dir, project_id)
        return found

    def state_dir(self, project_id: str) -> Path:
        return paths.state_dir(self._runtime_dir(project_id))

    # -- conversations ---------------------------------------------------------------------

    def _index(self, project_id: str) -> ConversationIndex:
        index = self._indexes.get(project_id)  # made once per project, never replaced: no lock to read
        if index is not None:
            return index
        with self._guard:
            index = self._indexes.get(project_id)
            if index is None:
                index = ConversationIndex(paths.conversations_dir(self._runtime_dir(project_id)), notify=self._notice)
                self._indexes[project_id] = index
            return index

    def _conversation_dir(self, project_id: str, conversation_id: str) -> Path:
        found = self._conversation_dirs.get((project_id, conversation_id))
        if found is None:
            if not CONVERSATION_ID.fullmatch(conversation_id):
                raise ConversationNotFound(conversation_id)
            found = paths.conversation_dir(self._runtime_dir(project_id), conversation_id)
            self._conversation_dirs[(project_id, conversation_id)] = found
        return found

    def _files(self, project_id: str, conversation_id: str) -> _ConversationFiles:
        found = self._conversation_files.get((project_id, conversation_id))
        if found is None:
            folder = self._conversation_dir(project_id, conversation_id)
            found = _ConversationFiles(folder, os.fspath(folder / LOG_NAME), os.fspath(folder / DELETED_MARKER))
            self._conversation_files[(project_id, conversation_id)] = found
        return found

    def log_path(self, project_id: str, conversation_id: str) -> Path:
        return self._conversation_dir(project_id, conversation_id) / LOG_NAME

    def list_conversations(self, project_id: str) -> list[ConversationMeta]:
        """All conversations of a project, most recently active first."""
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            metas = self._finish_deletions(project_id, index, metas)
            changed = [index.catch_up(meta) for meta in metas]
            if any(changed) or index.dirty:
                try:
                    index.save(metas)
                except StoreWriteError as exc:
                    # Listing must work on a read-only disk; the counts are right in memory.
                    log.warning("conversation index of project %s not saved while listing: %s", project_id, exc)
        return sorted(metas, key=lambda meta: meta.lastActiveAt, reverse=True)

    def flush(self) -> None:
        """Write any index changes still held in memory (call on exit; losing them loses nothing)."""
        for project_id, index in list(self._indexes.items()):
            if index.dirty:
                with self._project_lock(project_id):
                    index.flush()

    def get_conversation(self, project_id: str, conversation_id: str) -> ConversationMeta:
        """One conversation's entry, caught up with its log in memory: a read, index.json is not written."""
        folder = self._conversation_dir(project_id, conversation_id)
        with self._project_lock(project_id):
            index = self._index(project_id)
            for meta in index.load():
                if meta.id == conversation_id and not is_marked_deleted(folder):
                    index.catch_up(meta)
                    return meta
        raise ConversationNotFound(conversation_id)

    def create_conversation(
        self,
        project_id: str,
        *,
        title: str | None = None,
        entry_type: Mode = "chat",
        **fields: Any,
    ) -> ConversationMeta:
        now = utc_now_iso()
        meta = ConversationMeta(
            id=new_conversation_id(),
            title=title or DEFAULT_TITLE,
            entryType=entry_type,
            activeType=fields.pop("activeType", entry_type),
            createdAt=now,
            lastActiveAt=now,
            **fields,
        )
        if not title:
            meta.autoTitle = True  # replaced by the first user message
        meta.logBytes = 0  # the log size messageCount was counted at
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            folder = self._conversation_dir(project_id, meta.id)
            try:
                folder.mkdir(parents=True, exist_ok=False)
                index.write_meta(meta)
                (folder / LOG_NAME).touch()
            except OSError as exc:
                raise StoreWriteError.from_os_error(folder, exc) from exc
            index.save([*metas, meta])
        return meta

    def update_conversation(self, project_id: str, conversation_id: str, **changes: Any) -> ConversationMeta:
        """Change metadata (title, activeType, agentId, workflowId, ...) and persist it."""
        if "title" in changes:
            title = " ".join(str(changes["title"]).split())
            if not title:
                raise ValueError("A conversation title cannot be empty.")
            changes["title"] = title
            changes["autoTitle"] = False
            changes.setdefault("titleSource", "user")
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            for position, meta in enumerate(metas):
                if meta.id == conversation_id:
                    updated = ConversationMeta.model_validate({**meta.model_dump(), **changes})
                    metas[position] = updated
                    index.write_meta(updated)
                    index.save(metas)
                    return updated
        raise ConversationNotFound(conversation_id)

    def set_generated_title(self, project_id: str, conversation_id: str, title: str) -> ConversationMeta | None:
        """Replace the first-message title with one the provider generated; None (nothing changed)
        when the title is no longer the automatic one (the user renamed it meanwhile)."""
        title = " ".join(title.split())
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            for position, meta in enumerate(metas):
                if meta.id == conversation_id:
                    if meta.titleSource != "auto" or not title:
                        return None
                    updated = meta.model_copy(update={"title": title, "titleSource": "generated"})
                    metas[position] = updated
                    index.write_meta(updated)
                    index.save(metas)
                    return updated
        raise ConversationNotFound(conversation_id)

    def rename_conversation(self, project_id: str, conversation_id: str, title: str) -> ConversationMeta:
        return self.update_conversation(project_id, conversation_id, title=title)

    def delete_conversation(self, project_id: str, conversation_id: str) -> None:
        """Delete a conversation: its log, its sidechains and its offloaded outputs.

        Order: mark the folder as being deleted, drop the index entry, then remove the files. A
        crash at any point leaves no index entry pointing at nothing, and a marked folder is never
        brought back by an index rebuild; the next delete or rebuild finishes the removal.
        """
        folder = self._conversation_dir(project_id, conversation_id)
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            if not any(meta.id == conversation_id for meta in metas) and not folder.exists():
                raise ConversationNotFound(conversation_id)
            try:
                if folder.exists():
                    (folder / DELETED_MARKER).touch()
                index.save([meta for meta in metas if meta.id != conversation_id])
            except OSError as exc:
                raise StoreWriteError.from_os_error(folder, exc) from exc
            self._purge(project_id, conversation_id)

    def _purge(self, project_id: str, conversation_id: str) -> None:
        """Remove the files of a conversation already dropped from the index (offloads first)."""
        offloaded = paths.tool_results_dir(self.state_dir(project_id), offload.safe_file_stem(conversation_id))
        shutil.rmtree(offloaded, ignore_errors=True)
        shutil.rmtree(self._conversation_dir(project_id, conversation_id), ignore_errors=True)

    def _finish_deletions(
        self, project_id: str, index: ConversationIndex, metas: list[ConversationMeta]
    ) -> list[ConversationMeta]:
        """Complete deletions a crash interrupted: marked folders leave the index, then the disk."""
        conversations = paths.conversations_dir(self._runtime_dir(project_id))
        marked = {meta.id for meta in metas if is_marked_deleted(conversations / meta.id)}
        if marked:
            metas = [meta for meta in metas if meta.id not in marked]
            index.save(metas)
        for conversation_id in [*marked, *index.pending_deletions]:
            self._purge(project_id, conversation_id)
        index.pending_deletions = []
        return metas

    # -- messages --------------------------------------------------------------------------

    def append_message(
        self, project_id: str, conversation_id: str, message: ConversationMessage
    ) -> ConversationMessage:
        """Persist one message; returns it as stored (a large tool output comes back offloaded).

        Durable once this returns: the line is fsync'd. On failure (disk full, permission
        denied) a StoreWriteError is raised and the log is as it was before.

        The usual append (a conversation this store appended to before, index.json unchanged on
        disk, no title to set, nothing to offload) takes a short path: the same lock, checks,
        system calls and index change as the long way (``_append_message``), in fewer calls and
        objects (issue 14: an append runs on caches its neighbours emptied,
        so each instruction and object it touches counts). Anything else takes the long way,
        under the lock already held (it is re-entrant).
        """
        files = self._conversation_files.get((project_id, conversation_id))
        lock = None if files is None else files.lock
        if lock is None or files is None or files.index is None:
            return self._append_message(project_id, conversation_id, message)
        try:
            lock.acquire()
        except (Timeout, OSError) as exc:
            raise hold_error(lock, exc) from exc
        try:
            index = files.index
            meta = index.cached_entry(conversation_id)
            if meta is None or meta.autoTitle or offload.needs_offload(message):
                return self._append_message(project_id, conversation_id, message)
            if os.access(files.deleted, os.F_OK):  # as the long way: a deletion begun, maybe by a crashed process
                raise ConversationNotFound(conversation_id)
            try:
                line = message.to_log_bytes(b"\n")
                start, size = append_records_span(files.log, line, make_parents=False, create=False, known_end=files.log_end)
            except FileNotFoundError:  # no log: the long way migrates, recreates, or finds the folder gone
                return self._append_message(project_id, conversation_id, message)
            files.log_end = size
            if meta.logBytes != start:  # another process appended since the index was saved
                index.catch_up(meta, Path(files.log), size=start)
            record_append(meta, size, utc_now_iso())
            try:
                index.stage_cached()
            except StoreWriteError as exc:
                index.dirty = True  # as the long way: the cached entry holds the change
                log.warning("conversation index not updated after an append to %s: %s", conversation_id, exc)
            return message
        finally:
            lock.release()

    def _append_message(
        self, project_id: str, conversation_id: str, message: ConversationMessage
    ) -> ConversationMessage:
        """:meth:`append_message` the long way: every case (see there)."""
        files = self._files(project_id, conversation_id)
        with self._project_lock(project_id):
            index = self._index(project_id)
            # The index's own cached entries (no copy of every entry of the project per append):
            # changed in place under the lock, then staged.
            metas = index.load(copy=False)
            position = index.position(metas, conversation_id)
            # A folder removed by another process is found by the append itself (it does not make
            # the folder again), not by a stat of the folder before every append. The marker is
            # looked for with access(): no stat result, and no exception built when it is absent.
            if position is None or os.access(files.deleted, os.F_OK):
                raise ConversationNotFound(conversation_id)
            meta = metas[position]
            stored = message
            if offload.needs_offload(message):
                if not files.folder.is_dir():  # no offloaded payload for a conversation that is gone
                    raise ConversationNotFound(conversation_id)
                stored = offload.prepare_for_storage(message, conversation_id, self.state_dir(project_id))
            try:
                # The log is opened, not created: a missing one is the rare case (below), and so no
                # stat of the legacy messages.json, which matters only while there is no log.
                start, size = append_message_span(files.log, stored, create=False, known_end=files.log_end)
            except FileNotFoundError:
                start, size = self._append_first(project_id, conversation_id, files.folder, stored)
            files.log_end = size
            if meta.logBytes != start:  # another process appended since the index was saved
                index.catch_up(meta, Path(files.log), size=start)
            record_append(meta, size, utc_now_iso())
            try:
                if meta.autoTitle and stored.role == "user" and stored.text.strip():
                    meta.title = title_from_text(stored.text)
                    meta.autoTitle = False
                    meta.titleSource = "auto"
                    index.write_meta(meta)
                    index.save(metas)
                else:
                    index.stage(metas)
            except StoreWriteError as exc:
                # The message itself is stored; the index is a cache that catches up with the log.
                index.dirty = True  # the cached entry holds the change: a later save writes it
                log.warning("conversation index not updated after an append to %s: %s", conversation_id, exc)
            if files.lock is None:  # the next append may take the short path
                files.lock, files.index = self._guards[project_id].lock, index
        return stored

    def _append_first(
        self, project_id: str, conversation_id: str, folder: Path, message: ConversationMessage
    ) -> tuple[int, int]:
        """An append that found no log: a legacy conversation (``messages.json``) is migrated
        first and the message follows its messages; a folder removed by another process is
        ConversationNotFound (the folder is not made again)."""
        if (folder / LEGACY_NAME).exists():
            migrate_legacy(folder, self._preparer(project_id, conversation_id))
        try:
            return append_message_span(folder / LOG_NAME, message)
        except FileNotFoundError:
            raise ConversationNotFound(conversation_id) from None

    def append_messages(
        self, project_id: str, conversation_id: str, messages: list[ConversationMessage]
    ) -> list[ConversationMessage]:
        """Persist several messages with one write and one fsync (imports); all or nothing."""
        folder = self._conversation_dir(project_id, conversation_id)
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            position = next((i for i, meta in enumerate(metas) if meta.id == conversation_id), None)
            if position is None or not folder.is_dir():
                raise ConversationNotFound(conversation_id)
            meta = metas[position]
            index.catch_up(meta)
            state = self.state_dir(project_id)
            stored = [offload.prepare_for_storage(message, conversation_id, state) for message in messages]
            if stored:
                size = append_records(folder / LOG_NAME, b"".join(encode_message(message) for message in stored))
                meta.logBytes = size
            meta.messageCount += len(stored)
            meta.lastActiveAt = utc_now_iso()
            try:
                index.save(metas)
            except StoreWriteError as exc:
                # The messages are stored; the index is a cache that the next load repairs.
                log.warning("conversation index not updated after an import into %s: %s", conversation_id, exc)
        return stored

    def _preparer(self, project_id: str, conversation_id: str) -> Any:
        state = self.state_dir(project_id)
        return lambda message: offload.prepare_for_storage(message, conversation_id, state)

    def load_messages(self, project_id: str, conversation_id: str) -> LoadResult:
        """Load a conversation; damaged lines are skipped, reported and copied to a side file."""
        folder = self._conversation_dir(project_id, conversation_id)
        migrated: LoadResult | None = None
        try:
            with self._project_lock(project_id):
                if (folder / LEGACY_NAME).exists():
                    migrated = migrate_legacy(folder, self._preparer(project_id, conversation_id))
                if not folder.is_dir() or is_marked_deleted(folder):
                    raise ConversationNotFound(conversation_id)
                try:
                    # Only whole lines written before this moment: appends finish under this lock.
                    size = (folder / LOG_NAME).stat().st_size
                except FileNotFoundError:
                    size = 0
            result = load_log(folder / LOG_NAME, limit=size)
        except OSError as exc:  # a folder where the log belongs, a folder without permission
            raise _read_error(folder, exc) from exc
        if migrated is not None:
            # Report what this load's one-time migration did, including the items it had to skip.
            result.migrated_from_legacy = True
            result.problems[:0] = migrated.problems
        if result.problems:
            write_quarantine(folder, result.problems)
        self._reconcile_count(project_id, conversation_id, len(result.messages), size)
        return result

    def load_newest(self, project_id: str, conversation_id: str, count: int) -> list[ConversationMessage]:
        """The newest ``count`` messages, read from the end of the log: a quick first page.

        Nothing is recovered, migrated or reported here (``load_messages`` does that); a legacy or
        deleted conversation gives an empty list.
        """
        folder = self._conversation_dir(project_id, conversation_id)
        try:
            with self._project_lock(project_id):
                if (folder / LEGACY_NAME).exists() or not folder.is_dir() or (folder / DELETED_MARKER).exists():
                    return []
                try:
                    size = (folder / LOG_NAME).stat().st_size  # whole lines written before this moment
                except FileNotFoundError:
                    return []
            return load_tail(folder / LOG_NAME, count, limit=size)
        except OSError as exc:
            raise _read_error(folder, exc) from exc

    def _reconcile_count(self, project_id: str, conversation_id: str, count: int, size: int) -> None:
        """Record the exact count of valid messages in the first ``size`` bytes of the log.

        The line count kept between loads counts a damaged line as a message; a load knows
        better. An entry already counted past ``size`` (a later append) is left as it is.
        """
        with self._project_lock(project_id):
            index = self._index(project_id)
            metas = index.load()
            for meta in metas:
                if meta.id != conversation_id:
                    continue
                recorded = meta.logBytes
                if isinstance(recorded, int) and recorded > size:
                    return
                if recorded == size and meta.messageCount == count:
                    return
                meta.messageCount = count
                meta.logBytes = size
                try:
                    index.save(metas)
                except StoreWriteError as exc:
                    # The count is right in memory; the next load reconciles it again.
                    log.warning("message count of %s not saved to the index: %s", conversation_id, exc)
                return

    # -- turns in progress (see checkpoint.py) ---------------------------------------------------

    def turn_lock(self, project_id: str, conversation_id: str, *, turn: bool = True) -> Any:
        """Hold while a turn runs (``turn=False``: while recovering); raises ConversationBusy when another holds it."""
        folder = self._conversation_dir(project_id, conversation_id)
        if not folder.is_dir():
            raise ConversationNotFound(conversation_id)
        return checkpoint.turn_lock(folder, turn=turn)

    def is_turn_running(self, project_id: str, conversation_id: str, *, count_recovery: bool = True) -> bool:
        """True while a turn holds the conversation's lock (here or in another process); a recovery
        this process is making counts unless ``count_recovery`` is False.

        A conversation whose folder is gone runs nothing: probing its lock would create the lock
        file, and with it the folder of a conversation deleted a moment ago (opening it and
        deleting it raced on two threads).
        """
        folder = self._conversation_dir(project_id, conversation_id)
        if not folder.is_dir():
            return False
        return checkpoint.is_turn_running(folder, count_recovery=count_recovery)

    def save_stream_checkpoint(self, project_id: str, conversation_id: str, data: dict[str, Any]) -> None:
        checkpoint.write_checkpoint(self._conversation_dir(project_id, conversation_id), data)

    def read_stream_checkpoint(self, project_id: str, conversation_id: str) -> dict[str, Any] | None:
        return checkpoint.read_checkpoint(self._conversation_dir(project_id, conversation_id))

    def clear_stream_checkpoint(self, project_id: str, conversation_id: str) -> None:
        checkpoint.clear_checkpoint(self._conversation_dir(project_id, conversation_id))

    def write_spills(self, project_id: str, spills: Iterable[tuple[str, str]]) -> None:
        """Write the ``(alias, text)`` full texts a compacted request refers to (kept when present)."""
        state = self.state_dir(project_id)
        for alias, text in spills:
            offload.write_spill(state, alias, text)

    def read_full_output(self, project_id: str, message: ConversationMessage) -> str:
        """The complete content of a tool result, from its offload file when it was offloaded."""
        return offload.read_full_output(message, self.state_dir(project_id))

    # -- subagent sidechains (see sidechain.py) -------------------------------------------------

    def sidechains(self, project_id: str, conversation_id: str) -> Sidechains:
        """The subagent logs of a conversation (``conversations/<cid>/agents/``)."""
        return Sidechains(
            self._conversation_dir(project_id, conversation_id),
            self.state_dir(project_id),
            conversation_id,
            lambda: self._project_lock(project_id),
        )


def _project_folder(root: str | os.PathLike[str]) -> Path:
    """The absolute folder of a project path; an empty path is refused (it is not "here")."""
    if not os.fspath(root).strip():
        raise ProjectError(texts.PROJECT_PATH_EMPTY)
    return Path(root).expanduser().resolve()


def _check_folder(data_dir: Path) -> None:
    """Refuse a data folder that is a file, or lies under one: creating it would fail later, less clearly."""
    for folder in (data_dir, *data_dir.parents):
        try:
            if folder.is_dir():
                return
            if folder.exists():
                raise SetupError(f"The data folder {data_dir} cannot be used: {folder} is a file, not a folder.")
        except OSError:
            return  # unreadable: the first write reports it with its path


def _read_error(folder: Path, exc: OSError) -> StoreReadError:
    """The error naming what cannot be read: the conversation folder itself, or the file in it."""
    try:
        os.listdir(folder)
    except OSError as folder_exc:
        return StoreReadError.from_os_error(folder, folder_exc)
    return StoreReadError.from_os_error(Path(exc.filename or folder), exc)
