"""TimelineModel: a conversation as a tree of rows — messages at the top, their tool calls below.

A top-level row is a message (user, assistant, a notice, the notice of a finished background
subagent) or the answer streaming right now. An
assistant message's tool calls are its child rows, one per call id: the call and its result
(the ``role=tool`` message) are one part, so the view can show "🔧 fs.list · ok · 2 ms" as one
line. Whether a part is expanded is not in the model; it is the view's business.

A Task part (issue 6) also carries its subagent (``SUBAGENT``): from the stored result's link
fields, from the children's metas a load brings, and live from ``subagent_status``, matched by
the session that made the call (this model's ``conversation_id``: a conversation, or a
subagent's ``agent_<id>`` in its read-only tab) and the call id.

The adapter methods (``load``, ``begin_stream``, ``append_text``, ``add_message``,
``tool_started`` ..., and the window's ``show_*``/``hide_*``) are the only writers and the only
callers of ``begin*``/``end*`` and ``dataChanged``. A streamed chunk is one ``dataChanged`` on one index, never a reset.

Split by responsibility: ``nodes.py`` holds the row values and what each role reads,
``parts.py`` the tool-part and subagent bookkeeping, ``window.py`` the Qt plumbing and the
sliding window; this module builds the rows from messages, the streamed answer and tool events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QTimer, Signal

from crewagent.ui.timeline.nodes import (
    ASK_USER_TOOL,
    FAILED,
    INTERRUPTED,
    OK,
    PENDING,
    RUNNING,
    STREAM_KEY_PREFIX,
    SUBAGENT_NOTICE,
    TASK_TOOL,
    Node,
    TimelineRole,
)
from crewagent.ui.timeline.parts import ToolParts
from crewagent.ui.timeline.window import OPEN_ROWS, WindowedTreeModel
from crewagent.worker.turn_values import LoadedConversation, SubagentInfo, TimelineMessage, ToolCallRef, ToolFinish, ToolOutputChunk

__all__ = [
    "ASK_USER_TOOL", "FAILED", "INTERRUPTED", "OK", "OPEN_ROWS", "PENDING", "RUNNING", "STREAM_KEY_PREFIX",
    "STREAM_UPDATE_MS", "SUBAGENT_NOTICE", "TASK_TOOL", "TimelineModel", "TimelineRole",
]

#: Streamed text reaches the view at most this often (the first chunk at once). Every update lays
#: the whole answer out again as Markdown, so a model sending hundreds of chunks a second would
#: otherwise keep the GUI thread re-rendering and let the chunks queue up behind it.
STREAM_UPDATE_MS = 40


class TimelineModel(WindowedTreeModel):
    """One conversation's timeline (see the module docstring)."""

    #: Rows were added above the window, nothing else changed: the complete history of a long
    #: conversation arrived after its first page (see ``load``). The view may show some of them.
    older_rows_added = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._first_page: tuple[str, ...] = ()  # message ids of a first page shown (load)
        self._by_key: dict[str, Node] = {}
        self._parts = ToolParts()
        self._stream: Node | None = None
        self._highlighted: Node | None = None
        self._streams = 0
        self.conversation_id = ""
        # Coalescing of streamed chunks (see STREAM_UPDATE_MS): the roles changed since the last update.
        self._stream_roles: set[TimelineRole] = set()
        self._stream_timer = QTimer(self)
        self._stream_timer.setSingleShot(True)
        self._stream_timer.setInterval(STREAM_UPDATE_MS)
        self._stream_timer.timeout.connect(self._flush_stream)

    # -- adapter: the only writers ----------------------------------------------------------------

    def load(self, loaded: LoadedConversation) -> None:
        """Show a conversation (a reset: everything shown before is replaced).

        A first page (``loaded.complete`` False) is shown as any load; when the complete
        conversation then ends with the same messages, its older ones are only added above the
        window: no reset, so what the user sees, opened or scrolled stays as it is.
        """
        if loaded.complete and self._continues_first_page(loaded):
            self._add_history(loaded)
            return
        self._first_page = () if loaded.complete else tuple(message.id for message in loaded.messages)
        self.beginResetModel()
        self._settle_stream()
        for node in (*self._older, *self._rows, *self._newer):
            node.children = []  # no parent <-> child cycles left behind: they go by reference counting
        self._rows, self._newer, self._by_key, self._stream = [], [], {}, None
        self._parts.clear()
        self._highlighted = None
        self.conversation_id = loaded.conversation_id
        for message in loaded.messages:
            self._place(message, notify=False)
        for info in loaded.subagents:
            self._parts.apply_subagent(info, self.conversation_id)
        if loaded.streaming:
            node = self._new_stream_node()
            node.text, node.reasoning = loaded.streaming_text, loaded.streaming_reasoning
        cut = max(0, len(self._rows) - OPEN_ROWS)
        self._older, self._rows = self._rows[:cut], self._rows[cut:]
        self._renumber()
        self.endResetModel()

    def clear(self) -> None:
        self.load(LoadedConversation("", "", ()))

    def _continues_first_page(self, loaded: LoadedConversation) -> bool:
        page = self._first_page
        return (
            bool(page)
            and loaded.conversation_id == self.conversation_id
            and not loaded.streaming
            and self._stream is None
            and len(loaded.messages) >= len(page)
            and tuple(message.id for message in loaded.messages[-len(page):]) == page
        )

    def _add_history(self, loaded: LoadedConversation) -> None:
        older = loaded.messages[: len(loaded.messages) - len(self._first_page)]
        self._first_page = ()
        shown, self._rows = self._rows, []
        for message in older:
            self._place(message, notify=False)
        self._older, self._rows = self._rows + self._older, shown
        self._renumber()
        for info in loaded.subagents:
            self._changed(self._parts.apply_subagent(info, self.conversation_id), TimelineRole.SUBAGENT)
        self.older_rows_added.emit()

    def begin_stream(self) -> None:
        """A model answer starts streaming: an empty assistant row at the end."""
        if self._stream is not None:
            return
        if self._newer:  # the window has slid up: the answer streams below it
            self._new_stream_node()
            return
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._new_stream_node()
        self.endInsertRows()
        self._last_changed(row)

    def append_text(self, text: str) -> None:
        node = self._stream
        if node is None or not text:
            return
        node.add_text(text)
        self._stream_changed(TimelineRole.TEXT)

    def append_reasoning(self, text: str) -> None:
        node = self._stream
        if node is None or not text:
            return
        node.add_reasoning(text)
        self._stream_changed(TimelineRole.REASONING)

    def end_stream(self) -> None:
        """The answer stopped streaming; the row stays until its stored message replaces it."""
        node = self._stream
        if node is None:
            return
        self._settle_stream()
        node.streaming = False
        node.stop_thinking()
        self._changed(node, TimelineRole.STREAMING)

    def discard_stream(self) -> None:
        """The turn ended and nothing was stored for the streamed row (an empty answer): drop it."""
        node = self._stream
        if node is None:
            return
        self._settle_stream()
        self._stream = None
        if not self._shown(node):
            self._newer.remove(node)
            self._by_key.pop(node.key, None)
            return
        self.beginRemoveRows(QModelIndex(), node.row, node.row)
        del self._rows[node.row]
        self._by_key.pop(node.key, None)
        self.endRemoveRows()
        self._last_changed(len(self._rows) - 1)

    def add_message(self, message: TimelineMessage) -> None:
        """A stored message: a new row, the streamed row made final, or a tool call's result."""
        self._place(message, notify=True)

    def tool_started(self, call: ToolCallRef) -> None:
        self._changed(self._parts.started(call), TimelineRole.TOOL_STATE)

    def tool_finished(self, finish: ToolFinish) -> None:
        self._changed(self._parts.finished(finish), TimelineRole.TOOL_STATE)

    def tool_output(self, chunk: ToolOutputChunk) -> None:
        self._changed(self._parts.output(chunk), TimelineRole.TOOL_LIVE_OUTPUT)

    def turn_ended(self) -> None:
        """The turn is over: no part can still be running (a stop answered them as interrupted)."""
        for node in self._parts.interrupt_open():
            self._changed(node, TimelineRole.TOOL_STATE)
        if self._stream is not None and not self._stream.text and not self._stream.reasoning:
            self.discard_stream()
        elif self._stream is not None:
            self.end_stream()

    def subagent_status(self, info: SubagentInfo) -> bool:
        """A subagent started or ended: update its Task part (False when it is not this timeline's)."""
        node = self._parts.apply_subagent(info, self.conversation_id)
        self._changed(node, TimelineRole.SUBAGENT)
        return node is not None

    def set_widget_request(self, call_id: str, request_id: str, widget: Mapping[str, Any] | None = None) -> bool:
        """Mark the ``ui.ask_user`` part of ``call_id`` as waiting for the user (``""``: no longer)."""
        known, node = self._parts.set_widget_request(call_id, request_id, widget)
        self._changed(node, TimelineRole.WIDGET_REQUEST)
        return known

    def withdraw_widget_request(self, request_id: str) -> str | None:
        """Forget a waiting widget by request id; returns its call id (None when unknown)."""
        node = self._parts.withdraw_widget_request(request_id)
        self._changed(node, TimelineRole.WIDGET_REQUEST)
        return node.call.id if node is not None and node.call is not None else None

    # -- placing messages --------------------------------------------------------------------------

    def _place(self, message: TimelineMessage, *, notify: bool) -> None:
        if message.replaces is not None and message.role == "user":
            self._drop_branch(message.replaces, notify)
        existing = self._by_key.get(message.id)
        if existing is not None and existing.kind != "tool":
            existing.message, existing.text = message, message.text
            existing.reasoning = message.reasoning
            existing.reasoning_seconds = _first_known(message.reasoning_seconds, existing.reasoning_seconds)
            if notify:
                self._changed(existing, TimelineRole.MESSAGE)
            return
        if message.role == "tool":
            node = self._parts.attach_result(message)
            if node is not None:
                self._by_key[message.id] = node
                if notify:
                    self._changed(node, TimelineRole.TOOL_RESULT)
                return
            self._append_top(self._parts.new_node(None, message, row=len(self._rows)), notify)  # an orphan result
            return
        if message.role == "assistant" and self._stream is not None:
            self._settle_stream()
            node = self._stream
            self._stream = None
            self._by_key.pop(node.key, None)
            node.key, node.message, node.streaming = message.id, message, False
            node.text = message.text
            node.reasoning = message.reasoning or node.reasoning
            node.reasoning_seconds = _first_known(message.reasoning_seconds, node.reasoning_seconds)
            self._by_key[message.id] = node
            if notify:
                self._changed(node, TimelineRole.MESSAGE)
            self._add_calls(node, message, notify)
            return
        kind = message.role if message.role in ("user", "assistant") else "notice"
        if message.is_summary:
            kind = "notice"
        elif message.is_subagent_notice:
            kind = SUBAGENT_NOTICE
        node = Node(key=message.id, kind=kind, row=len(self._rows), message=message, text=message.text,
                     reasoning=message.reasoning, reasoning_seconds=message.reasoning_seconds,
                     subagent=message.subagent if kind == SUBAGENT_NOTICE else None)
        self._append_top(node, notify)
        self._add_calls(node, message, notify)

    def _drop_branch(self, key: str, notify: bool) -> None:
        """An edit or a regenerate: the replaced message's row and every row after it go."""
        node = self._by_key.get(key)
        dropped = self._drop_from(node.parent or node, notify) if node is not None else []
        if dropped:
            gone = {id(top) for top in dropped}
            self._by_key = {k: n for k, n in self._by_key.items() if id(n.parent or n) not in gone}
            self._last_changed(len(self._rows))  # the row now last gets its IS_LAST

    def _append_top(self, node: Node, notify: bool) -> None:
        if self._newer:  # the window has slid up: kept below it
            self._newer.append(node)
            self._by_key[node.key] = node
            return
        row = len(self._rows)
        node.row = row
        if notify:
            self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(node)
        self._by_key[node.key] = node
        if notify:
            self.endInsertRows()
            self._last_changed(row)

    def _add_calls(self, parent: Node, message: TimelineMessage, notify: bool) -> None:
        if not message.tool_calls:
            return
        first = len(parent.children)
        nodes = [self._parts.new_node(call, None, row=first + n, parent=parent) for n, call in enumerate(message.tool_calls)]
        notify = notify and self._shown(parent)
        if notify:
            self.beginInsertRows(self._index_of(parent), first, first + len(nodes) - 1)
        parent.children.extend(nodes)
        for node in nodes:
            self._parts.add(node)
            self._by_key[node.key] = node
        if notify:
            self.endInsertRows()

    def _new_stream_node(self) -> Node:
        self._streams += 1
        node = Node(key=f"{STREAM_KEY_PREFIX}{self._streams}", kind="assistant", row=len(self._rows), streaming=True)
        (self._newer if self._newer else self._rows).append(node)
        self._by_key[node.key] = node
        self._stream = node
        return node

    def _stream_changed(self, role: TimelineRole) -> None:
        """The streamed row grew: update it now, or with the next update if one went out lately."""
        self._stream_roles.add(role)
        if not self._stream_timer.isActive():
            self._flush_stream()

    def _flush_stream(self) -> None:
        node, roles = self._stream, self._stream_roles
        if node is None or not roles:
            return  # nothing arrived since the last update: the throttle window just ends
        self._stream_roles = set()
        node.version += 1
        if self._shown(node):
            index = self._index_of(node)
            self.dataChanged.emit(index, index, [*sorted(roles), TimelineRole.VERSION])
        self._stream_timer.start()

    def _settle_stream(self) -> None:
        """The streamed row changes for good (ends, is replaced, goes away): its own signal says so."""
        self._stream_timer.stop()
        self._stream_roles = set()

    # -- queries -----------------------------------------------------------------------------------

    def show_around(self, key: str) -> QModelIndex:
        """Slide the window so that it shows the row of ``key`` (a search hit far up a long
        conversation); returns its index, invalid when there is no such row."""
        node = self._by_key.get(key)
        if node is None:
            return QModelIndex()
        self._show_around(node)
        return self._index_of(node)

    def set_highlight(self, key: str, text: str) -> None:
        """Mark ``text`` in the row of ``key`` (the search hit being shown); the mark on any other
        row goes. ``set_highlight("", "")`` clears it."""
        node = self._by_key.get(key) if key and text else None
        previous, self._highlighted = self._highlighted, node
        if previous is not None and (previous is not node or not text):
            previous.highlight = ""
            self._changed(previous, TimelineRole.HIGHLIGHT)
        if node is not None and node.highlight != text:
            node.highlight = text
            self._changed(node, TimelineRole.HIGHLIGHT)

    def index_of_key(self, key: str) -> QModelIndex:
        """The row of ``key``; invalid when there is none or it is above the window."""
        node = self._by_key.get(key)
        return self._index_of(node) if node is not None and self._shown(node) else QModelIndex()

    def index_of_call(self, call_id: str) -> QModelIndex:
        node = self._parts.get(call_id)
        return self._index_of(node) if node is not None and self._shown(node) else QModelIndex()

    def keys(self) -> list[str]:
        """Every top-level key in order (above the window too), each followed by its tool parts' keys."""
        out: list[str] = []
        for node in (*self._older, *self._rows, *self._newer):
            out.append(node.key)
            out.extend(child.key for child in node.children)
        return out

    def parents(self) -> Iterable[QModelIndex]:
        """The top-level rows that have tool parts (the view keeps them expanded)."""
        for node in self._rows:
            if node.children:
                yield self._index_of(node)

    def iter_top(self) -> Iterable[QModelIndex]:
        for row in range(len(self._rows)):
            yield self.index(row, 0)

    @property
    def streaming(self) -> bool:
        return self._stream is not None


def _first_known(stored: float | None, live: float | None) -> float | None:
    """The thinking time the message stores (measured off the GUI thread), else the one timed live."""
    return stored if stored is not None else live
