"""The Conversation tab's requests and reports: its signals, each documented with its arguments."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame

from crewagent.ui.composer_images import AttachmentStrip


class ConversationSignals(QFrame):
    """What the ConversationView (:mod:`crewagent.ui.conversation_view`) asks of the worker (the
    project view connects these to the TurnWorker) and tells the window."""

    #: ``(project_id, conversation_id)``: load this conversation for the timeline.
    open_requested = Signal(str, str)

    #: ``(project_id, conversation_id, text, mode)``: run a turn with this user message.
    send_requested = Signal(str, str, str, str)

    #: ``(project_id, conversation_id, text, mode, images)``: the same with images attached
    #: (``images``: a tuple of encoded image bytes, stored by the worker).
    send_images_requested = Signal(str, str, str, str, object)

    #: ``(project_id, conversation_id, mode)``: go on after an error or a Stop.
    continue_requested = Signal(str, str, str)

    #: ``(project_id, conversation_id, mode)``: send the last user message again.
    retry_requested = Signal(str, str, str)

    #: ``(project_id, conversation_id, message_id, text, mode)``: send ``text`` in place of that user
    #: message (Edit; a new branch, the old one kept in the log).
    edit_requested = Signal(str, str, str, str, str)

    #: ``(project_id, conversation_id, mode)``: answer the last question again in place of the last answer.
    regenerate_requested = Signal(str, str, str)

    #: ``(conversation_id)``: stop the running turn.
    stop_requested = Signal(str)

    #: ``(project_id, conversation_id, mode)``: switch the conversation's active mode in place.
    mode_change_requested = Signal(str, str, str)

    #: ``(project_id, conversation_id, agent_id)``: the agent Agent mode answers with (saved).
    agent_change_requested = Signal(str, str, str)

    #: ``(project_id, conversation_id, message_id)``: load a tool result in full, for its viewer.
    full_output_requested = Signal(str, str, str)

    #: ``(request_id, payload)``: an ask-user widget's WIDGET_SUBMIT payload (None: dismissed).
    ask_user_answered = Signal(str, object)

    #: ``(project_id, conversation_id, session_id)``: open a subagent's conversation in its tab.
    subagent_open_requested = Signal(str, str, str)

    #: ``(text)``: a short notice for the status bar.
    notice = Signal(str)

    # Run mode (issue 11, the Workflow header): requests to the TurnWorker, and what the window shows.
    #: ``(project_id, conversation_id)``: list the conversation's runs (``load_runs``).
    runs_requested = Signal(str, str)
    #: ``(project_id, conversation_id, package_id, workflow_id)``: start a run here and its first turn.
    start_run_requested = Signal(str, str, str, str)
    #: ``(project_id, conversation_id, run_id)``: make that run the active one and continue it.
    resume_run_requested = Signal(str, str, str)
    #: ``(package_label)``: the run's package is gone and the user wants to import it again.
    reimport_requested = Signal(str)
    #: The open run (a ``RunOverview`` with its live phase) while the conversation is in Run mode, else None.
    run_shown = Signal(object)

    def _request_send(self, ids: tuple[str, str], text: str, mode: str, attachments: AttachmentStrip) -> None:
        """``send_requested``, or ``send_images_requested`` with the composer's images (taken from it)."""
        if attachments.count():
            attachments.unsent = (ids[1], text, attachments.attached())  # given back if the send is refused
            self.send_images_requested.emit(*ids, text, mode, attachments.take())
        else:
            self.send_requested.emit(*ids, text, mode)
