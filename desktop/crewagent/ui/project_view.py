"""The project view: the Works sidebar (conversations) beside the workspace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui import formatting
from crewagent.ui.conversation_view import ConversationView
from crewagent.ui.file_tabs import FileTabs
from crewagent.ui.files_panel import FilesPanel
from crewagent.ui.subagent_view import SubagentTabs
from crewagent.ui.narrow import shrinkable
from crewagent.ui.works_panel import CONVERSATION_TYPES, WorksPanel
from crewagent.worker.bridge import Worker
from crewagent.worker.turns import TurnWorker
from crewagent.worker.values import ConversationSummary, FilePreview, ProjectRef, SearchHit

__all__ = ["CONVERSATION_TYPES", "ProjectView"]


class ProjectView(QWidget):
    """One opened project. Answers from the worker for another project are ignored.

    Results can arrive after the user has left a project (the worker runs on), so every
    worker-fed slot takes the project id and drops what is not for the project shown.
    """

    #: ``(text)``: a passing notice of the Conversation tab, for the status bar.
    conversation_notice = Signal(str)

    #: ``(project_id, entry_type)``: create a conversation of that type (chat, agent, run).
    new_conversation_requested = Signal(str, str)

    #: The user wants to leave the project and go back to the Start page.
    exit_requested = Signal()

    #: The user wants the Settings dialog (the sidebar's Settings button).
    settings_requested = Signal()

    #: ``(project_id, conversation_id, title)``: rename a conversation (``Worker.rename_conversation``).
    rename_requested = Signal(str, str, str)

    #: ``(project_id, conversation_id)``: delete a conversation, confirmed by the user.
    delete_requested = Signal(str, str)

    #: ``(project_id, query)``: search the message text of the project's conversations.
    search_requested = Signal(str, str)

    #: ``path``: read a project file for its tab (``Worker.read_project_file``).
    file_read_requested = Signal(str)

    #: ``message``: a notice for the message bar (e.g. an empty name was refused).
    notice = Signal(str)

    #: ``(project_id, conversation_id)``: the selected conversation changed ("" when none).
    current_conversation_changed = Signal(str, str)

    #: ``(project_id)``: create a Workflow conversation with the built-in example picked (``Worker.try_workflow``).
    try_workflow_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("projectView")
        self._project: ProjectRef | None = None

        # Made in their splitter (not moved there once built: see MainWindow.__init__).
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        sidebar = QFrame(splitter)
        sidebar.setObjectName("sidebar")
        self.project_name = QLabel(sidebar)
        self.project_name.setObjectName("projectName")
        self.project_path = QLabel(sidebar)
        self.project_path.setObjectName("hint")
        shrinkable(self.project_path)  # issue 18 item 17: a long path must not widen the window
        self.project_path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # Works and Files share the sidebar; a segmented switch picks one.
        self.sidebar_switch = QTabBar(sidebar)
        self.sidebar_switch.setObjectName("sidebarSwitch")
        self.sidebar_switch.setExpanding(True)
        self.sidebar_switch.setDrawBase(False)
        self.sidebar_switch.addTab("")
        self.sidebar_switch.addTab("")
        self.works = WorksPanel(sidebar)
        self.files = FilesPanel(sidebar)
        self.sidebar_pages = QStackedWidget(sidebar)
        self.sidebar_pages.addWidget(self.works)
        self.sidebar_pages.addWidget(self.files)
        # The names tests and the workspace side used before the Works panel had its own module.
        self.model = self.works.model
        self.view = self.works.view
        self.new_button = self.works.new_button
        self.empty_label = self.works.empty_label

        self.exit_button = QPushButton(sidebar)
        self.exit_button.setObjectName("exitProject")
        self.settings_button = QPushButton(sidebar)
        self.settings_button.setObjectName("settingsButton")
        bottom = QHBoxLayout()
        bottom.addWidget(self.settings_button)
        bottom.addWidget(self.exit_button)

        side_layout = QVBoxLayout(sidebar)
        side_layout.setContentsMargins(12, 16, 12, 12)
        side_layout.setSpacing(6)
        side_layout.addWidget(self.project_name)
        side_layout.addWidget(self.project_path)
        side_layout.addSpacing(10)
        side_layout.addWidget(self.sidebar_switch)
        side_layout.addSpacing(4)
        side_layout.addWidget(self.sidebar_pages, 1)
        side_layout.addLayout(bottom)

        self.conversation = ConversationView(self)
        self.tabs = QTabWidget(splitter)
        self.tabs.setObjectName("workspaceTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.conversation, self.tr("Conversation"))

        splitter.setObjectName("projectSplitter")
        splitter.addWidget(sidebar)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 760])
        splitter.setChildrenCollapsible(False)
        sidebar.setMinimumWidth(240)
        self.sidebar = sidebar  # Ctrl+B hides and shows it (ui/sidebar_toggle.py)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.file_tabs = FileTabs(self.tabs)
        #: Subagents' conversations, read-only (opened from a Task part; fed by the main window).
        self.subagent_tabs = SubagentTabs(self.tabs)

        self.sidebar_switch.currentChanged.connect(self.sidebar_pages.setCurrentIndex)
        self.exit_button.clicked.connect(self.exit_requested)
        self.settings_button.clicked.connect(self.settings_requested)
        self.works.new_conversation_requested.connect(self.request_new_conversation)
        self.works.rename_requested.connect(self._on_rename)
        self.works.delete_requested.connect(self._on_delete)
        self.works.search_requested.connect(self._on_search)
        self.works.notice.connect(self.notice)
        self.works.try_workflow_requested.connect(self._on_try_workflow)
        self.files.file_open_requested.connect(self.file_tabs.open_file)
        self.file_tabs.read_requested.connect(self.file_read_requested)
        self.conversation.subagent_open_requested.connect(self.subagent_tabs.open)
        self.conversation.notice.connect(self.conversation_notice)
        self.works.current_changed.connect(self._on_current_changed)
        self.works.entered.connect(self.conversation.give_keyboard)
        # Search (issue 18): a hit opens at its message, marked; clearing the search unmarks it.
        self.works.hit_activated.connect(self.conversation.reveal_message)
        self.works.search_cleared.connect(self.conversation.clear_search_mark)
        self.model.dataChanged.connect(self._on_rows_changed)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._update_empty_state)
        self._update_empty_state()
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """The sidebar's own texts (the panels translate theirs); called again on a language switch."""
        self.sidebar_switch.setTabText(0, self.tr("Works"))
        self.sidebar_switch.setTabText(1, self.tr("Files"))
        self.exit_button.setText(self.tr("Exit Project"))
        self.exit_button.setToolTip(self.tr("Back to the Start page"))
        self.settings_button.setText(self.tr("Settings"))
        self.settings_button.setToolTip(self.tr("Model provider, tools, context budgets, theme and language (Ctrl+,)"))
        self.tabs.setTabText(0, self.tr("Conversation"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @property
    def project(self) -> ProjectRef | None:
        return self._project

    @property
    def any_busy(self) -> bool:
        """True while a turn runs (or is being started) in any conversation of this view."""
        return self.conversation.any_busy

    def connect_turns(self, turns: TurnWorker) -> None:
        """Wire the Conversation tab and the subagents' tabs to the turn worker (requests queued)."""
        conversation, subagents = self.conversation, self.subagent_tabs
        queued = Qt.ConnectionType.QueuedConnection
        conversation.open_requested.connect(turns.open_conversation, queued)
        conversation.send_requested.connect(turns.send, queued)
        conversation.send_images_requested.connect(turns.send_images, queued)
        conversation.continue_requested.connect(turns.continue_turn, queued)
        conversation.retry_requested.connect(turns.retry, queued)
        conversation.edit_requested.connect(turns.edit_message, queued)
        conversation.regenerate_requested.connect(turns.regenerate, queued)
        conversation.stop_requested.connect(turns.stop, queued)
        conversation.mode_change_requested.connect(turns.set_mode, queued)
        conversation.agent_change_requested.connect(turns.set_agent, queued)
        conversation.full_output_requested.connect(turns.load_full_output, queued)
        images = conversation.timeline.images  # an MCP tool part's images (issue 12), read by the worker
        images.ids = lambda: (self._project.id, conversation.conversation_id) if self._project is not None and conversation.conversation_id else None
        images.requested.connect(turns.load_tool_images, queued)
        turns.tool_images_loaded.connect(images.on_loaded)
        conversation.ask_user_answered.connect(turns.answer_ask_user, queued)
        turns.conversation_loaded.connect(conversation.on_loaded)
        turns.turn_started.connect(conversation.on_turn_started)
        turns.stream_started.connect(conversation.feed.on_stream_started)
        turns.stream_chunk.connect(conversation.feed.on_stream_chunk)
        turns.reasoning_chunk.connect(conversation.feed.on_reasoning_chunk)
        turns.stream_ended.connect(conversation.feed.on_stream_ended)
        turns.tool_started.connect(conversation.feed.on_tool_started)
        turns.tool_finished.connect(conversation.feed.on_tool_finished)
        turns.tool_output.connect(conversation.feed.on_tool_output)
        turns.message_persisted.connect(conversation.feed.on_message_persisted)
        turns.context_usage.connect(conversation.on_context_usage)
        turns.turn_finished.connect(conversation.on_turn_finished)
        turns.ask_user_requested.connect(conversation.on_ask_user)
        turns.prompt_withdrawn.connect(conversation.on_prompt_withdrawn)
        turns.full_output_loaded.connect(conversation.on_full_output)
        turns.agent_menu.connect(conversation.on_agent_menu)
        turns.conversation_changed.connect(self.add_conversation)
        turns.subagent_notice.connect(conversation.feed.on_message_persisted)
        turns.subagent_status_changed.connect(conversation.feed.on_subagent_status)
        turns.error.connect(conversation.on_worker_error)
        # A send with images refused before anything was stored gives its draft back (issue 17).
        turns.error.connect(conversation.composer.restore_unsent)
        turns.message_persisted.connect(conversation.composer.forget_unsent)
        # Subagents: their Task parts and notices in the timeline, their conversations in tabs.
        subagents.load_requested.connect(turns.open_subagent, queued)
        subagents.cancel_requested.connect(turns.cancel_subagent, queued)
        turns.subagent_loaded.connect(subagents.on_loaded)
        turns.subagent_status_changed.connect(subagents.on_status)
        turns.subagent_message_persisted.connect(subagents.on_message_persisted)
        turns.subagent_progress.connect(subagents.on_progress)
        # Run mode (issue 11, the Workflow header): the conversation's runs, Start and Resume, live progress.
        conversation.runs_requested.connect(turns.load_runs, queued)
        conversation.start_run_requested.connect(turns.start_run, queued)
        conversation.resume_run_requested.connect(turns.resume_run, queued)
        turns.runs_loaded.connect(conversation.runs.on_loaded)
        turns.run_progress.connect(conversation.runs.on_progress)
        # The Run workspace and the Logs panel (issue 11, part 2).
        conversation.run_layout.connect_turns(turns)

    def connect_runs(self, worker: Worker) -> None:
        """The Run workspace (issue 11, part 2): runs read by the worker, artifacts and step files in file tabs."""
        self.conversation.run_layout.connect_worker(worker)
        self.conversation.run_workspace.file_open_requested.connect(self.file_tabs.open_file)

    @Slot(object)
    def set_agents(self, agents: Iterable[Any]) -> None:
        """The agents Agent mode offers (``tuple[AgentSummary, ...]``)."""
        self.conversation.set_agents(agents)

    @property
    def loaded(self) -> bool:
        """True once the conversations of the project shown have arrived."""
        return self.works.loaded

    # -- fed by the worker -------------------------------------------------------------------

    @Slot(object)
    def show_project(self, project: ProjectRef) -> None:
        """Show a project (its conversations follow with ``set_conversations``)."""
        self._project = project
        self.project_name.setText(project.name)
        self.project_path.setText(project.root)
        self.project_path.setToolTip(project.root)
        self.file_tabs.close_all()
        self.subagent_tabs.close_all()
        self.works.reset(has_project=True)
        self.files.show_project(project.root, project.artifacts_dir, excluded=[project.runtime_dir])
        self.conversation.timeline.timeline_delegate.thumbnails.set_runtime_dir(project.runtime_dir)  # images (issue 17)
        self._update_empty_state()

    @Slot(str, object)
    def set_conversations(self, project_id: str, items: Iterable[ConversationSummary]) -> None:
        if not self._is_current(project_id):
            return
        self.works.set_conversations(items)
        self._update_empty_state()

    @Slot(str, object)
    def add_conversation(self, project_id: str, item: ConversationSummary) -> None:
        """A conversation was created (or changed): show it and, when new, select it."""
        if not self._is_current(project_id):
            return
        self.works.upsert(item, select=self.model.row_of(item.id) is None)

    @Slot(str, object)
    def show_new_conversation(self, project_id: str, item: ConversationSummary) -> None:
        """The conversation "+ New" asked for (new, or the empty draft reused): show and select it."""
        if self._is_current(project_id):
            self.works.upsert(item, select=True)

    @Slot(str, object)
    def update_conversation(self, project_id: str, item: ConversationSummary) -> None:
        """A conversation's metadata changed (renamed, mode switched): update its row in place."""
        if self._is_current(project_id):
            self.works.upsert(item)

    @Slot(str, str)
    def remove_conversation(self, project_id: str, conversation_id: str) -> None:
        if self._is_current(project_id):
            self.works.remove(conversation_id)
            self.subagent_tabs.close_all(conversation_id)

    @Slot(str, str, object)
    def set_search_results(self, project_id: str, query: str, hits: Iterable[SearchHit]) -> None:
        if self._is_current(project_id):
            self.works.set_search_results(query, hits)

    @Slot(object)
    def show_file_preview(self, preview: FilePreview) -> None:
        self.file_tabs.show_preview(preview)

    def clear(self) -> None:
        """Forget the project shown (after Exit Project)."""
        self._project = None
        self.works.reset(has_project=False)
        self.files.clear()
        self.file_tabs.close_all()
        self.subagent_tabs.close_all()
        self.conversation.show_conversation(None, None, has_conversations=False)

    def select_conversation(self, conversation_id: str) -> bool:
        """Select a conversation of the Works list by id (e.g. the one open at the last exit)."""
        # Through the Works panel: its view shows a filter model, not the list model itself.
        return self.works.select(conversation_id)

    # -- user requests -----------------------------------------------------------------------

    @Slot()
    def new_chat(self) -> None:
        """A Chat, without asking (the default type)."""
        self.request_new_conversation("chat")

    @Slot()
    def ask_new_conversation(self) -> None:
        """Ask for the type (Chat, Agent, Workflow) in a popup under the New button."""
        if self._project is not None:
            self.sidebar_switch.setCurrentIndex(0)
            self.works.ask_new_conversation()

    @Slot(str)
    def request_new_conversation(self, entry_type: str) -> None:
        if self._project is not None:
            self.new_conversation_requested.emit(self._project.id, entry_type)

    def current_summary(self) -> ConversationSummary | None:
        return self.works.current_summary()

    @Slot()
    def focus_search(self) -> None:
        """The Works panel's search box gets the keyboard (Ctrl+K)."""
        self.sidebar_switch.setCurrentIndex(0)
        self.works.focus_search()

    # -- internals ---------------------------------------------------------------------------


    @Slot(str, str)
    def _on_rename(self, conversation_id: str, title: str) -> None:
        if self._project is not None:
            self.rename_requested.emit(self._project.id, conversation_id, title)

    @Slot(str)
    def _on_delete(self, conversation_id: str) -> None:
        if self._project is not None:
            self.delete_requested.emit(self._project.id, conversation_id)

    @Slot()
    def _on_try_workflow(self) -> None:
        if self._project is not None:
            self.try_workflow_requested.emit(self._project.id)

    @Slot(str)
    def _on_search(self, query: str) -> None:
        if self._project is not None:
            self.search_requested.emit(self._project.id, query)

    def _is_current(self, project_id: str) -> bool:
        return self._project is not None and self._project.id == project_id

    @Slot(str)
    def _on_current_changed(self, _conversation_id: str) -> None:
        summary = self.current_summary()
        # Browsing the list with the arrow keys opens each conversation but leaves the keyboard in the list.
        self.conversation.show_conversation(
            self._project, summary, has_conversations=self.model.rowCount() > 0, take_keyboard=not self.works.browsing
        )
        if self._project is not None:
            self.current_conversation_changed.emit(self._project.id, summary.id if summary else "")

    @Slot()
    def _refresh_overview(self) -> None:
        self.conversation.show_summary(self.current_summary(), has_conversations=self.model.rowCount() > 0)

    @Slot(QModelIndex, QModelIndex)
    def _on_rows_changed(self, top: QModelIndex, bottom: QModelIndex) -> None:
        """Only the open conversation's row feeds the workspace: another one's turn (a second window,
        a background turn) leaves it as it is. Each refresh is dozens of calls into Qt, and while a turn
        starts, each waits for the GIL (bench_ui 2a: 30-60 ms at a send, docs/benchmarks.md)."""
        row = self.works.open_row()
        if row is None or not top.isValid() or top.row() <= row <= bottom.row():
            self._refresh_overview()

    @Slot()
    def _update_empty_state(self) -> None:
        # The Works panel shows its own empty state; the workspace follows what is listed.
        self._refresh_overview()

