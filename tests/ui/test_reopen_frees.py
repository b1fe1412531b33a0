"""Issue 14: re-opening a conversation frees the previous copy by reference counting alone.

``core/tuning.py`` ``warm_up_once`` freezes the heap once a conversation is open, so the cyclic
collector never looks at what was alive then: a copy of a conversation that was only freed by the
collector (a reference cycle) would stay for the life of the app. This test opens a conversation
three times (switching to another one between the opens) with the collector OFF and counts the
live timeline values of the big conversation: only the copy shown may remain.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from crewagent.cli import main as cli
from crewagent.core.turn_host import FIRST_PAGE
from crewagent.core import tuning
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker.turn_values import LoadedConversation, TimelineMessage
from tests.ui.conftest import open_project

SIZE = 320  # more than FIRST_PAGE: a second copy (2 * SIZE) cannot pass for the first page (SIZE + FIRST_PAGE)
MARK = "reopen-probe "


def _import(data: Path, folder: Path, source: Path, messages: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> str:
    source.write_text(json.dumps(messages), encoding="utf-8")
    assert cli(["import", "--data-dir", str(data), "--project", str(folder), str(source)]) == 0
    return capsys.readouterr().out.strip()


def _live_rows() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is TimelineMessage and o.text.startswith(MARK))


def test_reopening_a_conversation_leaves_one_copy_alive_without_the_collector(
    qtbot: Any, window: MainWindow, tmp_path: Path, isolated_dirs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "proj"
    big = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{MARK}{i}"} for i in range(SIZE)]
    big_id = _import(isolated_dirs["data"], folder, tmp_path / "big.json", big, capsys)
    other_id = _import(isolated_dirs["data"], folder, tmp_path / "small.json", [{"role": "user", "content": "hi"}], capsys)
    monkeypatch.setattr(tuning, "_warmed", True)  # no gc.freeze here: frozen objects are not listed by gc.get_objects
    complete: list[str] = []

    def loaded(value: LoadedConversation) -> None:
        if value.complete:
            complete.append(value.conversation_id)

    window._worker.turns.conversation_loaded.connect(loaded)
    open_project(qtbot, window, folder)
    counts = []
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # reference counting only: what a cycle keeps alive stays
    try:
        for _ in range(3):
            for cid in (other_id, big_id):
                complete.clear()
                qtbot.waitUntil(lambda cid=cid: window.project_view.select_conversation(cid))
                qtbot.waitUntil(lambda cid=cid: cid in complete, timeout=20_000)
            counts.append(_live_rows())
    finally:
        if was_enabled:
            gc.enable()
    # The shown copy, and at most the first page it was opened with: one more copy per open
    # would give at least 2 * SIZE at the second.
    assert all(SIZE <= count <= SIZE + FIRST_PAGE for count in counts), f"live rows of the big conversation after each open: {counts}"
