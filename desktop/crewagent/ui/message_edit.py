"""Editing one of the user's messages (issue 18 item 12): its text in the composer; the next Send replaces it.

What the edit does to the conversation is decided in core (core/message_actions.py): the edited
message starts a new branch, the old one stays in the log. Here only the composer's side: the
text to edit, a hint that says what Send will do, and Esc to give up.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QTextCursor

from crewagent.ui.composer import Composer


class MessageEdit(QObject):
    """Which message the composer is editing (None: it writes a new one)."""

    def __init__(self, composer: Composer, parent: QObject | None = None):
        super().__init__(parent)
        self._composer = composer
        self.message_id: str | None = None
        composer.input.escape.connect(self.cancel)

    def start(self, message_id: str, text: str) -> None:
        """Put the message's text in the composer; Send will replace the message."""
        composer = self._composer
        if composer.busy:
            return
        self.message_id = message_id
        composer.input.setPlainText(text)
        composer.input.moveCursor(QTextCursor.MoveOperation.End)
        composer.set_hint(self.tr("Editing a message: Send replaces it and the answers after it (the old ones stay in the log). Esc cancels."))
        composer.input.setFocus()

    def take(self) -> str | None:
        """The message being edited, once (the composer is sending its new text now)."""
        message_id, self.message_id = self.message_id, None
        if message_id is not None:
            self._composer.set_hint("")
        return message_id

    @Slot()
    def cancel(self) -> None:
        """Esc, or another conversation: the composer writes a new message again."""
        if self.message_id is None or self._composer.busy:
            return
        self.message_id = None
        self._composer.input.clear()
        self._composer.set_hint("")
