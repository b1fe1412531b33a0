"""Keys the whole window answers to, and how a panel claims one of them while it has the focus.

Ctrl+K focuses the search box of the Works panel from anywhere in the window (a window-level
QAction: ``MainWindow.search_action``). A panel that wants Ctrl+K (or any window key) for
itself while the keyboard is in it, such as a Logs panel where Ctrl+K clears the log, must not
add a second QShortcut or QAction for the same key: Qt would then find two shortcuts for one key
in the focus widget's context, call the key ambiguous and run neither. It uses :class:`PanelKey`
instead: the panel accepts the key's ``ShortcutOverride`` while the focus is inside it, so Qt
hands the key to the panel and the window's shortcut does not fire there; everywhere else the
window's shortcut works as before.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QWidget

#: Focus the search box (Works panel), from anywhere in the main window.
SEARCH = "Ctrl+K"


class PanelKey(QObject):
    """Claims ``sequence`` for ``panel`` and its children while one of them has the focus.

    ``activated`` is emitted when the key is pressed there. Key events (the ``ShortcutOverride``
    Qt sends before it looks for shortcuts, then the key press) travel from the focus widget up
    to its parents, so a filter on the panel sees them for any child.
    """

    #: The key was pressed while the focus was inside the panel.
    activated = Signal()

    def __init__(self, sequence: str | QKeySequence, panel: QWidget):
        super().__init__(panel)
        self.sequence = QKeySequence(sequence)
        panel.installEventFilter(self)

    def _matches(self, event: QEvent) -> bool:
        return isinstance(event, QKeyEvent) and QKeySequence(event.keyCombination()) == self.sequence

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ShortcutOverride and self._matches(event):
            event.accept()  # "this key is mine": Qt delivers it as a key press instead of a shortcut
            return True
        if kind == QEvent.Type.KeyPress and self._matches(event):
            self.activated.emit()
            return True
        return False
