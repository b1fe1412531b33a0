"""RunFiles: when the Run workspace reads its run again after a change on disk (a real QFileSystemWatcher)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.ui.run_workspace import run_files
from crewagent.ui.run_workspace.run_files import RunFiles

#: The folds made long, so that a read at once and a folded read cannot be mistaken for each other.
FOLD_MS = 600


@pytest.fixture
def watched(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RunFiles, Path, list[tuple[float, bool]]]:
    """A RunFiles watching ``run/workflow.md`` and ``run/execution.jsonl``; each ``reload_due`` as
    (monotonic time, whether the state file was watched at that moment)."""
    monkeypatch.setattr(run_files, "RELOAD_DELAY_MS", FOLD_MS)
    monkeypatch.setattr(run_files, "BUSY_RELOAD_DELAY_MS", FOLD_MS)
    folder = tmp_path / "run"
    folder.mkdir()
    state = folder / "workflow.md"
    state.write_text("currentNodeId: a\n", encoding="utf-8")
    (folder / "execution.jsonl").write_text("", encoding="utf-8")
    files = RunFiles()
    files.watch([str(state), str(folder / "execution.jsonl")])
    assert str(state) in files.watcher.files() and str(folder) in files.watcher.directories()
    due: list[tuple[float, bool]] = []
    files.reload_due.connect(lambda: due.append((time.monotonic(), str(state) in files.watcher.files())))
    return files, state, due


def _replace(state: Path, text: str, scratch: Path) -> float:
    """Another process's atomic write: the new file made elsewhere, then renamed over the watched one."""
    temp = scratch / "new.tmp"
    temp.write_text(text, encoding="utf-8")
    started = time.monotonic()
    os.replace(temp, state)
    return started


def test_a_replace_is_read_at_once_and_the_new_file_watched_again_each_time(
    qtbot: Any, tmp_path: Path, watched: tuple[RunFiles, Path, list[tuple[float, bool]]]
) -> None:
    files, state, due = watched
    for n in range(4):  # and again: the watch follows each new file
        count = len(due)
        replaced = _replace(state, f"currentNodeId: n{n}\n", tmp_path)
        qtbot.waitUntil(lambda count=count: len(due) > count, timeout=FOLD_MS // 2)  # not the fold's wait
        at, watched_again = due[count]
        assert (at - replaced) * 1000 < FOLD_MS / 2 and watched_again  # watched before the read is even asked for
        qtbot.wait(FOLD_MS + 100)  # the folder's own event of the rename: at most one read more, folded
        assert str(state) in files.watcher.files()


def test_during_a_turn_a_replace_joins_the_fold(qtbot: Any, tmp_path: Path, watched: tuple[RunFiles, Path, list[tuple[float, bool]]]) -> None:
    """The engine's own writes: its progress report shows the steps at once, the read can wait."""
    files, state, due = watched
    files.busy = True
    replaced = _replace(state, "currentNodeId: b\n", tmp_path)
    _replace(state, "currentNodeId: c\n", tmp_path)
    qtbot.waitUntil(lambda: bool(due), timeout=3 * FOLD_MS)
    qtbot.wait(FOLD_MS // 2)
    assert len(due) == 1 and (due[0][0] - replaced) * 1000 >= FOLD_MS * 0.9
    assert str(state) in files.watcher.files()


def test_writes_in_place_are_folded_into_one_read(qtbot: Any, watched: tuple[RunFiles, Path, list[tuple[float, bool]]]) -> None:
    """An editor writing the file itself may write it in pieces: read once, after the burst started."""
    files, state, due = watched
    started = time.monotonic()
    with state.open("w", encoding="utf-8") as handle:
        handle.write("currentNodeId: ")
        handle.flush()
        handle.write("d\n")
    qtbot.waitUntil(lambda: bool(due), timeout=3 * FOLD_MS)
    qtbot.wait(FOLD_MS // 2)
    assert len(due) == 1 and (due[0][0] - started) * 1000 >= FOLD_MS * 0.9
