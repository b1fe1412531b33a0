"""Issue 18 item 17: the window works from 800 px wide, with a sidebar Ctrl+B hides and shows (remembered)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QWidget

from crewagent.ui import theme
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import WorkerThread
from tests.ui.conftest import ScriptedDialogs
from tests.ui.test_conversation import open_conversation

NARROWEST = 800


@pytest.fixture(params=["light", "dark"])
def styled(qapp: QApplication, request: Any) -> Iterator[str]:
    """The application styled as the app styles it (the stylesheet's paddings widen widgets)."""
    qapp.setStyleSheet(theme.stylesheet(request.param))
    qapp.setPalette(theme.palette(request.param))
    yield request.param
    qapp.setStyleSheet("")
    qapp.setPalette(QApplication.style().standardPalette())


def _window(qtbot: Any, worker: WorkerThread, dialogs: ScriptedDialogs, state_file: Path) -> MainWindow:
    main = MainWindow(worker.worker, dialogs=dialogs, state=QSettings(str(state_file), QSettings.Format.IniFormat))
    qtbot.addWidget(main)
    main.show()
    return main


def _widest(widget: QWidget, depth: int = 0, out: list[str] | None = None) -> list[str]:
    """Which widgets ask for more than NARROWEST (to say what sets the minimum when this fails)."""
    out = [] if out is None else out
    for child in widget.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
        if child.isVisible() and max(child.minimumSizeHint().width(), child.minimumWidth()) > 120:
            out.append(f"{'  ' * depth}{type(child).__name__}#{child.objectName()} {child.minimumSizeHint().width()} min={child.minimumWidth()}")
            _widest(child, depth + 1, out)
    return out


def test_the_window_works_from_800_px_with_a_project_and_a_conversation_open(
    qtbot: Any, styled: str, project: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    main = _window(qtbot, worker_thread, dialogs, tmp_path / "ui-state.ini")
    open_conversation(qtbot, main, project.root)
    for mode in ("chat", "agent", "run"):
        main.project_view.conversation.header.show_mode(mode)
        assert main.minimumSizeHint().width() <= NARROWEST, (mode, _widest(main))
        assert main.minimumWidth() <= NARROWEST
    run_layout = main.project_view.conversation.run_layout  # the Run workspace and its logs, open
    run_layout.workspace.show()
    run_layout.workspace.set_expanded(True)
    run_layout.set_logs_visible(True)
    main.status_project.setText("/a/very/long/path/to/a/project/folder/that/would/widen/the/status/bar " * 2)
    main.status_provider.setText("OpenAI-compatible · some-very-long-model-name-2026-preview-instruct")
    assert main.minimumSizeHint().width() <= NARROWEST, _widest(main)
    main.resize(NARROWEST, 600)
    qtbot.waitUntil(lambda: main.width() == NARROWEST)
    assert main.project_view.sidebar.isVisible()  # the sidebar still fits beside the conversation


def test_ctrl_b_hides_and_shows_the_sidebar_and_a_new_window_remembers(
    qtbot: Any, project: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    state_file = tmp_path / "ui-state.ini"
    first = _window(qtbot, worker_thread, dialogs, state_file)
    open_conversation(qtbot, first, project.root)
    sidebar = first.project_view.sidebar
    assert sidebar.isVisible()
    first.activateWindow()
    qtbot.keyClick(first.project_view.conversation.composer.input, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert not sidebar.isVisible()
    assert first.sidebar_toggle.action.isChecked() is False
    first.close()

    second = _window(qtbot, worker_thread, dialogs, state_file)
    open_conversation(qtbot, second, project.root)
    assert not second.project_view.sidebar.isVisible()
    second.sidebar_toggle.action.trigger()
    assert second.project_view.sidebar.isVisible()
    second.close()

    third = _window(qtbot, worker_thread, dialogs, state_file)
    open_conversation(qtbot, third, project.root)
    assert third.project_view.sidebar.isVisible()
    third.close()
