"""run_gui: what ``crewagent`` and ``crewagent gui --project PATH`` call."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

import crewagent.ui.app as app_module
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
    qapp: QApplication, tmp_path: Path, isolated_dirs: dict[str, Path], restored_app_look: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The window shows when the worker has read the settings, not at a deadline: even when the
    # worker answers before the window's constructor has returned (made certain here).
    monkeypatch.setattr(app_module, "SHOW_DEADLINE_MS", 60_000)
    answered = threading.Event()
    build = MainWindow.__init__

    def build_then_wait_for_the_answer(self: MainWindow, worker: Any, **options: Any) -> None:
        worker.settings_changed.connect(lambda *_: answered.set(), Qt.ConnectionType.DirectConnection)
        build(self, worker, **options)
        assert answered.wait(60)  # the worker's thread starts and reads settings; slow at load 20

    monkeypatch.setattr(MainWindow, "__init__", build_then_wait_for_the_answer)
    folder = tmp_path / "from-the-command-line"
    seen: list[str] = []

    def close_once_the_project_shows() -> None:
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible() and widget.project_view.loaded:
                seen.append(widget.windowTitle())
                widget.close()

    # If the project never shows (a hidden window counts), stop so that the test fails instead of
    # hanging. Generous: 10 s ran out on the shared 2-core machine at load ~25 (the run ends as soon
    # as the project shows).
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(qapp.quit)
    deadline.start(60_000)
    poll = QTimer()
    poll.timeout.connect(close_once_the_project_shows)
    poll.start(20)
    try:
        code = run_gui(str(isolated_dirs["data"]), str(folder))
    finally:
        poll.stop()
        deadline.stop()
        for widget in qapp.topLevelWidgets():  # run_gui returns with its window closed, not deleted
            if isinstance(widget, MainWindow):
                widget.deleteLater()

    assert code == 0
    assert seen == ["from-the-command-line — CrewAgent"]
    assert (folder / ".crewagent.json").is_file()  # --project makes the folder a project
    assert (isolated_dirs["config"] / "ui-state.ini").is_file()  # geometry saved on close


def test_the_window_icon_and_style_resources_are_installed(qapp: QApplication, restored_app_look: Any) -> None:
    from crewagent.ui.app import setup_application

    setup_application(qapp)
    assert not qapp.windowIcon().isNull()
    assert "#startPage" in qapp.styleSheet()


def test_the_theme_the_app_already_shows_is_not_applied_again(qtbot: Any, qapp: QApplication, restored_app_look: None) -> None:
    """setup_application styles the app before the window exists; the first settings naming the
    same theme must not set the stylesheet again, which restyles every widget of the open window
    (about a second of CPU at each start). A real change still applies."""
    from crewagent.ui.app import setup_application
    from crewagent.ui.theme import ThemeManager, stylesheet, theme_of

    setup_application(qapp)
    shown = theme_of(qapp.palette())
    manager = ThemeManager(qapp)
    assert manager.applied == shown
    with qtbot.assertNotEmitted(manager.theme_applied):
        manager.set_choice(shown)
    other = "dark" if shown == "light" else "light"
    with qtbot.waitSignal(manager.theme_applied) as applied:
        manager.set_choice(other)
    assert applied.args == [other] and qapp.styleSheet() == stylesheet(other)
