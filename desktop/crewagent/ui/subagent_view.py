"""Subagent tabs: a subagent's own conversation (its sidechain), read-only, following it while it runs.

A tab is opened from a Task part or a background notice ("Open subagent conversation"). It shows
the sidechain with the same timeline model, delegate and view as the Conversation tab, without a
composer: nobody can answer a subagent. Its messages come from the worker (``open_subagent`` →
``subagent_loaded``), then live from ``subagent_message_persisted`` / ``subagent_progress`` /
``subagent_status_changed`` until the child ends. A subagent's own Task parts (grandchildren) open
further tabs.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTabWidget, QVBoxLayout, QWidget

from crewagent.ui.core_texts import translate_core
from crewagent.ui.timeline import TimelineModel, TimelineView
from crewagent.ui.timeline.delegate import robot_glyph
from crewagent.worker.turn_values import LoadedSubagent, SubagentInfo, SubagentProgress, TimelineMessage

#: Characters of the description a tab's title shows (the tooltip has all of it).
TAB_TITLE_CHARS = 28


class SubagentPage(QFrame):
    """One subagent's conversation: a header (type, status, what it was asked) and its timeline."""

    #: ``(project_id, conversation_id, session_id)``: open a subagent this one started.
    open_requested = Signal(str, str, str)

    #: ``(session_id)``: stop this subagent (it runs, e.g. in the background).
    cancel_requested = Signal(str)

    def __init__(self, project_id: str, conversation_id: str, session_id: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("subagentPage")
        self.project_id = project_id
        self.conversation_id = conversation_id
        self.session_id = session_id
        self.info: SubagentInfo | None = None
        self.error = ""
        self._loaded = False

        header = QFrame(self)
        header.setObjectName("subagentHeader")
        self.title = QLabel(header)
        self.title.setObjectName("subagentTitle")
        self.status = QLabel(header)
        self.status.setObjectName("subagentStatus")
        self.stop_button = QPushButton(header)
        self.stop_button.setObjectName("stopButton")
        policy = self.stop_button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the header keeps its height when the child ends
        self.stop_button.setSizePolicy(policy)
        self.stop_button.hide()
        self.note = QLabel(header)
        self.note.setObjectName("hint")
        self.note.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.stop_button)
        top.addWidget(self.status)
        header_layout = QVBoxLayout(header)
        header_layout.setContentsMargins(20, 10, 20, 8)
        header_layout.setSpacing(4)
        header_layout.addLayout(top)
        header_layout.addWidget(self.note)

        self.model = TimelineModel(self)
        self.timeline = TimelineView(self)
        self.timeline.view_state.read_only = True
        self.timeline.set_timeline(self.model)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(header)
        layout.addWidget(self.timeline, 1)

        self.timeline.action_requested.connect(self._on_action)
        self.stop_button.clicked.connect(lambda: self.cancel_requested.emit(self.session_id))
        self.retranslate_ui()

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def running(self) -> bool:
        return self.info is not None and self.info.running

    def retranslate_ui(self) -> None:
        self.stop_button.setText(self.tr("Stop subagent"))
        self.stop_button.setToolTip(self.tr("Cancel this subagent; its log ends with a cancelled marker"))
        info = self.info
        if self.error:
            self.title.setText(self.tr("Subagent"))
            self.status.setText("")
            self.note.setText(self.tr("This subagent's conversation cannot be read: {error}").format(error=translate_core(self.error)))
            return
        if info is None:
            self.title.setText(self.tr("Subagent"))
            self.status.setText("")
            self.note.setText(self.tr("Loading…"))
            return
        what = info.description or info.session_id
        self.title.setText(self.tr("Subagent {type}: {description}").format(type=info.subagent_type, description=what))
        self.title.setToolTip(info.session_id)
        self.status.setText(self._status_text(info.status))
        self.note.setText(
            self.tr("Read-only: the subagent's own conversation, linked to the Task call of its parent.")
            + ("  " + self.tr("It runs in the background.") if info.background and info.running else "")
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def tab_title(self) -> str:
        info = self.info
        text = (info.description or info.subagent_type) if info is not None else self.tr("Subagent")
        if len(text) > TAB_TITLE_CHARS:
            text = text[: TAB_TITLE_CHARS - 1].rstrip() + "…"
        return f"{robot_glyph(self.font())} {text}"

    # -- fed by the worker (through SubagentTabs) ---------------------------------------------------

    def show_loaded(self, loaded: LoadedSubagent) -> None:
        self.error = loaded.error
        self.model.load(loaded.timeline)
        self._loaded = not loaded.error
        if loaded.info is not None:
            self._set_info(loaded.info)
        else:
            self.retranslate_ui()

    def on_status(self, info: SubagentInfo) -> None:
        if info.session_id == self.session_id and self._loaded:
            self._set_info(info)
            if not info.running:
                self.model.turn_ended()
        elif self._loaded:
            self.model.subagent_status(info)  # a grandchild's Task part (matched by parent session)

    def on_message_persisted(self, message: TimelineMessage) -> None:
        if self._loaded:
            self.model.add_message(message)

    def on_progress(self, progress: SubagentProgress) -> None:
        if not self._loaded:
            return
        model = self.model
        if progress.kind == "stream_started":
            model.begin_stream()
        elif progress.kind == "stream_chunk":
            model.append_text(progress.text)
        elif progress.kind == "reasoning_chunk":
            model.append_reasoning(progress.text)
        elif progress.kind == "tool_started" and progress.call is not None:
            model.tool_started(progress.call)
        elif progress.kind == "tool_finished" and progress.finish is not None:
            model.tool_finished(progress.finish)
        elif progress.kind == "finished":
            model.turn_ended()

    def _status_text(self, status: str) -> str:
        return {
            "running": self.tr("running"),
            "completed": self.tr("completed"),
            "failed": self.tr("failed"),
            "cancelled": self.tr("cancelled"),
        }.get(status, status)

    def _set_info(self, info: SubagentInfo) -> None:
        self.info = info
        self.status.setProperty("status", info.status)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self.stop_button.setVisible(info.running)
        self.retranslate_ui()

    @Slot(str, str, str)
    def _on_action(self, action: str, key: str, session_id: str) -> None:
        if action == "open_subagent" and session_id:
            self.open_requested.emit(self.project_id, self.conversation_id, session_id)


class SubagentTabs(QObject):
    """Opens subagents' conversations as closable tabs of ``tabs`` and feeds them the worker's reports."""

    #: ``(project_id, conversation_id, session_id)``: load this sidechain (``TurnWorker.open_subagent``).
    load_requested = Signal(str, str, str)

    #: ``(session_id)``: stop this subagent (``TurnWorker.cancel_subagent``).
    cancel_requested = Signal(str)

    def __init__(self, tabs: QTabWidget):
        super().__init__(tabs)
        self.tabs = tabs

    def pages(self) -> list[SubagentPage]:
        return [page for i in range(self.tabs.count()) if isinstance(page := self.tabs.widget(i), SubagentPage)]

    def page_of(self, session_id: str) -> SubagentPage | None:
        return next((page for page in self.pages() if page.session_id == session_id), None)

    @Slot(str, str, str)
    def open(self, project_id: str, conversation_id: str, session_id: str) -> None:
        """Show a subagent's conversation (a new tab, loading, or the one already open)."""
        page = self.page_of(session_id)
        if page is None:
            page = SubagentPage(project_id, conversation_id, session_id, self.tabs)
            page.open_requested.connect(self.open)
            page.cancel_requested.connect(self.cancel_requested)
            index = self.tabs.addTab(page, page.tab_title())
            self.tabs.setTabToolTip(index, session_id)
            self.load_requested.emit(project_id, conversation_id, session_id)
        self.tabs.setCurrentWidget(page)

    def close_all(self, conversation_id: str | None = None) -> None:
        """Close every subagent tab (of one conversation, when given)."""
        for page in self.pages():
            if conversation_id in (None, page.conversation_id):
                self.tabs.removeTab(self.tabs.indexOf(page))
                page.deleteLater()

    # -- fed by the worker ------------------------------------------------------------------------

    @Slot(object)
    def on_loaded(self, loaded: LoadedSubagent) -> None:
        page = self.page_of(loaded.session_id)
        if page is not None:
            page.show_loaded(loaded)
            self._retitle(page)

    @Slot(object)
    def on_status(self, info: SubagentInfo) -> None:
        for page in self.pages():
            if page.conversation_id == info.conversation_id:
                page.on_status(info)
                if page.session_id == info.session_id:
                    self._retitle(page)

    @Slot(str, str, object)
    def on_message_persisted(self, conversation_id: str, session_id: str, message: TimelineMessage) -> None:
        page = self.page_of(session_id)
        if page is not None:
            page.on_message_persisted(message)

    @Slot(str, object)
    def on_progress(self, session_id: str, progress: SubagentProgress) -> None:
        page = self.page_of(session_id)
        if page is not None:
            page.on_progress(progress)

    def _retitle(self, page: SubagentPage) -> None:
        self.tabs.setTabText(self.tabs.indexOf(page), page.tab_title())
