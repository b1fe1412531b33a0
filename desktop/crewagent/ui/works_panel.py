"""The Works panel: a project's conversations with New (by type), inline rename, delete and search.

The list mirrors the worker: renaming or deleting only *asks* (a signal); the row changes when
the worker answers. Search filters titles at once (a proxy model) and message text through the
worker, debounced, so that typing never waits on the disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QEvent,
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedLayout,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui import formatting
from crewagent.ui.delegates import LINE_GAP, PAD_X, PAD_Y, ConversationDelegate, repaint_every_minute
from crewagent.ui.keyboard import BrowsableList
from crewagent.ui.models import ConversationListModel, ConversationRole
from crewagent.worker.values import ConversationSummary, SearchHit

_Index = QModelIndex | QPersistentModelIndex

#: The types "New Conversation" offers, in menu order (``run`` is shown as Workflow).
CONVERSATION_TYPES = ("chat", "agent", "run")
#: Typing pauses this long before the message text is searched.
SEARCH_DEBOUNCE_MS = 250
#: Role of the proxy: the snippet of the first message that matched the search ("" when none).
SNIPPET_ROLE = int(ConversationRole.MESSAGE_COUNT) + 100


def type_description(entry_type: str) -> str:
    descriptions = {
        "chat": QCoreApplication.translate("WorksPanel", "A plain conversation with the model"),
        "agent": QCoreApplication.translate("WorksPanel", "Talk to a persona with a menu, such as the code reviewer"),
        "run": QCoreApplication.translate("WorksPanel", "Run a workflow from a package, step by step"),
    }
    return descriptions.get(entry_type, "")


class ConversationFilter(QSortFilterProxyModel):
    """Keeps the conversations whose title contains the query, or whose messages do (worker hits)."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self._needle = ""
        self._hits: dict[str, SearchHit] = {}

    @property
    def query(self) -> str:
        return self._needle

    def set_query(self, query: str) -> None:
        """Filter titles now; message hits for an older query no longer count."""
        needle = query.strip().casefold()
        if needle == self._needle:
            return
        self.beginFilterChange()
        self._needle = needle
        self._hits = {}
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_hits(self, query: str, hits: Iterable[SearchHit]) -> bool:
        """Add the worker's message-text matches; ignored unless they answer the current query."""
        if query.strip().casefold() != self._needle or not self._needle:
            return False
        self.beginFilterChange()
        self._hits = {hit.conversation_id: hit for hit in hits}
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0), [SNIPPET_ROLE])
        return True

    @property
    def text_hits(self) -> int:
        return len(self._hits)

    def hit_at(self, index: _Index) -> SearchHit | None:
        """The message-text match of a row (None when only its title matched, or no search runs)."""
        return self._hits.get(str(index.data(ConversationRole.CONVERSATION_ID))) if index.isValid() else None

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if not self._needle:
            return True
        source = self.sourceModel()
        index = source.index(source_row, 0, source_parent)
        if self._needle in str(index.data(Qt.ItemDataRole.DisplayRole) or "").casefold():
            return True
        return str(index.data(ConversationRole.CONVERSATION_ID)) in self._hits

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == SNIPPET_ROLE or (role == Qt.ItemDataRole.ToolTipRole and self._hits):
            hit = self._hits.get(str(super().data(index, ConversationRole.CONVERSATION_ID)))
            if hit is not None:
                return hit.snippet
            return "" if role == SNIPPET_ROLE else super().data(index, role)
        return super().data(index, role)


class _WorksDelegate(ConversationDelegate):
    """Draws a search snippet instead of the message count, and edits titles in place."""

    #: ``(conversation_id, title)``: the user finished renaming a row.
    renamed = Signal(str, str)

    #: The user tried to give a conversation an empty name.
    rename_refused = Signal()

    def detail_text(self, index: _Index, item: ConversationSummary) -> str:
        snippet = index.data(SNIPPET_ROLE)
        return f"“{snippet}”" if snippet else super().detail_text(index, item)

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: _Index) -> QWidget:
        editor = QLineEdit(parent)
        editor.setObjectName("renameEditor")
        editor.setFrame(True)
        return editor

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        assert isinstance(editor, QLineEdit)
        # Called again whenever the row changes (a turn's count, a reload): what the user typed stays.
        if editor.property("shownTitle") not in (None, editor.text()):
            return
        title = str(index.data(Qt.ItemDataRole.EditRole) or "")
        editor.setProperty("shownTitle", title)
        editor.setText(title)
        editor.selectAll()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem, index: _Index) -> None:
        rect = option.rect.adjusted(PAD_X - 4, PAD_Y - 5, -PAD_X + 4, 0)
        rect.setHeight(editor.sizeHint().height())
        editor.setGeometry(rect)

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: _Index) -> None:
        # The model mirrors the worker: a rename is a request, the row changes when it is done.
        assert isinstance(editor, QLineEdit)
        title = " ".join(editor.text().split())
        if not title:
            self.rename_refused.emit()
            return
        if title != index.data(Qt.ItemDataRole.EditRole):
            self.renamed.emit(str(index.data(ConversationRole.CONVERSATION_ID)), title)


