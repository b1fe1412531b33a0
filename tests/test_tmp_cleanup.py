"""The old sessions' temporary folders removed at the start are the ones pytest removes at the end."""

from __future__ import annotations

import os
import time
from pathlib import Path

from _pytest.pathlib import LOCK_TIMEOUT, cleanup_numbered_dir
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import tmp_cleanup
from tests.examples import examples

FRESH, STALE, NONE = "fresh lock", "stale lock", "no lock"


def _make(root: Path, folders: dict[int, str], garbage: int) -> None:
    root.mkdir()
    for number, lock in folders.items():
        folder = root / f"{tmp_cleanup.PREFIX}{number}"
        folder.mkdir()
        (folder / "file").write_text("x")
        if lock != NONE:
            (folder / ".lock").write_text("")
        if lock == STALE:
            old = time.time() - LOCK_TIMEOUT - 60
            os.utime(folder / ".lock", (old, old))
    for index in range(garbage):
        (root / f"garbage-{index}").mkdir()


def _new_session(root: Path) -> None:
    """What pytest does at a session's start: the next number, locked while the session runs."""
    numbers = [int(p.name.removeprefix(tmp_cleanup.PREFIX)) for p in root.glob(f"{tmp_cleanup.PREFIX}*")]
    folder = root / f"{tmp_cleanup.PREFIX}{max(numbers, default=-1) + 1}"
    folder.mkdir()
    (folder / ".lock").write_text("")


def _end(root: Path, keep: int) -> None:
    """pytest's cleanup at the session's end."""
    cleanup_numbered_dir(root, tmp_cleanup.PREFIX, keep, time.time() - LOCK_TIMEOUT)


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


_NUMBERS = st.dictionaries(st.integers(0, 12), st.sampled_from([NONE, FRESH, STALE]), max_size=8)


@settings(max_examples=examples(25), deadline=None)
@given(folders=_NUMBERS, garbage=st.integers(0, 2), keep=st.integers(2, 5))
def test_the_start_removes_what_the_end_would_and_leaves_the_end_nothing(
    tmp_path_factory, folders: dict[int, str], garbage: int, keep: int
) -> None:
    base = tmp_path_factory.mktemp("sessions")
    ours, pytests = base / "ours", base / "pytests"
    _make(ours, folders, garbage)
    _make(pytests, folders, garbage)

    tmp_cleanup.remove_before_the_session(ours, keep)
    _new_session(ours)
    before_the_end = _listing(ours)
    _end(ours, keep)

    _new_session(pytests)
    _end(pytests, keep)

    assert _listing(ours) == before_the_end, "pytest's cleanup at the end found something left"
    assert before_the_end == _listing(pytests)


def test_a_running_session_and_the_kept_ones_are_never_touched(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _make(root, {1: FRESH, 2: NONE, 3: NONE, 4: NONE, 5: NONE}, garbage=0)
    tmp_cleanup.remove_before_the_session(root, keep=3)
    # The new session will be 6: with it, 4 and 5 are the three kept. 1 still runs (a fresh lock).
    assert sorted(p.name for p in root.iterdir()) == ["pytest-1", "pytest-4", "pytest-5"]


def test_keep_below_two_or_a_missing_root_removes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    tmp_cleanup.remove_before_the_session(root, keep=3)  # no root: nothing to do, no error
    _make(root, {1: NONE, 2: NONE}, garbage=1)
    for keep in (0, 1):
        tmp_cleanup.remove_before_the_session(root, keep)
    assert sorted(p.name for p in root.iterdir()) == ["garbage-0", "pytest-1", "pytest-2"]
