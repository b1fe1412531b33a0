"""Keyboard first (issue 18 item 18): the composer takes the keyboard when a conversation opens, and
Up in an empty composer recalls the user's last message of the conversation to edit it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit, QWidget

from crewagent.ui.timeline import TimelineModel, TimelineRole


def last_user_text(model: TimelineModel) -> str:
    """The text of the last message the user wrote in the conversation shown ("" when none)."""
    for row in range(model.rowCount() - 1, -1, -1):
        index = model.index(row, 0)
        if index.data(TimelineRole.KIND) == "user" and not index.data(TimelineRole.SYNTHETIC):
            return str(index.data(TimelineRole.TEXT) or "")
    return ""


def take_keyboard(field: QWidget) -> None:
    """Give ``field`` the keyboard, unless the user is typing in a line edit elsewhere (search, rename)."""
    focused = QApplication.focusWidget() or field.window().focusWidget()
    if isinstance(focused, QLineEdit) and focused is not field:
        return
    if field.isEnabled():
        field.setFocus()


def type_into(field: QPlainTextEdit | QTextEdit, text: str) -> None:
    """Give ``field`` the keyboard back with ``text`` typed in it (keys pressed while the timeline had it)."""
    field.setFocus()
    if text:
        field.insertPlainText(text)
