"""The store's cross-process lock (store/_lock.py): ``flock`` held by real processes, killed ones included."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from crewagent.core.errors import StoreWriteError
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store import _lock
from crewagent.core.store import runtime as runtime_module
from crewagent.core.store._lock import ProcessLock, Timeout
from tests.core.forked import exited_cleanly as _exited_cleanly
from tests.core.forked import fork as _fork

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or _lock.fcntl is None, reason="needs os.fork and flock")


@needs_fork
def test_two_processes_writing_under_the_lock_lose_nothing_and_interleave_whole_lines(tmp_path: Path) -> None:
    # Each line is written in two halves with 0.2 ms between them: without the lock the other
    # process's lines land between the halves.
    lock_path, log = tmp_path / ".lock", tmp_path / "log.txt"
    go_read, go_write = os.pipe()
    count = 150

    def writer(tag: str) -> Callable[[], None]:
        def body() -> None:
            lock = ProcessLock(lock_path)
            os.read(go_read, 1)
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            for number in range(count):
                with lock:
                    os.write(fd, f"{tag}-{number}-".encode())
                    until = time.perf_counter() + 0.0002
                    while time.perf_counter() < until:
                        pass  # a critical section long enough for the other process to run into it
                    os.write(fd, f"{tag}-{number}\n".encode())
            os.close(fd)

        return body

    pids = [_fork(writer("a")), _fork(writer("b"))]
    os.write(go_write, b"xx")  # both start together
    assert all(_exited_cleanly(pid) for pid in pids)
    os.close(go_read)
    os.close(go_write)
    lines = log.read_text().splitlines()
    assert len(lines) == 2 * count
    for line in lines:
        first, second = line[: len(line) // 2], line[len(line) // 2 + 1 :]
        assert line == f"{second}-{second}", line  # both halves of one line come from one hold
        assert first == second
    for tag in "ab":
        assert [line.split("-")[1] for line in lines if line.startswith(tag)] == [str(n) for n in range(count)]


@needs_fork
def test_a_lock_held_by_a_killed_process_is_released(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    ready_read, ready_write = os.pipe()
    hold_read, hold_write = os.pipe()

    def holder() -> None:
        with ProcessLock(lock_path):
            os.write(ready_write, b"R")
            os.read(hold_read, 1)  # never comes: the parent kills this process

    pid = _fork(holder)
    try:
        assert os.read(ready_read, 1) == b"R"
        with pytest.raises(Timeout):
            ProcessLock(lock_path, timeout=0.05).acquire()  # held by the child
    finally:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        for fd in (ready_read, ready_write, hold_read, hold_write):
            os.close(fd)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    lock = ProcessLock(lock_path, timeout=10)
    with lock:  # the kernel dropped the dead process's flock
        assert lock_path.exists()


def test_the_lock_is_reentrant_and_excludes_other_threads(tmp_path: Path) -> None:
    lock = ProcessLock(tmp_path / ".lock")
    entered = threading.Event()

    def other() -> None:
        with lock:
            entered.set()

    with lock, lock:
        thread = threading.Thread(target=other)
        thread.start()
        assert not entered.wait(0.1), "another thread entered a held lock"
    thread.join(10)
    assert entered.is_set()


def test_an_append_waits_for_an_older_build_holding_the_project_lock_with_filelock(
    store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    # Older builds (and the runs index before) lock the same .lock file with filelock: both are flock.
    other = FileLock(store._runtime_dir(project.id) / ".lock")
    other.acquire()
    done = threading.Event()

    def append() -> None:
        store.append_message(project.id, conversation.id, ConversationMessage.new("user", "after the other"))
        done.set()

    thread = threading.Thread(target=append)
    thread.start()
    try:
        assert not done.wait(0.2), "the append did not wait for the other holder"
        assert store.log_path(project.id, conversation.id).read_bytes() == b""
    finally:
        other.release()
    thread.join(10)
    assert done.is_set()
    assert [m.text for m in store.load_messages(project.id, conversation.id).messages] == ["after the other"]


def test_a_lock_held_too_long_is_a_clear_store_error(
    store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "LOCK_TIMEOUT_S", 0.05)
    fresh = runtime_module.RuntimeStore(store.data_dir)
    other = FileLock(fresh._runtime_dir(project.id) / ".lock")
    with other:
        with pytest.raises(StoreWriteError, match=r"Another CrewAgent process has held .*\.lock for 0 s; try again"):
            fresh.append_message(project.id, conversation.id, ConversationMessage.new("user", "never written"))
    assert store.load_messages(project.id, conversation.id).messages == []
    fresh.append_message(project.id, conversation.id, ConversationMessage.new("user", "once free"))  # not left held
    assert len(store.load_messages(project.id, conversation.id).messages) == 1


def test_without_fcntl_filelock_takes_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows has no fcntl: the same class falls back to filelock, re-entrant as well.
    monkeypatch.setattr(_lock, "fcntl", None)
    lock = ProcessLock(tmp_path / ".lock", timeout=0.05)
    with lock, lock:
        with pytest.raises(Timeout):
            FileLock(tmp_path / ".lock", timeout=0.05).acquire()
    with FileLock(tmp_path / ".lock", timeout=1):
        pass  # released by the outermost exit


# -- the kept descriptor (issue 14: no open and close of the lock file per hold) ----------------


def _open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")} if os.path.isdir("/proc/self/fd") else set()


@needs_fork
def test_the_descriptor_is_kept_between_holds_and_released_by_each_hold(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    lock = ProcessLock(lock_path)
    before = _open_fds()
    for _ in range(5):
        with lock:
            pass
    if before:
        assert len(_open_fds() - before) == 1, "one descriptor for every hold, not one per hold"
    # Released although its descriptor stays open: another process takes it at once.
    pid = _fork(lambda: ProcessLock(lock_path, timeout=0.5).acquire())
    assert _exited_cleanly(pid)


def _times_out_while_a_child_holds(lock: ProcessLock, child_lock: Callable[[], ProcessLock]) -> None:
    """Fork a child that holds ``child_lock()``; meanwhile ``lock`` must time out in this process."""
    ready_read, ready_write = os.pipe()
    hold_read, hold_write = os.pipe()

    def holder() -> None:
        with child_lock():
            os.write(ready_write, b"R")
            os.read(hold_read, 1)

    pid = _fork(holder)
    try:
        assert os.read(ready_read, 1) == b"R"
        with pytest.raises(Timeout):
            lock.acquire()
    finally:
        os.write(hold_write, b"G")
        assert _exited_cleanly(pid)
        for fd in (ready_read, ready_write, hold_read, hold_write):
            os.close(fd)


@needs_fork
def test_a_forked_child_does_not_share_the_parents_lock(tmp_path: Path) -> None:
    # An flock belongs to the open file: a child locking through the descriptor it inherited would
    # lock the parent's open file, and the parent would then take the "same" lock at once.
    lock = ProcessLock(tmp_path / ".lock", timeout=0.05)
    with lock:
        pass  # the descriptor is open now, and kept
    _times_out_while_a_child_holds(lock, lambda: lock)  # the parent's object, as a forked worker would use it
    with lock:
        pass


@needs_fork
def test_a_removed_lock_file_is_not_locked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The project folder deleted and made again: other processes lock the new file, so must this
    # one, from its first hold after the check's interval.
    monkeypatch.setattr(_lock, "VERIFY_S", 0.05)
    lock_path = tmp_path / ".lock"
    lock = ProcessLock(lock_path, timeout=0.05)
    with lock:
        pass
    lock_path.unlink()
    with lock:  # within the interval: not checked again
        pass
    time.sleep(0.05)
    _times_out_while_a_child_holds(lock, lambda: ProcessLock(lock_path))  # the child makes and locks the new file
    with lock:  # and the new file once it is free
        assert os.fstat(lock._fd).st_ino == lock_path.stat().st_ino


def test_a_collected_lock_closes_its_descriptor(tmp_path: Path) -> None:
    before = _open_fds()
    for number in range(20):
        with ProcessLock(tmp_path / f"{number}.lock"):
            pass
    if before:
        assert _open_fds() <= before | set(), "a dropped lock left its descriptor open"
