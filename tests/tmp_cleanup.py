"""pytest's removal of old sessions' temporary folders, done at the start of a run in the background.

pytest keeps the temporary folders of the last three sessions (``tmp_path_retention_count``) under
``<temp>/pytest-of-<user>/pytest-<N>``: at the end of each session, in the controller and inside
the run's reported time, it removes the older ones. A session of this suite leaves ~30,000 files
(~250 MB) there, and removing one took 3-6 s of wall time at the end of every run, while the
workers had already finished (a sampler of the cores saw them idle or waiting on the disk then).

The same removal can happen at the start, in a thread, while the fork server imports the app on
one core (tests/conftest.py): the folders pytest would remove at the end are known then, since
the new session's number is the largest plus one. The thread removes them with pytest's own
functions, which take the same lock as pytest's removal and skip the folder of a session still
running; pytest's removal at the end then finds nothing left to do, or does what is left.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

PREFIX = "pytest-"


def sessions_root() -> Path:
    """Where pytest numbers its sessions' folders (``TempPathFactory.getbasetemp``'s choice)."""
    from _pytest.tmpdir import get_user

    temproot = Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()).resolve()
    return temproot / f"pytest-of-{get_user() or 'unknown'}"


def remove_before_the_session(root: Path, keep: int) -> None:
    """Remove what pytest's cleanup would remove at the end of the next session in ``root``.

    At the end, pytest removes the numbered folders up to (largest number - ``keep``), the new
    session's folder counted, and every ``garbage-*`` folder: before that folder exists, that is
    up to (largest number + 1 - ``keep``). A folder whose session still runs (its lock is fresh)
    is skipped, as pytest skips it. With ``keep`` below 2, that would take the largest number, which
    pytest then gives the new session again: nothing is removed, pytest's end does it all.
    """
    from _pytest.pathlib import LOCK_TIMEOUT, cleanup_numbered_dir

    if keep < 2 or not root.is_dir():
        return
    cleanup_numbered_dir(root, PREFIX, keep - 1, time.time() - LOCK_TIMEOUT)


def start(config: pytest.Config) -> Callable[[], None] | None:
    """Start the removal in a thread for a run that numbers its own folder; ``None`` otherwise.

    Returns what waits for the thread: call it before pytest's own cleanup at the session's end.
    """
    if config.option.basetemp is not None:  # an xdist worker, or --basetemp: no numbered folders
        return None
    if config.getini("tmp_path_retention_policy") == "none":  # pytest removes every session then
        return None
    keep = int(config.getini("tmp_path_retention_count"))
    root = sessions_root()

    def remove() -> None:
        try:
            # Below the workers and the fork server's imports: the removal only fills idle time.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        try:
            remove_before_the_session(root, keep)
        except OSError:
            pass  # pytest's cleanup at the end tries again

    thread = threading.Thread(target=remove, name="tmp-cleanup", daemon=True)
    thread.start()
    return thread.join
