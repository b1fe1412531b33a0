"""A file dragged from the Files panel onto the composer becomes an ``@project/...`` reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView

from crewagent.ui.mainwindow import MainWindow
from tests.ui.conftest import drop_on, open_project


def test_a_file_dragged_from_the_files_panel_drops_into_the_composer_as_a_reference(
    qtbot: Any, project: Any, window: MainWindow
) -> None:
    report = Path(project.artifacts_dir) / "report.md"
    report.write_text("# Report\n", encoding="utf-8")
    open_project(qtbot, window, project.root)
    view = window.project_view
    view.new_chat()
    conversation = view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and conversation.composer.isEnabled())
    view.sidebar_switch.setCurrentIndex(1)
    files = view.files
    qtbot.waitUntil(lambda: files.index_of(str(report)).isValid())
    index = files.index_of(str(report))

    # The tree starts drags of its files, with what its model puts on the drag: file URLs.
    assert files.tree.dragEnabled() and files.tree.dragDropMode() == QAbstractItemView.DragDropMode.DragOnly
    assert index.flags() & Qt.ItemFlag.ItemIsDragEnabled
    mime = files.tree.model().mimeData([index])
    assert "text/uri-list" in mime.formats() and mime.urls()[0].toLocalFile() == str(report)

    # Dropped on the composer (its text box's viewport gets the drag events).
    composer = conversation.composer
    composer.input.setPlainText("please read")
    composer.input.moveCursor(composer.input.textCursor().MoveOperation.End)
    drop_on(composer.input.viewport(), mime)
    assert composer.input.toPlainText() == "please read @project/artifacts/report.md "
