"""Atomic replaces whose old file is unlinked later, on a thread of its own (POSIX).

Renaming a new file over an old one drops the old file's last link, and the kernel frees its
blocks inside the ``rename`` call. That is not always cheap: on ext4 mounted with ``discard``
and no journal (the VM of docs/benchmarks.md), freeing blocks issues a synchronous discard to the
disk, and a rename over a 3 KB file took 2.5-5 ms where the same rename to a new name took 0.2 ms
(perf: ``rename`` → ``evict`` → ``ext4_free_blocks`` → ``blkdev_issue_discard``). With a journal
the discard waits for the next commit instead, which the next ``fsync`` of the turn pays.

:func:`replace_unsynced` keeps the old file alive under a second name (a hard link in
``.replaced/`` beside it) while it renames the new file over it, so the rename frees nothing,
and a daemon thread unlinks that name afterwards. What readers see is unchanged: the path holds
the old file or the new one, whole; what a power loss keeps is unchanged too (the new file is
written and renamed exactly as :func:`atomic_write_bytes` does it). A name left in ``.replaced/``
by a process that exited first is unlinked by the next one that replaces a file in that folder.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import uuid
from pathlib import Path

from crewagent.core.store._fsutil import atomic_write_bytes

log = logging.getLogger(__name__)

#: The folder (beside the replaced file) holding the old versions until they are unlinked.
GRAVEYARD = ".replaced"
#: Hard links where they are cheap and ordinary. Windows keeps the plain replace.
DEFERS = os.name == "posix"

_queue: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_started = threading.Lock()
_swept: set[Path] = set()
_pending = 0
_idle = threading.Condition()


def replace_unsynced(path: Path, data: bytes) -> None:
    """``atomic_write_bytes(path, data, sync=False)``; the old file's blocks are freed later, off this thread."""
    grave = _keep_old(path) if DEFERS else None
    try:
        atomic_write_bytes(path, data, sync=False)
    finally:
        if grave is not None:
            _submit(grave)


def drain(timeout: float = 10.0) -> bool:
    """Wait until every old file handed over so far is unlinked (tests); False on timeout."""
    with _idle:
        return _idle.wait_for(lambda: _pending == 0, timeout)


def _keep_old(path: Path) -> Path | None:
    """A second name of the file at ``path`` in ``.replaced/`` (None: no file there, or no hard links here)."""
    folder = path.parent / GRAVEYARD
    grave = folder / f"{path.name}.{uuid.uuid4().hex}"
    try:
        os.link(path, grave, follow_symlinks=False)
        return grave
    except FileNotFoundError:  # no old file (a first write), or no .replaced/ yet
        if not os.path.lexists(path):
            return None
    except OSError as exc:  # a file system without hard links, a full disk ...: the plain replace
        log.debug("%s not kept for a later unlink: %s", path, exc)
        return None
    try:
        folder.mkdir(exist_ok=True)
        os.link(path, grave, follow_symlinks=False)
    except OSError as exc:
        log.debug("%s not kept for a later unlink: %s", path, exc)
        return None
    return grave


def _submit(grave: Path) -> None:
    global _pending, _thread
    with _idle:
        _pending += 1
    with _started:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="crewagent-graveyard", daemon=True)
            _thread.start()
    _queue.put(grave)


def _work() -> None:
    global _pending
    while True:
        grave = _queue.get()
        if grave is None:
            return
        try:
            _unlink(grave)
            if grave.parent not in _swept:
                _swept.add(grave.parent)
                _sweep(grave.parent)
        finally:
            with _idle:
                _pending -= 1
                _idle.notify_all()


def _sweep(folder: Path) -> None:
    """Unlink what earlier processes left in ``folder`` (another live process's names too: harmless,
    its own unlink then finds nothing)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        _unlink(folder / name)


def _unlink(grave: Path) -> None:
    try:
        os.unlink(grave)
    except FileNotFoundError:
        pass
    except OSError as exc:  # left for the next sweep
        log.warning("%s could not be removed: %s", grave, exc)
