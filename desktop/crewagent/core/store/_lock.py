"""One cross-process lock file, shared by the threads of this process: ``flock`` on POSIX, filelock elsewhere."""

from __future__ import annotations

import os
import threading
import time
import weakref
from pathlib import Path

from filelock import FileLock, Timeout

from crewagent.core.errors import StoreWriteError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_TIMEOUT_S", "READS_NEED_NO_LOCK", "ProcessLock", "Timeout", "TryLock", "hold_error", "process_lock"]

#: Whether a reader of a file that writers only ever replace whole (a rename) can read without the
#: lock: on POSIX it opens the old file or the new one. On Windows a reader holding the file open
#: would make the writer's replace fail.
READS_NEED_NO_LOCK = fcntl is not None

LOCK_TIMEOUT_S = 30.0
#: How often a lock held by another process is tried again.
POLL_S = 0.002
#: How long a lock file found to have its name is taken to keep it (see ProcessLock): an ``fstat``
#: on every hold would cost a third of the hold.
VERIFY_S = 1.0


class TryLock:
    """One taking of a lock file, without waiting (a conversation's turn lock): ``flock`` on POSIX, filelock elsewhere.

    The same ``flock`` filelock takes (a process using filelock and one using this exclude each
    other), without its bookkeeping: filelock spent about 0.1 ms of Python a taking and release
    (real paths, fork checks), this about 15 µs, and a turn takes the lock at least once. A new
    descriptor each taking, as filelock opens one: two takings in this process exclude each
    other. The kernel drops the ``flock`` of a killed process with its descriptors; the file is
    kept (removing it would let two processes lock two different files of one name).
    """

    __slots__ = ("_fallback", "_fd", "_path")

    def __init__(self, path: str) -> None:
        self._path = path
        self._fd = -1
        self._fallback = None if fcntl is not None else FileLock(self._path, timeout=0, preserve_lock_file=True, thread_local=False)

    def acquire(self) -> None:
        """Take the lock now or raise ``Timeout`` (OSError when the file cannot be opened)."""
        if self._fallback is not None:
            self._fallback.acquire()
            return
        assert fcntl is not None
        while True:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise Timeout(self._path) from None
            except BaseException:
                os.close(fd)
                raise
            if os.fstat(fd).st_nlink:
                self._fd = fd
                return
            os.close(fd)  # the file was removed since it was opened: lock the one at the path now

    def release(self) -> None:
        if self._fallback is not None:
            self._fallback.release()
            return
        fd, self._fd = self._fd, -1
        if fd >= 0:
            try:
                assert fcntl is not None
                fcntl.flock(fd, fcntl.LOCK_UN)  # explicit: a child forked during the hold shares the open file
            finally:
                os.close(fd)


