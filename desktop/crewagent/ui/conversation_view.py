"""The Conversation tab: a header with the mode switcher, the timeline, and the composer.

It shows one conversation at a time and speaks to the worker only through its signals (requests)
and slots (the TurnWorker's reports, each carrying the conversation id; reports about another
conversation are ignored, except that its busy state is remembered).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QEvent, Slot
from PySide6.QtWidgets import QHBoxLayout, QStackedWidget, QVBoxLayout, QWidget

from crewagent.ui import keyboard
from crewagent.ui.agent_menu_panel import AgentMenuPanel
from crewagent.ui.composer import Composer
from crewagent.ui.conversation_header import ConversationHeader
from crewagent.ui.conversation_parts import EmptyConversation, JumpToLatest
from crewagent.ui.conversation_runs import RunControls
from crewagent.ui.conversation_signals import ConversationSignals
from crewagent.ui.message_edit import MessageEdit
from crewagent.ui.missing_package import MissingPackageCard
from crewagent.ui.output_viewer import OutputViewers
from crewagent.ui.run_tracker import RunTracker
from crewagent.ui.run_workspace.layout import RunWorkspaceLayout
from crewagent.ui.search_reveal import PendingReveal
from crewagent.ui.timeline import TimelineModel, TimelineRole, TimelineView
from crewagent.ui.timeline_feed import TimelineFeed
from crewagent.worker.turn_values import (
    AgentMenu,
    AskUserPrompt,
    ContextUsage,
    FullOutput,
    LoadedConversation,
    TurnError,
)
from crewagent.worker.values import ConversationSummary, PackagesListing, ProjectRef

class ConversationView(ConversationSignals):
    """One conversation: header, timeline, composer (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("conversationView")
        self.model = TimelineModel(self)
        self.header = ConversationHeader(self)
        self.timeline = TimelineView(self)
        self.timeline.set_timeline(self.model)
        self.composer = Composer(self)
        #: Edit on a user message: its text in the composer, the next Send replaces it (issue 18 item 12).
        self.message_edit = MessageEdit(self.composer, self)
        self.agent_menu = AgentMenuPanel(self)
        self.jump_button = JumpToLatest(self.timeline, self.model)
        #: "Open full output" opens a viewer window per tool result (issue 18).
        self.outputs = OutputViewers(self)
        #: The TurnWorker's streamed text, tool calls and messages, into the timeline of the shown conversation.
        self.feed = TimelineFeed(self)

        # The pages are made in their stack, not moved there once built (see MainWindow.__init__).
        self.pages = QStackedWidget(self)
        content = QWidget(self.pages)
        self._content = content
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.header)
        # The Run workspace (issue 11, part 2): the run panel beside the timeline and composer,
        # the Logs panel under both (see run_workspace/layout.py).
        chat = QWidget(content)
        chat_column = QVBoxLayout(chat)
        chat_column.setContentsMargins(0, 0, 0, 0)
        chat_column.setSpacing(0)
        chat_column.addWidget(self.timeline, 1)
        menu_row = QHBoxLayout()
        menu_row.setContentsMargins(20, 6, 20, 0)
        menu_row.addWidget(self.agent_menu)
        chat_column.addLayout(menu_row)
        self.missing_package = MissingPackageCard(chat)
        chat_column.addWidget(self.missing_package)
        chat_column.addWidget(self.composer)
        self.runs = RunTracker(self)
        self.run_layout = RunWorkspaceLayout(chat, content)
        self.run_workspace, self.logs = self.run_layout.workspace, self.run_layout.logs
        column.addWidget(self.run_layout.root, 1)

        self.empty = EmptyConversation(self.pages)
        self.empty_title = self.empty.title

        self.pages.addWidget(self.empty)
        self.pages.addWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)

        self._project: ProjectRef | None = None
        self._summary: ConversationSummary | None = None
        self._mode = "chat"
        self._loaded = False
        self._keyboard_on_open = True  # false while the Works list is browsed with the arrow keys
        self._busy: set[str] = set()  # conversations with a running turn (any, not just this one)
        self._sending = False  # a send was requested and its turn has not started yet
        self._prompts: dict[str, str] = {}  # ask-user request id -> call id
        self._reveal = PendingReveal(self.timeline)  # a search hit to show once loaded

        self.composer.submitted.connect(self._on_submitted)
        self.composer.recall_source = lambda: keyboard.last_user_text(self.model)  # Up recalls (issue 18 item 18)
        self.composer.stop_requested.connect(self._on_stop)
        self.header.switcher.mode_selected.connect(self._on_mode_selected)
        self.header.agent_selected.connect(self._on_agent_selected)
        self.agent_menu.item_chosen.connect(self._on_menu_item_chosen)
        self.timeline.action_requested.connect(self._on_action)
        self.timeline.widget_answered.connect(self._on_widget_answered)
        self.timeline.notice.connect(self.notice)
        self.timeline.typed.connect(functools.partial(keyboard.type_into, self.composer.input))
        #: Run mode: the Workflow header's runs, starting or resuming one, the missing-package card.
        self.run_controls = RunControls(self)
        self.show_summary(None, has_conversations=False)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """This view's own texts, again on a language switch (its parts retranslate themselves)."""
        if self._summary is not None and not self._loaded:
            self.composer.set_hint(self.tr("Loading…"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- what is shown ----------------------------------------------------------------------------

    @property
    def conversation_id(self) -> str:
        return self._summary.id if self._summary is not None else ""

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def loaded(self) -> bool:
        """True once the shown conversation's messages have arrived."""
        return self._loaded

    @property
    def busy(self) -> bool:
        """A turn runs (or is being started) in the shown conversation."""
        return self._sending or self.conversation_id in self._busy

    @property
    def any_busy(self) -> bool:
        """A turn runs in any conversation (closing the window has to stop it first)."""
        return bool(self._busy) or self._sending

    def show_conversation(
        self, project: ProjectRef | None, summary: ConversationSummary | None, *, has_conversations: bool = True, take_keyboard: bool = True
    ) -> None:
        """Show a conversation (its messages follow ``open_requested``), or the empty state; the composer
        takes the keyboard once it is loaded, unless ``take_keyboard`` is False."""
        same = summary is not None and self._summary is not None and summary.id == self._summary.id
        self._project = project
        self.run_layout.show_conversation(project.id if project and summary else "", summary.id if summary else "")
        if same:
            self.show_summary(summary, has_conversations=has_conversations)
            return
        self._summary = summary
        self._loaded = False
        self._keyboard_on_open = take_keyboard
        self._sending = False
        self._prompts.clear()
        self._reveal.forget()
        self.message_edit.cancel()
        self.agent_menu.dismiss()
        self.model.clear()
        self.composer.set_usage(None)
        self.composer.count_tokens((), reset=True)
        self.composer.set_project_root(project.root if project else "")
        self.runs.show(project.id if project else None, summary.id if summary else None)
        if summary is not None:
            self.header.workflow.want_workflow(summary.package_id, summary.workflow_id)
        self.show_summary(summary, has_conversations=has_conversations)
        if summary is not None and project is not None:
            self.composer.set_hint(self.tr("Loading…"))
            self.open_requested.emit(project.id, summary.id)

    def show_summary(self, summary: ConversationSummary | None, *, has_conversations: bool) -> None:
        """Refresh the header from the conversation's metadata (title, mode), or show how to begin."""
        if summary is None or (self._summary is not None and summary.id != self._summary.id):
            if summary is None:
                self._summary = None
                self.pages.setCurrentWidget(self.empty)
                self.empty.show_hint(has_conversations)
            return
        previous, self._summary = self._summary, summary
        self.pages.setCurrentWidget(self._content)
        self.header.show_title(summary.title, summary.message_count, summary.created_at)
        if summary != previous:  # a run started, a mode switched, a turn ended: the runs may have changed too
            self.runs.refresh()
            if previous is not None and (previous.package_id, previous.workflow_id) != (summary.package_id, summary.workflow_id):
                self.header.workflow.want_workflow(summary.package_id, summary.workflow_id)
        if previous is None or not summary.only_recounted(previous):  # a turn persisting messages changes only the count
            self._set_mode(summary.active_type)
            self.header.show_agent(summary.agent_id)
            self._update_busy()

    def _set_mode(self, mode: str) -> None:
        self._mode = mode
        self.header.show_mode(mode)
        self.composer.set_accepts_empty(mode == "agent")
        if mode != "agent":
            self.agent_menu.dismiss()
        self.run_controls.show_runs()

    @Slot(object)
    def set_agents(self, agents: Iterable[Any]) -> None:
        """The agents Agent mode offers (the worker's ``agents_loaded``)."""
        self.header.set_agents(agents)
        if self._summary is not None:
            self.header.show_agent(self._summary.agent_id)

    @Slot(object)
    def set_packages(self, listing: PackagesListing) -> None:
        """The installed workflows (``packages_loaded``); a package imported again may let a run go on."""
        self.header.workflow.set_listing(listing)
        self.runs.refresh()

    @property
    def agent_id(self) -> str:
        """The agent the header shows for this conversation ("" when there are none)."""
        return self.header.agent_id()

    # -- search hits (issue 18) -------------------------------------------------------------------

    def reveal_message(self, conversation_id: str, message_id: str, text: str) -> None:
        """Jump to a search hit of the conversation shown and mark the searched text in it (at once
        when its messages are here, else when they arrive)."""
        if conversation_id != self.conversation_id or not message_id:
            return
        self._reveal.want(message_id, text, loaded=self._loaded)

    def clear_search_mark(self) -> None:
        """The search was cleared: no row stays marked."""
        self._reveal.clear()

    # -- user requests ----------------------------------------------------------------------------

    def _ids(self) -> tuple[str, str] | None:
        if self._project is None or self._summary is None:
            return None
        return self._project.id, self._summary.id

    @Slot(str)
    def _on_submitted(self, text: str) -> None:
        ids = self._ids()
        if ids is None or self.busy or (not text and not self.composer.attachments.count() and self._mode != "agent"):
            return
        self.agent_menu.dismiss()
        self._sending = True
        self._update_busy()
        self.timeline.scroll_to_end()
        edited = self.message_edit.take()
        if edited is not None:
            self.edit_requested.emit(*ids, edited, text, self._mode)
        else:
            self._request_send(ids, text, self._mode, self.composer.attachments)

    @Slot()
    def _on_stop(self) -> None:
        if self.conversation_id:
            self.stop_requested.emit(self.conversation_id)

    @Slot(str)
    def _on_mode_selected(self, mode: str) -> None:
        ids = self._ids()
        if ids is None or mode == self._mode:
            return
        self._set_mode(mode)
        self.mode_change_requested.emit(*ids, mode)

    @Slot(str)
    def _on_agent_selected(self, agent_id: str) -> None:
        ids = self._ids()
        if ids is not None and self._summary is not None and agent_id != self._summary.agent_id:
            self.agent_menu.dismiss()
            self.agent_change_requested.emit(*ids, agent_id)

    @Slot(int)
    def _on_menu_item_chosen(self, number: int) -> None:
        # The worker routes a number exactly as if it had been typed.
        if self._mode == "agent":
            self._on_submitted(str(number))

    @Slot(str, str, str)
    def _on_action(self, action: str, key: str, message_id: str) -> None:
        ids = self._ids()
        if ids is None:
            return
        if action == "open_output":
            tool = str(self.model.index_of_key(key).data(TimelineRole.TOOL_NAME) or "tool")
            if message_id and self.outputs.open(ids[1], message_id, tool):
                self.full_output_requested.emit(*ids, message_id)
            return
        if action == "open_subagent":
            if message_id:
                self.subagent_open_requested.emit(*ids, message_id)
            return
        if action == "edit_message":
            self.message_edit.start(message_id, str(self.model.index_of_key(key).data(TimelineRole.TEXT) or ""))
            return
        if self.busy:
            return
        self._sending = True
        self._update_busy()
        if action == "regenerate":
            self.regenerate_requested.emit(*ids, self._mode)
        elif action == "retry":
            self.retry_requested.emit(*ids, self._mode)
        elif action == "continue":
            self.continue_requested.emit(*ids, self._mode)

    def continue_conversation(self) -> None:
        """Continue as the Continue button does (also for keyboard users and tests)."""
        self._on_action("continue", "", "")

    def retry(self) -> None:
        self._on_action("retry", "", "")

    @Slot(str, str, object)
    def _on_widget_answered(self, request_id: str, call_id: str, payload: object) -> None:
        self._prompts.pop(request_id, None)
        if payload is not None:
            self.timeline.remember_widget_answer(call_id, dict(payload) if isinstance(payload, dict) else {})
        self.model.set_widget_request(call_id, "")
        self.ask_user_answered.emit(request_id, payload)

    # -- fed by the worker ------------------------------------------------------------------------

    def _mine(self, conversation_id: str) -> bool:
        return bool(conversation_id) and conversation_id == self.conversation_id and self._loaded

    @Slot(object)
    def on_loaded(self, loaded: LoadedConversation) -> None:
        if self._summary is None or loaded.conversation_id != self._summary.id:
            return
        opened = not self._loaded
        self.model.load(loaded)
        self.composer.count_tokens(loaded.messages, reset=True)
        self._loaded = True
        self._reveal.try_now(complete=loaded.complete)
        if loaded.running:
            self._busy.add(loaded.conversation_id)
        if loaded.problems:
            self.notice.emit(self.tr("{n} damaged line(s) of this conversation were skipped.").format(n=len(loaded.problems)))
        self._update_busy()
        if opened and self._keyboard_on_open:  # a conversation opened or created: type straight away (issue 18 item 18)
            keyboard.take_keyboard(self.composer.input)

    @Slot()
    def give_keyboard(self) -> None:
        """The user wants to type here (Enter on the conversation's row): now, or once it is loaded."""
        self._keyboard_on_open = True
        if self._loaded:
            keyboard.take_keyboard(self.composer.input)

    @Slot(str, str)
    def on_turn_started(self, conversation_id: str, mode: str) -> None:
        self.runs.on_turn_started(conversation_id, mode)
        self._busy.add(conversation_id)
        if conversation_id == self.conversation_id:
            self._sending = False
            self.agent_menu.dismiss()
        self._update_busy()

    @Slot(object)
    def on_agent_menu(self, menu: AgentMenu) -> None:
        """Agent-mode input answered with the agent's menu (no turn was started)."""
        if menu.conversation_id != self.conversation_id:
            return
        self._sending = False
        self._update_busy()
        if self._mode == "agent":
            self.agent_menu.show_menu(menu)
            self.agent_menu.list.setFocus()

    @Slot(str, str, object)
    def on_turn_finished(self, conversation_id: str, reason: str, error: object) -> None:
        try:
            if self._mine(conversation_id):
                self.model.turn_ended()
                for request_id in list(self._prompts):
                    self.on_prompt_withdrawn(request_id)
        finally:
            self._busy.discard(conversation_id)
            if conversation_id == self.conversation_id:
                self._sending = False
            self._update_busy()
            self.runs.on_turn_finished(conversation_id)

    @Slot(object)
    def on_worker_error(self, error: TurnError) -> None:
        """A send, retry or continue of this conversation failed before its turn started: nothing
        runs, so the composer is usable again (a failure elsewhere leaves it as it is)."""
        if error.request.starts_turn and error.conversation_id == self.conversation_id and self._sending:
            self._sending = False
            self._update_busy()

    @Slot(str, object)
    def on_context_usage(self, conversation_id: str, usage: ContextUsage) -> None:
        if conversation_id == self.conversation_id:
            self.composer.set_usage(usage)

    @Slot(object)
    def on_ask_user(self, prompt: AskUserPrompt) -> None:
        if not self._mine(prompt.conversation_id):
            return
        if self.model.set_widget_request(prompt.call_id, prompt.request_id, prompt.widget):
            self._prompts[prompt.request_id] = prompt.call_id
            self.timeline.scroll_to_end()

    @Slot(str)
    def on_prompt_withdrawn(self, request_id: str) -> None:
        if self._prompts.pop(request_id, None) is not None:
            self.model.withdraw_widget_request(request_id)

    @Slot(object)
    def on_full_output(self, output: FullOutput) -> None:
        self.outputs.deliver(output)

    # -- busy state -------------------------------------------------------------------------------

    def _update_busy(self) -> None:
        busy = self.busy
        self.composer.set_busy(busy)
        self.composer.setEnabled(self._summary is not None and self._loaded)
        self.timeline.set_busy(busy)
        self.header.set_modes_enabled(not busy)
        if not busy and self._summary is not None and not self._loaded:
            self.composer.set_hint(self.tr("Loading…"))
