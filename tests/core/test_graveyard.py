"""core/store/_graveyard.py: a replace frees the old file after the call, on another thread, and leaves nothing behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from crewagent.core.errors import StoreWriteError
from crewagent.core.store import _graveyard
from crewagent.core.store._graveyard import GRAVEYARD, drain, replace_unsynced

pytestmark = pytest.mark.skipif(not _graveyard.DEFERS, reason="POSIX only: elsewhere the plain replace")


def test_the_old_file_is_unlinked_after_the_replace_and_off_the_calling_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "runs" / "index.json"
    target.parent.mkdir()
    target.write_bytes(b"[old]\n")
    old_inode = target.stat().st_ino
    release = threading.Event()
    unlinked_on: list[str] = []
    real_unlink = _graveyard._unlink

    def held_unlink(grave: Path) -> None:
        assert release.wait(10)
        unlinked_on.append(threading.current_thread().name)
        real_unlink(grave)

    monkeypatch.setattr(_graveyard, "_unlink", held_unlink)
    replace_unsynced(target, b"[new]\n")

    # The call has returned: the path holds the new file, the old one is still linked, unfreed.
    assert target.read_bytes() == b"[new]\n"
    (kept,) = (target.parent / GRAVEYARD).iterdir()
    assert (kept.stat().st_ino, kept.read_bytes(), kept.stat().st_nlink) == (old_inode, b"[old]\n", 1)
    release.set()
    assert drain()
    assert list((target.parent / GRAVEYARD).iterdir()) == []
    assert unlinked_on and threading.current_thread().name not in unlinked_on
    assert sorted(p.name for p in target.parent.iterdir()) == [GRAVEYARD, "index.json"]  # no temp file left


def test_a_first_write_keeps_nothing_and_leftovers_of_a_dead_process_are_swept(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "index.json"
    replace_unsynced(target, b"[]\n")  # no old file: nothing to keep
    assert drain() and target.read_bytes() == b"[]\n" and not (target.parent / GRAVEYARD).exists()

    left = target.parent / GRAVEYARD / "index.json.0123"
    left.parent.mkdir()
    left.write_bytes(b"[older]\n")  # a process killed before its unlink
    replace_unsynced(target, b"[1]\n")
    assert drain()
    assert target.read_bytes() == b"[1]\n" and list(left.parent.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_in_place_and_no_second_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "index.json"
    target.write_bytes(b"[old]\n")

    def full_disk(path: Path, data: bytes, *, sync: bool = True) -> None:
        raise StoreWriteError(f"{path}: no space left on device")

    monkeypatch.setattr(_graveyard, "atomic_write_bytes", full_disk)
    with pytest.raises(StoreWriteError):
        replace_unsynced(target, b"[new]\n")
    assert drain()
    assert target.read_bytes() == b"[old]\n" and target.stat().st_nlink == 1
    assert list((tmp_path / GRAVEYARD).iterdir()) == []