class ProcessLock:
    """A lock file held by at most one process at a time; this process's threads wait on an RLock.

    The file lock is ``flock``, taken once per outermost hold (the RLock is re-entrant; a second
    ``flock`` on a new descriptor would wait for the first). filelock takes the same ``flock`` but
    spends 40-75 µs an acquire + release in Python bookkeeping against about 5 µs here, and the
    store takes its lock on every append. Where there is no ``fcntl`` (Windows) filelock does it.
    A process that locks the file with filelock excludes this one and the other way round: both
    ``flock`` the same file. The kernel drops the ``flock`` of a killed process with its
    descriptors, so a crash never leaves the lock held, and the file itself is never removed
    (removing it would let two processes lock two different files of one name).

    The descriptor is opened on the first hold and kept (an ``flock`` belongs to the open file,
    not to the descriptor, so ``LOCK_UN`` releases it): opening and closing the lock file per
    hold cost more than the lock itself (about 14 µs against 4 µs for the ``flock`` pair, issue
    14). A hold checks with ``fstat`` that the file still has a name (at most once per
    ``VERIFY_S``), and if it was removed (its project folder deleted and made again) it locks the
    file now at the path instead. The
    descriptor is closed when the lock is collected, and in a forked child, which opens its own:
    a child sharing the parent's open file would share its ``flock`` too.
    """

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self._path_text = os.fspath(path)  # opened on every hold: no pathlib conversion each time
        self.timeout = timeout
        self.thread_lock = threading.RLock()
        self._depth = 0
        self._fd = -1  # opened by the first hold, then kept (see the class)
        self._closer: weakref.finalize | None = None
        self._verified_until = 0.0  # until then, the file is taken to have its name still
        self._fallback: FileLock | None = None
        if fcntl is None:
            self._fallback = FileLock(path, timeout=timeout, poll_interval=POLL_S, preserve_lock_file=True)

    def held(self) -> ProcessLock:
        """``with lock.held():`` holds the lock (re-entrant in one thread), as ``with lock:`` does."""
        return self

    def guarded(self) -> _Guarded:
        """``with lock.guarded():`` holds the lock; failing to take it is a one-line StoreWriteError
        naming the lock file (held too long by another process, or the file cannot be opened)."""
        return _Guarded(self)  # not kept here: the lock and its holder would make a cycle (see RuntimeStore._locked)

    def acquire(self) -> None:
        """Take the lock; raises ``Timeout`` after ``timeout`` seconds, OSError when the lock file
        cannot be opened (the lock is not held then)."""
        self.thread_lock.acquire()
        if self._depth == 0:
            try:
                self._acquire()
            except BaseException:
                self.thread_lock.release()
                raise
        self._depth += 1

    def release(self) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._release()
        finally:
            self.thread_lock.release()

    # A class, not a generator context manager: the store takes this lock on every append.
    def __enter__(self) -> ProcessLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _acquire(self) -> None:
        if self._fallback is not None:
            self._fallback.acquire()
            return
        assert fcntl is not None
        fd = self._fd if self._fd >= 0 else self._open()
        deadline: float | None = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                now = time.monotonic()
                deadline = now + self.timeout if deadline is None else deadline
                if now > deadline:
                    raise Timeout(str(self.path)) from None
                time.sleep(POLL_S)
                continue
            now = time.monotonic()
            if now < self._verified_until:
                return
            if os.fstat(fd).st_nlink:
                self._verified_until = now + VERIFY_S
                return
            # The file was removed since it was opened: whoever locks the path now locks a new file.
            fcntl.flock(fd, fcntl.LOCK_UN)
            self._close()
            fd = self._open()

    def _release(self) -> None:
        if self._fallback is not None:
            self._fallback.release()
            return
        assert fcntl is not None
        if self._fd >= 0:  # not in a child forked during the hold, which holds nothing
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _open(self) -> int:
        self._fd = os.open(self._path_text, os.O_RDWR | os.O_CREAT, 0o644)  # close-on-exec, as Python opens
        self._verified_until = 0.0
        self._closer = weakref.finalize(self, os.close, self._fd)
        _open_locks.add(self)
        return self._fd

    def _close(self) -> None:
        """Close the kept descriptor (it is opened again by the next hold)."""
        if self._closer is not None:
            self._closer()  # closes the descriptor once, however often it is called
            self._closer = None
        self._fd = -1

    def _forget_after_fork(self) -> None:
        """In a forked child: drop the parent's descriptor without touching its ``flock``."""
        self._close()


class _Guarded:
    """Holds a ProcessLock for a ``with`` block, as a store write does: errors become StoreWriteError."""

    __slots__ = ("lock",)

    def __init__(self, lock: ProcessLock) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        try:
            self.lock.acquire()
        except (Timeout, OSError) as exc:
            raise hold_error(self.lock, exc) from exc

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def hold_error(lock: ProcessLock, exc: Exception) -> StoreWriteError:
    """The one-line error of a store write that could not take ``lock`` (``acquire``'s Timeout or OSError)."""
    if isinstance(exc, Timeout):
        return StoreWriteError(f"Another CrewAgent process has held {lock.path} for {lock.timeout:.0f} s; try again.")
    assert isinstance(exc, OSError)
    return StoreWriteError.from_os_error(lock.path, exc)


#: Every lock holding an open descriptor, for the forked child's cleanup below.
_open_locks: weakref.WeakSet[ProcessLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_open_locks):
        lock._forget_after_fork()
    _open_locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

_locks: dict[Path, ProcessLock] = {}
_locks_guard = threading.Lock()


def process_lock(path: Path) -> ProcessLock:
    """The process's one lock of ``path`` (made on first use): every object locking that file
    shares it, so two of them in one process wait on each other's RLock, not on ``flock``."""
    with _locks_guard:
        found = _locks.get(path)
        if found is None:
            found = _locks[path] = ProcessLock(path)
        return found
