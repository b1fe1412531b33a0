"""Keyboard first (issue 18 item 18): the composer takes the keyboard when a conversation opens, and
Up in an empty composer recalls the user's last message of the conversation to edit it.

A conversation opened by moving through the Works list with the arrow keys leaves the keyboard in
the list (the next arrow goes on browsing); Enter on the row then hands it to the composer."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QListView, QPlainTextEdit, QTextEdit, QWidget

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


#: Keys that move a list's current row: the user is browsing, not picking a conversation to type in.
_BROWSE_KEYS = frozenset(
    {Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Home, Qt.Key.Key_End}
)


class BrowsableList(QListView):
    """A list view that says when its current row is being moved with the arrow keys (``browsing``)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        #: True while a key press that moves the current row is handled (the selection changes then).
        self.browsing = False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.browsing = event.key() in _BROWSE_KEYS
        try:
            super().keyPressEvent(event)
        finally:
            self.browsing = False