class WorksPanel(QWidget):
    """The conversation list of one project (the project itself is ProjectView's business)."""

    #: ``entry_type`` (chat, agent, run): create a conversation of that type.
    new_conversation_requested = Signal(str)

    #: ``(conversation_id, title)``: rename that conversation (the title is not empty).
    rename_requested = Signal(str, str)

    #: ``conversation_id``: delete that conversation (the user has confirmed).
    delete_requested = Signal(str)

    #: ``query``: search the message text (debounced; "" clears the search).
    search_requested = Signal(str)

    #: ``conversation_id``: the selected conversation changed ("" when none); see :attr:`browsing`.
    current_changed = Signal(str)

    #: Enter on the open conversation's row: the user wants to type in it.
    entered = Signal()

    #: ``(conversation_id, message_id, query)``: the user picked a conversation that the search
    #: found in its messages: show it at that message with the query marked.
    hit_activated = Signal(str, str, str)

    #: The search was cleared (no message should stay marked).
    search_cleared = Signal()

    #: ``message``: something the user should read (e.g. an empty name was refused).
    notice = Signal(str)

    #: The empty list's "Try a workflow": a Workflow conversation with the built-in example picked.
    try_workflow_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("worksPanel")
        self._loaded = False
        self._has_project = False
        self._searching = False
        # The conversation open in the workspace: it stays open while a search hides its row.
        self._open_id = ""
        # True while a search filters the list: the selection it moves is not the user's choice.
        self._filtering = False
        self.delete_box: QMessageBox | None = None
        self.model = ConversationListModel(self)
        self.proxy = ConversationFilter(self)
        self.proxy.setSourceModel(self.model)

        self.new_button = QToolButton(self)
        self.new_button.setObjectName("newConversation")
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.type_menu = QMenu(self.new_button)
        self.type_menu.setObjectName("conversationTypes")
        self._type_actions: dict[str, QAction] = {}
        for entry_type in CONVERSATION_TYPES:
            action = self.type_menu.addAction("")
            action.setData(entry_type)
            self._type_actions[entry_type] = action
        self.new_button.setMenu(self.type_menu)
        self.search = QLineEdit(self)
        self.search.setObjectName("worksSearch")
        self.search.setClearButtonEnabled(True)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.setSpacing(6)
        header.addWidget(self.search, 1)
        header.addWidget(self.new_button)
        self.search_status = QLabel(self)
        self.search_status.setObjectName("hint")
        self.search_status.hide()

        self.view = BrowsableList(self)
        self._pending_merge: list[ConversationSummary] | None = None  # a reload held while a title is edited
        self.view.setObjectName("conversationList")
        self.view.setModel(self.proxy)
        self.delegate = _WorksDelegate(self.view)
        self.view.setItemDelegate(self.delegate)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setUniformItemSizes(True)
        self.view.setMouseTracking(True)
        self.view.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.empty_label = QLabel(self)
        self.empty_label.setObjectName("emptyState")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.try_workflow_button = QPushButton(self)
        self.try_workflow_button.setObjectName("tryWorkflow")
        empty_page = QWidget(self)
        empty_column = QVBoxLayout(empty_page)
        empty_column.addStretch(1)
        empty_column.addWidget(self.empty_label)
        empty_column.addWidget(self.try_workflow_button, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_column.addStretch(1)
        self._empty_page = empty_page
        self._list_stack = QStackedLayout()
        self._list_stack.addWidget(empty_page)
        self._list_stack.addWidget(self.view)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(header)
        layout.addWidget(self.search_status)
        layout.addLayout(self._list_stack, 1)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DEBOUNCE_MS)
        self._delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.view)
        self._delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

        self.type_menu.triggered.connect(self._on_type_chosen)
        self.try_workflow_button.clicked.connect(self.try_workflow_requested)
        self.search.textChanged.connect(self._on_search_typed)
        self._debounce.timeout.connect(self._send_search)
        self.delegate.renamed.connect(self.rename_requested)
        self.delegate.rename_refused.connect(self._on_rename_refused)
        # After the editor has closed (the view leaves EditingState once closeEditor returns).
        # (The panel as the timer's context: a panel deleted meanwhile is not called.)
        self.delegate.closeEditor.connect(lambda *_: QTimer.singleShot(0, self, self._apply_pending_merge))
        self._delete_shortcut.activated.connect(self.delete_current)
        self.view.customContextMenuRequested.connect(self._show_context_menu)
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.view.clicked.connect(self._on_clicked)
        self.view.activated.connect(self.entered)
        for signal in (self.proxy.modelReset, self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.layoutChanged):
            signal.connect(self._update_empty_state)
        self._clock = repaint_every_minute(self.view)
        self.retranslate_ui()

    # -- texts -------------------------------------------------------------------------------

    def retranslate_ui(self) -> None:
        self.new_button.setText(self.tr("+ New"))
        self.new_button.setToolTip(self.tr("New conversation: Chat, Agent or Workflow (Ctrl+Shift+N)"))
        for entry_type, action in self._type_actions.items():
            action.setText(formatting.mode_label(entry_type))
            action.setToolTip(type_description(entry_type))
            action.setStatusTip(type_description(entry_type))
        self.type_menu.setToolTipsVisible(True)
        self.search.setPlaceholderText(self.tr("Search titles and messages"))
        self.try_workflow_button.setText(self.tr("Try a workflow"))
        self.try_workflow_button.setToolTip(self.tr("Start a Workflow conversation with the built-in Project brief example"))
        self._update_search_status()
        self._update_empty_state()
        self.view.viewport().update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- fed by ProjectView ------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def browsing(self) -> bool:
        """True while the arrow keys move the selection (the keyboard stays in the list)."""
        return self.view.browsing

    def reset(self, *, has_project: bool) -> None:
        """A project is being shown (its conversations follow) or none is."""
        self._has_project = has_project
        self._loaded = False
        self._open_id = ""
        self.search.clear()
        self.model.clear()
        self._update_empty_state()

    def set_conversations(self, items: Iterable[ConversationSummary]) -> None:
        if self._loaded:
            self._merge(list(items))
            return
        self._loaded = True
        self.model.set_conversations(items)
        self._update_empty_state()

    def _merge(self, items: list[ConversationSummary]) -> None:
        """A reload of the shown project's list: rows change in place, so the selection stays.

        While a title is being edited in place the reload waits: moving rows under the open editor
        would close it and lose what the user typed. It is applied when the editor closes."""
        if self.view.state() == QAbstractItemView.State.EditingState:
            self._pending_merge = items
            return
        self._pending_merge = None
        self.model.merge(items)
        self._update_empty_state()

    def _apply_pending_merge(self) -> None:
        if self._pending_merge is not None:
            self._merge(self._pending_merge)

    def upsert(self, item: ConversationSummary, *, select: bool = False) -> None:
        row = self.model.upsert(item)
        if select:
            index = self.proxy.mapFromSource(self.model.index(row))
            if index.isValid():
                self.view.setCurrentIndex(index)
                self.view.scrollTo(index)

    def remove(self, conversation_id: str) -> None:
        if conversation_id == self._open_id:
            self._open_id = ""
        self.model.remove(conversation_id)

    def set_search_results(self, query: str, hits: Iterable[SearchHit]) -> None:
        with self._filter_change():
            answered = self.proxy.set_hits(query, hits)
        if answered:
            self._searching = False
            self._update_search_status()
            self._update_empty_state()

    def open_row(self) -> int | None:
        """The model's row of the conversation open in the workspace (None: none is open)."""
        return self.model.row_of(self._open_id) if self._open_id else None

    def current_summary(self) -> ConversationSummary | None:
        """The conversation open in the workspace: the one the user picked, listed or hidden by a
        search (searching never closes it, nor opens another)."""
        row = self.open_row()
        if row is None:
            return None
        summary = self.model.index(row).data(ConversationRole.SUMMARY)
        return summary if isinstance(summary, ConversationSummary) else None

    @Slot()
    def focus_search(self) -> None:
        """Put the keyboard in the search box, its text selected (Ctrl+K)."""
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def select(self, conversation_id: str) -> bool:
        row = self.model.row_of(conversation_id)
        index = self.proxy.mapFromSource(self.model.index(row)) if row is not None else QModelIndex()
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)
        return index.isValid()

    # -- user requests -----------------------------------------------------------------------

    @Slot()
    def ask_new_conversation(self) -> None:
        """Offer the types under the New button (a popup: it never blocks)."""
        self.type_menu.popup(self.new_button.mapToGlobal(QPoint(0, self.new_button.height())))

    @Slot()
    def rename_current(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.view.edit(index)

    @Slot()
    def delete_current(self) -> None:
        """Ask first (a window-modal box that does not block the event loop), then request the delete."""
        summary = self.current_summary()
        if summary is None:
            return
        box = QMessageBox(self.window())
        box.setObjectName("confirmDelete")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("Delete conversation"))
        box.setText(self.tr("Delete “{title}”?").format(title=summary.title))
        box.setInformativeText(
            self.tr("Its messages, tool outputs and subagent logs are removed from disk. This cannot be undone.")
        )
        delete = box.addButton(self.tr("Delete"), QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        conversation_id = summary.id

        def answered() -> None:
            self.delete_box = None
            if box.clickedButton() is delete:
                self.delete_requested.emit(conversation_id)

        box.finished.connect(answered)
        self.delete_box = box
        box.open()

    # -- internals ---------------------------------------------------------------------------

    @Slot(QAction)
    def _on_type_chosen(self, action: QAction) -> None:
        self.new_conversation_requested.emit(str(action.data()))

    @Slot()
    def _on_rename_refused(self) -> None:
        self.notice.emit(self.tr("A conversation needs a name; the old one was kept."))

    @Slot(str)
    def _on_search_typed(self, text: str) -> None:
        with self._filter_change():
            self.proxy.set_query(text)
        self._searching = bool(text.strip())
        self._debounce.start()
        self._update_search_status()
        self._update_empty_state()
        if not text.strip():
            self.search_cleared.emit()

    @contextmanager
    def _filter_change(self) -> Iterator[None]:
        """The filter changes: whatever it does to the selection is undone, the open conversation
        stays open, and its row is selected again whenever it is listed."""
        self._filtering = True
        try:
            yield
            row = self.open_row()
            index = self.proxy.mapFromSource(self.model.index(row)) if row is not None else QModelIndex()
            if index.isValid():
                if index != self.view.currentIndex():
                    self.view.setCurrentIndex(index)
                self.view.scrollTo(index)
            elif self.view.currentIndex().isValid():
                self.view.selectionModel().clear()  # no other row looks open
        finally:
            self._filtering = False

    def _emit_hit(self, index: QModelIndex) -> None:
        hit = self.proxy.hit_at(index)
        if hit is not None and hit.message_id:
            self.hit_activated.emit(hit.conversation_id, hit.message_id, self.search.text().strip())

    @Slot(QModelIndex)
    def _on_clicked(self, index: QModelIndex) -> None:
        # Selecting a row already reported the hit; a click on the row already selected jumps again.
        self._emit_hit(index)

    @Slot()
    def _send_search(self) -> None:
        self.search_requested.emit(self.search.text().strip())

    def _update_search_status(self) -> None:
        if not self.proxy.query:
            self.search_status.hide()
            return
        if self._searching:
            self.search_status.setText(self.tr("Searching messages…"))
        elif self.proxy.text_hits:
            self.search_status.setText(self.tr("Found in the messages of {count} conversation(s)").format(count=self.proxy.text_hits))
        else:
            self.search_status.setText(self.tr("No message contains this text"))
        self.search_status.show()

    @Slot(QPoint)
    def _show_context_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():
            return
        self.view.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(self.tr("Rename"), self.rename_current)
        menu.addSeparator()
        menu.addAction(self.tr("Delete…"), self.delete_current)
        menu.popup(self.view.viewport().mapToGlobal(position))

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        if self._filtering:
            return
        index = self.view.currentIndex()
        picked = index.data(ConversationRole.SUMMARY) if index.isValid() else None
        self._open_id = picked.id if isinstance(picked, ConversationSummary) else ""
        self.current_changed.emit(self._open_id)
        if isinstance(picked, ConversationSummary):
            self._emit_hit(index)

    @Slot()
    def _update_empty_state(self) -> None:
        if not self._loaded and self._has_project:
            self.empty_label.setText(self.tr("Loading conversations…"))
        elif self.proxy.query and self.model.rowCount():
            self.empty_label.setText(self.tr("No conversation matches “{query}”.").format(query=self.search.text().strip()))
        else:
            self.empty_label.setText(self.tr("No conversations yet.\nStart one with “+ New”."))
        self.try_workflow_button.setVisible(self._loaded and self._has_project and not self.model.rowCount())
        self._list_stack.setCurrentWidget(self.view if self.proxy.rowCount() else self._empty_page)
