"""The About dialog says the version, where data and settings live, and how to report a problem."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QGuiApplication

import crewagent
from crewagent.ui.about import AboutDialog, AppFolders


def test_about_shows_version_folders_and_copies_diagnostics(qtbot: Any) -> None:
    folders = AppFolders("/tmp/example-data", "/tmp/example-config")
    dialog = AboutDialog(folders)
    qtbot.addWidget(dialog)
    dialog.show()
    text = dialog.details.text()
    assert "/tmp/example-data" in text and "/tmp/example-config" in text
    assert crewagent.__version__ in dialog.windowTitle() + "".join(w.text() for w in dialog.findChildren(type(dialog.details)))
    dialog.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert f"CrewAgent Desktop {crewagent.__version__}" in copied
    assert "Data folder: /tmp/example-data" in copied


def test_help_about_opens_the_dialog_with_this_runs_folders(window: Any, qtbot: Any) -> None:
    window.about_action.trigger()
    qtbot.waitUntil(lambda: window.about_dialog is not None and window.about_dialog.isVisible())
    assert "Data folder" in window.about_dialog.details.text()
