"""Crash safety of a turn in progress: the per-conversation turn lock and the streaming checkpoint.

While a model answer streams, its partial text is checkpointed (atomically, at least every
500 ms) to ``streaming.json`` beside the log. A turn that ends normally removes it. If the
process dies mid-stream, the next turn (or the next open) finds it and persists the partial text
as an interrupted assistant message, so what the user saw is not lost.

The turn lock (an OS file lock, released by the kernel when a process dies) says whether a
turn is running for a conversation: recovery and repair only happen when nobody holds it.

Asking whether the lock is held means taking it for an instant. Within this process those probes
and the takings are serialised, and the holds are recorded, so that a probe on one thread never
makes another thread's turn (or probe) find the conversation busy, and a recovery this process is
making can be told apart from a turn.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import Timeout

from crewagent.core.errors import CrewAgentError, StoreWriteError
from crewagent.core.jsonparse import parse_json
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.store._lock import TryLock

CHECKPOINT_NAME = "streaming.json"
TURN_LOCK_NAME = ".turn.lock"


class ConversationBusy(CrewAgentError):
    """Another window or process is running a turn in this conversation."""


#: Serialises this process's takings and probes of turn locks (each lasts an instant).
_probing = threading.Lock()
#: The turn locks this process holds: folder -> True for a turn, False for a recovery.
_held: dict[str, bool] = {}


def _file_lock(folder: Path) -> TryLock:
    return TryLock(os.path.join(folder, TURN_LOCK_NAME))


@contextmanager
def turn_lock(folder: Path, *, turn: bool = True) -> Iterator[None]:
    """Hold the conversation's lock: for a turn, or (``turn=False``) for a recovery or a repair."""
    lock = _file_lock(folder)
    key = str(folder)
    with _probing:
        try:
            lock.acquire()
        except Timeout:
            raise ConversationBusy(
                "This conversation is already answering in another window or process; wait for it or stop it there."
            ) from None
        except OSError as exc:  # the conversation folder cannot be written (permission denied)
            raise StoreWriteError.from_os_error(folder, exc) from exc
        _held[key] = turn
    try:
        yield
    finally:
        with _probing:
            _held.pop(key, None)
            lock.release()


def is_turn_running(folder: Path, *, count_recovery: bool = True) -> bool:
    """True while the conversation's lock is held (by a turn, here or in another process).

    A recovery this process is making holds it too; it counts unless ``count_recovery`` is False
    (a recovery of an empty conversation adds nothing to it). Another process's recovery cannot be
    told from a turn and always counts.
    """
    with _probing:
        held = _held.get(str(folder))
        if held is not None:
            return held or count_recovery
        lock = _file_lock(folder)
        try:
            lock.acquire()
        except Timeout:
            return True
        except OSError as exc:
            raise StoreWriteError.from_os_error(folder, exc) from exc
        lock.release()
        return False


def write_checkpoint(folder: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(folder / CHECKPOINT_NAME, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def read_checkpoint(folder: Path) -> dict[str, Any] | None:
    """The checkpoint left by a dead turn, or None (a damaged one is treated as absent)."""
    try:
        data = parse_json((folder / CHECKPOINT_NAME).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError):
        clear_checkpoint(folder)
        return None
    return data if isinstance(data, dict) else None


def clear_checkpoint(folder: Path) -> None:
    try:
        os.unlink(folder / CHECKPOINT_NAME)
    except FileNotFoundError:
        pass
