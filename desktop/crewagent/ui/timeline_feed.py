"""The Conversation tab's timeline feed: the TurnWorker's reports about the shown conversation, into its model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from crewagent.worker.turn_values import SubagentInfo, TimelineMessage, ToolCallRef, ToolFinish, ToolOutputChunk

if TYPE_CHECKING:
    from crewagent.ui.conversation_view import ConversationView


class TimelineFeed(QObject):
    """Slots for the TurnWorker's streaming, tool and message reports (connected in the project view).

    Each goes to the view's timeline model only when it is about the conversation shown and its
    messages have arrived (``ConversationView._mine``); other conversations' reports are dropped.
    """

    def __init__(self, view: ConversationView) -> None:
        super().__init__(view)
        self._view = view

    @Slot(str, int, str)
    def on_stream_started(self, conversation_id: str, step: int, model: str) -> None:
        if self._view._mine(conversation_id):
            self._view.model.begin_stream()

    @Slot(str, str)
    def on_stream_chunk(self, conversation_id: str, text: str) -> None:
        if self._view._mine(conversation_id):
            self._view.model.append_text(text)

    @Slot(str, str)
    def on_reasoning_chunk(self, conversation_id: str, text: str) -> None:
        if self._view._mine(conversation_id):
            self._view.model.append_reasoning(text)

    @Slot(str)
    def on_stream_ended(self, conversation_id: str) -> None:
        if self._view._mine(conversation_id):
            self._view.model.end_stream()

    @Slot(str, object)
    def on_message_persisted(self, conversation_id: str, message: TimelineMessage) -> None:
        """A message is in the log: a turn's, or a finished background subagent's notice."""
        if self._view._mine(conversation_id):
            self._view.model.add_message(message)

    @Slot(object)
    def on_subagent_status(self, info: SubagentInfo) -> None:
        """A subagent of this conversation started or ended: its Task part shows it."""
        if self._view._mine(info.conversation_id):
            self._view.model.subagent_status(info)

    @Slot(str, object)
    def on_tool_started(self, conversation_id: str, call: ToolCallRef) -> None:
        if self._view._mine(conversation_id):
            self._view.model.tool_started(call)

    @Slot(str, object)
    def on_tool_finished(self, conversation_id: str, finish: ToolFinish) -> None:
        if self._view._mine(conversation_id):
            self._view.model.tool_finished(finish)

    @Slot(str, object)
    def on_tool_output(self, conversation_id: str, chunk: ToolOutputChunk) -> None:
        """A running command printed more: its part shows it live when expanded."""
        if self._view._mine(conversation_id):
            self._view.model.tool_output(chunk)
