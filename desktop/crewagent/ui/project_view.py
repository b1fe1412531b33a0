"""The project view: the Works sidebar (conversations) beside the workspace."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedLayout,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui import formatting
from crewagent.ui.conversation_view import ConversationView
from crewagent.ui.delegates import ConversationDelegate
from crewagent.ui.models import ConversationListModel
from crewagent.worker.values import ConversationSummary, ProjectRef

#: The types offered by "New conversation", in menu order (``run`` is shown as Workflow).
CONVERSATION_TYPES = ("chat", "agent", "run")


class ProjectView(QWidget):
    """One opened project. Answers from the worker for another project are ignored.

    Results can arrive after the user has left a project (the worker runs on), so every
    worker-fed slot takes the project id and drops what is not for the project shown.
    """

    #: ``(project_id, entry_type)``: create a conversation of that type (chat, agent, run).
    new_conversation_requested = Signal(str, str)

    #: The user wants to leave the project and go back to the Start page.
    exit_requested = Signal()

    #: The user wants the Settings dialog (the sidebar's Settings button).
    settings_requested = Signal()

    #: ``(project_id, conversation_id)``: the selected conversation changed ("" when none).
    current_conversation_changed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("projectView")
        self._project: ProjectRef | None = None
        self._loaded = False
        self.model = ConversationListModel(self)

        sidebar = QFrame(self)
        sidebar.setObjectName("sidebar")
        self.project_name = QLabel(sidebar)
        self.project_name.setObjectName("projectName")
        self.project_path = QLabel(sidebar)
        self.project_path.setObjectName("hint")
        self.project_path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        works = QLabel(self.tr("Works"), sidebar)
        works.setObjectName("sectionTitle")
        self.new_button = QToolButton(sidebar)
        self.new_button.setObjectName("newConversation")
        self.new_button.setText(self.tr("+ New"))
        self.new_button.setToolTip(self.tr("New conversation (Ctrl+Shift+N)"))
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        type_menu = QMenu(self.new_button)
        for entry_type in CONVERSATION_TYPES:
            action = type_menu.addAction(formatting.mode_label(entry_type))
            action.setData(entry_type)
        self.new_button.setMenu(type_menu)
        works_header = QHBoxLayout()
        works_header.addWidget(works)
        works_header.addStretch(1)
        works_header.addWidget(self.new_button)

        self.view = QListView(sidebar)
        self.view.setObjectName("conversationList")
        self.view.setModel(self.model)
        self.view.setItemDelegate(ConversationDelegate(self.view))
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setUniformItemSizes(True)
        self.view.setMouseTracking(True)
        self.view.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.empty_label = QLabel(sidebar)
        self.empty_label.setObjectName("emptyState")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self._list_stack = QStackedLayout()
        self._list_stack.addWidget(self.empty_label)
        self._list_stack.addWidget(self.view)

        self.exit_button = QPushButton(self.tr("Exit Project"), sidebar)
        self.exit_button.setObjectName("exitProject")
        self.exit_button.setToolTip(self.tr("Back to the Start page"))
        self.settings_button = QPushButton(self.tr("Settings"), sidebar)
        self.settings_button.setObjectName("settingsButton")
        self.settings_button.setToolTip(self.tr("Model provider, tools, context budgets, theme and language (Ctrl+,)"))
        bottom = QHBoxLayout()
        bottom.addWidget(self.settings_button)
        bottom.addWidget(self.exit_button)

        side_layout = QVBoxLayout(sidebar)
        side_layout.setContentsMargins(12, 16, 12, 12)
        side_layout.setSpacing(6)
        side_layout.addWidget(self.project_name)
        side_layout.addWidget(self.project_path)
        side_layout.addSpacing(12)
        side_layout.addLayout(works_header)
        side_layout.addLayout(self._list_stack, 1)
        side_layout.addLayout(bottom)

        self.conversation = ConversationView(self)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("workspaceTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.conversation, self.tr("Conversation"))

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setObjectName("projectSplitter")
        splitter.addWidget(sidebar)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 760])
        splitter.setChildrenCollapsible(False)
        sidebar.setMinimumWidth(240)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.new_button.clicked.connect(self.new_chat)
        type_menu.triggered.connect(self._on_type_chosen)
        self.exit_button.clicked.connect(self.exit_requested)
        self.settings_button.clicked.connect(self.settings_requested)
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.model.dataChanged.connect(self._refresh_overview)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._update_empty_state)
        self._update_empty_state()
        # "5 min ago" must not stay "just now" forever: repaint the visible rows once a minute.
        self._clock = QTimer(self)
        self._clock.setInterval(60_000)
        self._clock.timeout.connect(self.view.viewport().update)
        self._clock.start()

    @property
    def project(self) -> ProjectRef | None:
        return self._project

    @property
    def loaded(self) -> bool:
        """True once the conversations of the project shown have arrived."""
        return self._loaded

    # -- fed by the worker -------------------------------------------------------------------

    @Slot(object)
    def show_project(self, project: ProjectRef) -> None:
        """Show a project (its conversations follow with ``set_conversations``)."""
        self._project = project
        self._loaded = False
        self.project_name.setText(project.name)
        self.project_path.setText(project.root)
        self.project_path.setToolTip(project.root)
        self.model.clear()
        self._update_empty_state()

    @Slot(str, object)
    def set_conversations(self, project_id: str, items: Iterable[ConversationSummary]) -> None:
        if not self._is_current(project_id):
            return
        self._loaded = True
        self.model.set_conversations(items)
        self._update_empty_state()

    @Slot(str, object)
    def add_conversation(self, project_id: str, item: ConversationSummary) -> None:
        """A conversation was created (or changed): show it and, when new, select it."""
        if not self._is_current(project_id):
            return
        is_new = self.model.row_of(item.id) is None
        row = self.model.upsert(item)
        if is_new:
            self.view.setCurrentIndex(self.model.index(row))
            self.view.scrollTo(self.model.index(row))

    def clear(self) -> None:
        """Forget the project shown (after Exit Project)."""
        self._project = None
        self.model.clear()
        self.conversation.show_conversation(None, None, has_conversations=False)

    def select_conversation(self, conversation_id: str) -> bool:
        """Select a conversation of the Works list by id (e.g. the one open at the last exit)."""
        row = self.model.row_of(conversation_id)
        if row is None:
            return False
        self.view.setCurrentIndex(self.model.index(row))
        self.view.scrollTo(self.model.index(row))
        return True

    # -- user requests -----------------------------------------------------------------------

    @Slot()
    def new_chat(self) -> None:
        """The default of "New conversation": a Chat."""
        self.request_new_conversation("chat")

    def request_new_conversation(self, entry_type: str) -> None:
        if self._project is not None:
            self.new_conversation_requested.emit(self._project.id, entry_type)

    def current_summary(self) -> ConversationSummary | None:
        index = self.view.currentIndex()
        return self.model.summary(index.row()) if index.isValid() else None

    # -- internals ---------------------------------------------------------------------------


    @Slot(QAction)
    def _on_type_chosen(self, action: QAction) -> None:
        self.request_new_conversation(str(action.data()))

    def _is_current(self, project_id: str) -> bool:
        return self._project is not None and self._project.id == project_id

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        summary = self.current_summary()
        self.conversation.show_conversation(self._project, summary, has_conversations=self.model.rowCount() > 0)
        if self._project is not None:
            self.current_conversation_changed.emit(self._project.id, summary.id if summary else "")

    @Slot()
    def _refresh_overview(self) -> None:
        self.conversation.show_summary(self.current_summary(), has_conversations=self.model.rowCount() > 0)

    @Slot()
    def _update_empty_state(self) -> None:
        if not self._loaded and self._project is not None:
            self.empty_label.setText(self.tr("Loading conversations…"))
        else:
            self.empty_label.setText(self.tr("No conversations yet.\nStart one with “+ New”."))
        self._list_stack.setCurrentWidget(self.view if self.model.rowCount() else self.empty_label)
        self._refresh_overview()

