"""The agent's menu above the composer: a selectable list shown when Agent-mode input asks for it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QToolButton, QVBoxLayout, QWidget

from crewagent.worker.turn_values import AgentMenu

#: Rows shown before the list scrolls.
MAX_VISIBLE_ROWS = 6


class AgentMenuPanel(QFrame):
    """Shows an :class:`AgentMenu`; picking a row (click, Enter) emits its number.

    The worker routes a number like any typed input, so picking ``2`` here is the same as typing
    ``2``: one path for both.
    """

    #: ``(number)``: the user picked this item (1-based, as typed).
    item_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("agentMenu")
        self.title = QLabel(self)
        self.title.setObjectName("agentMenuTitle")
        self.title.setWordWrap(True)
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("agentMenuClose")
        self.close_button.setText("✕")
        self.note = QLabel(self)
        self.note.setObjectName("agentMenuNote")
        self.note.setWordWrap(True)
        self.note.hide()
        self.list = QListWidget(self)
        self.list.setObjectName("agentMenuList")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.list)
        self._menu: AgentMenu | None = None
        self.list.itemActivated.connect(self._on_activated)
        self.list.itemClicked.connect(self._on_activated)
        self.close_button.clicked.connect(self.dismiss)
        self.hide()
        self.retranslate_ui()

    @property
    def menu(self) -> AgentMenu | None:
        return self._menu

    def show_menu(self, menu: AgentMenu) -> None:
        self._menu = menu
        self.list.clear()
        for entry in menu.entries:
            item = QListWidgetItem(f"{entry.number}.  {entry.trigger}  —  {entry.description}", self.list)
            item.setData(Qt.ItemDataRole.UserRole, entry.number)
            if entry.kind == "workflow":
                item.setToolTip(self.tr("Starts this workflow in Run mode, in this conversation"))
            elif entry.kind == "exec":
                item.setToolTip(self.tr("Runs a file of its package"))
        rows = min(MAX_VISIBLE_ROWS, max(1, self.list.count()))
        self.list.setFixedHeight(rows * (self.list.sizeHintForRow(0) if self.list.count() else 24) + 6)
        self.list.setVisible(menu.reason != "needs_package")
        if self.list.count():
            self.list.setCurrentRow(0)
        self.retranslate_ui()
        self.show()

    @Slot()
    def dismiss(self) -> None:
        self._menu = None
        self.list.clear()
        self.hide()

    def retranslate_ui(self) -> None:
        """Every text the panel sets itself; called again on a language switch."""
        self.close_button.setToolTip(self.tr("Close the menu"))
        menu = self._menu
        if menu is None:
            return
        name = menu.agent_name
        if menu.reason == "ambiguous":
            self.title.setText(self.tr("“{query}” matches several items of {name}'s menu. Which one?").format(query=menu.query, name=name))
        elif menu.reason == "needs_package":
            entry = menu.entries[0] if menu.entries else None
            self.title.setText(self.tr("{name}: {trigger}").format(name=name, trigger=entry.trigger if entry else menu.query))
        elif menu.query:
            self.title.setText(self.tr("{name}'s menu has no item {query}. Pick one, or type its number or trigger:").format(name=name, query=menu.query))
        else:
            self.title.setText(self.tr("{name}'s menu: pick one, or type its number or trigger").format(name=name))
        if menu.reason == "needs_package":
            kind = menu.entries[0].kind if menu.entries else "workflow"
            if kind == "workflow":
                self.note.setText(self.tr("This item starts a workflow that no installed package provides."))
            else:
                self.note.setText(
                    self.tr("This item runs a file of its package that is not a workflow; this version can only start workflows.")
                )
            self.note.show()
        else:
            self.note.hide()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    @Slot(QListWidgetItem)
    def _on_activated(self, item: QListWidgetItem) -> None:
        number = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(number, int):
            self.item_chosen.emit(number)
