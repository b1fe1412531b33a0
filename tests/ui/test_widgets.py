"""Smaller pieces: the New Project dialog, the message bar and the short texts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialogButtonBox, QLineEdit, QToolButton

from crewagent.ui import formatting
from crewagent.ui.dialogs import NewProjectAnswer, NewProjectDialog
from crewagent.ui.message_bar import MessageBar


def test_new_project_dialog_needs_a_name_and_builds_the_folder(qtbot: Any, tmp_path: Path) -> None:
    dialog = NewProjectDialog()
    qtbot.addWidget(dialog)
    name, location = dialog.findChildren(QLineEdit)
    create = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)

    assert not create.isEnabled()  # no name yet
    location.setText(str(tmp_path))
    name.setText("  Market study ")
    assert create.isEnabled()
    assert dialog.answer() == NewProjectAnswer(folder=str(tmp_path / "Market study"), name="Market study")
    name.setText("a/b")
    assert not create.isEnabled()  # a name is not a path


def test_message_bar_shows_until_dismissed(qtbot: Any) -> None:
    bar = MessageBar()
    qtbot.addWidget(bar)
    bar.show_error("The disk is full.")
    assert bar.isVisible() and bar.text == "The disk is full."
    with qtbot.waitSignal(bar.dismissed):
        bar.findChild(QToolButton, "messageBarClose").click()
    assert not bar.isVisible() and bar.text == ""


def test_relative_times_and_counts() -> None:
    now = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
    assert formatting.relative_time(now - timedelta(seconds=20), now) == "just now"
    assert formatting.relative_time(now - timedelta(minutes=5), now) == "5 min ago"
    assert formatting.relative_time(now - timedelta(hours=3), now) == "3 h ago"
    assert formatting.relative_time(now - timedelta(days=40), now) not in ("just now", "yesterday")
    assert formatting.message_count(0) == "No messages"
    assert formatting.message_count(1) == "1 message"
    assert formatting.message_count(12) == "12 messages"
    assert [formatting.mode_label(mode) for mode in ("chat", "agent", "run")] == ["Chat", "Agent", "Workflow"]
