"""View > Show Sidebar (Ctrl+B): hides and shows the project's sidebar, remembered in ui-state.ini."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

#: Hide or show the sidebar, from anywhere in the main window.
TOGGLE_SIDEBAR = "Ctrl+B"
STATE_KEY = "projectView/sidebarVisible"


class SidebarToggle(QObject):
    """Owns the checkable action and the View menu that holds it; the sidebar's state is saved on each toggle.

    Issue 18 item 17: with the sidebar hidden, a narrow window gives all its width to the conversation.
    """

    def __init__(self, window: QMainWindow, sidebar: QWidget, state: QSettings | None, before: QAction):
        super().__init__(window)
        self._sidebar, self._state = sidebar, state
        self.action = QAction(window)
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence(TOGGLE_SIDEBAR))
        self.action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        window.addAction(self.action)  # works with the menu bar hidden
        self.menu = QMenu(window)
        self.menu.addAction(self.action)
        window.menuBar().insertMenu(before, self.menu)
        visible = True if state is None else state.value(STATE_KEY, True, type=bool)
        self.action.setChecked(bool(visible))
        sidebar.setVisible(bool(visible))
        self.action.toggled.connect(self._on_toggled)
        self.retranslate_ui()
        window.installEventFilter(self)  # a language switch renames the menu and the action

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        return False

    def retranslate_ui(self) -> None:
        self.menu.setTitle(QCoreApplication.translate("SidebarToggle", "&View"))
        self.action.setText(QCoreApplication.translate("SidebarToggle", "Show &Sidebar"))

    @Slot(bool)
    def _on_toggled(self, visible: bool) -> None:
        self._sidebar.setVisible(visible)
        if self._state is not None:
            self._state.setValue(STATE_KEY, visible)
            self._state.sync()
