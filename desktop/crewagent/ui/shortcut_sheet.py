"""The shortcuts sheet (Ctrl+/, issue 18 item 18): every key the window answers to, in a two-column table.

The list is written here, not collected from the window's actions, because some keys are not
shortcuts at all (Enter in the composer, F2 in the Works list, Up to recall a message) and a
collected list could not say what a key does where. tests/ui/test_keyboard.py checks that every
QAction and QShortcut registered on the window has its line here, so a new shortcut without one fails.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

#: Open the shortcuts sheet.
SHEET = "Ctrl+/"


def shortcut_entries() -> list[tuple[QKeySequence, str]]:
    """``(key, what it does)`` for every key of the window, in the order the sheet shows them."""
    standard = QKeySequence.StandardKey
    return [
        (QKeySequence(SHEET), QCoreApplication.translate("ShortcutSheet", "Show this list of shortcuts")),
        (QKeySequence(standard.New), QCoreApplication.translate("ShortcutSheet", "New project")),
        (QKeySequence(standard.Open), QCoreApplication.translate("ShortcutSheet", "Open a project")),
        (QKeySequence("Ctrl+Shift+N"), QCoreApplication.translate("ShortcutSheet", "New conversation (Chat, Agent or Workflow)")),
        (QKeySequence("Ctrl+Shift+W"), QCoreApplication.translate("ShortcutSheet", "Exit the project")),
        (QKeySequence("Ctrl+Shift+E"), QCoreApplication.translate("ShortcutSheet", "Export the conversation")),
        (QKeySequence("Ctrl+,"), QCoreApplication.translate("ShortcutSheet", "Settings")),
        (QKeySequence("Ctrl+Q"), QCoreApplication.translate("ShortcutSheet", "Quit")),
        (QKeySequence("Ctrl+K"), QCoreApplication.translate("ShortcutSheet", "Search conversations (in the Logs panel: clear the log)")),
        (QKeySequence("Ctrl+L"), QCoreApplication.translate("ShortcutSheet", "Show or hide the run's Logs panel")),
        (QKeySequence("Ctrl+B"), QCoreApplication.translate("ShortcutSheet", "Show or hide the sidebar")),
        (QKeySequence("Enter"), QCoreApplication.translate("ShortcutSheet", "Composer: send the message")),
        (QKeySequence("Shift+Enter"), QCoreApplication.translate("ShortcutSheet", "Composer: new line")),
        (QKeySequence("Up"), QCoreApplication.translate("ShortcutSheet", "Empty composer: recall your last message to edit it")),
        (QKeySequence("Ctrl+Shift+I"), QCoreApplication.translate("ShortcutSheet", "Composer: attach images (or paste or drop them)")),
        (QKeySequence("Esc"), QCoreApplication.translate("ShortcutSheet", "Stop the running answer; close a menu or dialog")),
        (QKeySequence("F2"), QCoreApplication.translate("ShortcutSheet", "Works list: rename the conversation")),
        (QKeySequence("Enter"), QCoreApplication.translate("ShortcutSheet", "Works list: type in the selected conversation (the arrow keys only browse)")),
        (QKeySequence(standard.Delete), QCoreApplication.translate("ShortcutSheet", "Works list, recent projects: delete or forget the selected item")),
        (QKeySequence(standard.Find), QCoreApplication.translate("ShortcutSheet", "Full output viewer: find")),
        (QKeySequence(standard.FindNext), QCoreApplication.translate("ShortcutSheet", "Full output viewer: next match")),
        (QKeySequence(standard.FindPrevious), QCoreApplication.translate("ShortcutSheet", "Full output viewer: previous match")),
        (QKeySequence("Ctrl+S"), QCoreApplication.translate("ShortcutSheet", "Settings: apply the changes")),
        (QKeySequence(standard.Copy), QCoreApplication.translate("ShortcutSheet", "Settings, Packages: copy the selected problem")),
        (QKeySequence(standard.Copy), QCoreApplication.translate("ShortcutSheet", "Conversation: copy the text selected in a message")),
    ]


class ShortcutSheet(QDialog):
    """A small non-modal dialog: the key (as the platform writes it) and what it does."""

    entries = staticmethod(shortcut_entries)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("shortcutSheet")
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        rows = shortcut_entries()
        table = QTableWidget(len(rows), 2, self)
        table.setHorizontalHeaderLabels([self.tr("Shortcut"), self.tr("Action")])
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setShowGrid(False)
        for row, (key, text) in enumerate(rows):
            table.setItem(row, 0, QTableWidgetItem(key.toString(QKeySequence.SequenceFormat.NativeText)))
            table.setItem(row, 1, QTableWidgetItem(text))
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(560, 520)


class ShortcutSheetOpener(QObject):
    """Ctrl+/ on ``window`` opens the sheet, built anew each time so that it is in the current language.

    ``action`` is the window's QAction (the main window also puts it in the Help menu); ``sheet`` the
    sheet last opened, or None.
    """

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        self.sheet: ShortcutSheet | None = None
        self.action = QAction(window)
        self.action.setShortcut(QKeySequence(SHEET))
        self.action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        window.addAction(self.action)  # the shortcut works with the menu bar hidden
        self.action.triggered.connect(self.open)

    @Slot()
    def open(self) -> None:
        if self.sheet is not None:
            self.sheet.close()
            self.sheet.deleteLater()
        self.sheet = ShortcutSheet(self._window)
        self.sheet.show()
        self.sheet.raise_()
