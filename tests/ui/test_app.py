"""run_gui: what ``crewagent`` and ``crewagent gui --project PATH`` call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from crewagent.ui.app import run_gui
from crewagent.ui.mainwindow import MainWindow


@pytest.fixture
def restored_app_look(qapp: QApplication) -> Iterator[None]:
    """run_gui styles the whole application; give the next tests the look they had."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    yield
    qapp.setStyleSheet(sheet)
    qapp.setStyle(style)
    qapp.setPalette(palette)


def test_run_gui_opens_the_project_folder_then_exits_cleanly(
    qapp: QApplication, tmp_path: Path, isolated_dirs: dict[str, Path], restored_app_look: None
) -> None:
    folder = tmp_path / "from-the-command-line"
    seen: list[str] = []

    def close_once_the_project_shows() -> None:
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible() and widget.project_view.loaded:
                seen.append(widget.windowTitle())
                widget.close()

    # If the project never shows, close anyway so that the test fails instead of hanging.
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(qapp.closeAllWindows)
    deadline.start(10_000)
    poll = QTimer()
    poll.timeout.connect(close_once_the_project_shows)
    poll.start(20)
    try:
        code = run_gui(str(isolated_dirs["data"]), str(folder))
    finally:
        poll.stop()
        deadline.stop()

    assert code == 0
    assert seen == ["from-the-command-line — CrewAgent"]
    assert (folder / ".crewagent.json").is_file()  # --project makes the folder a project
    assert (isolated_dirs["config"] / "ui-state.ini").is_file()  # geometry saved on close


def test_the_window_icon_and_style_resources_are_installed(qapp: QApplication, restored_app_look: Any) -> None:
    from crewagent.ui.app import setup_application

    setup_application(qapp)
    assert not qapp.windowIcon().isNull()
    assert "#startPage" in qapp.styleSheet()
