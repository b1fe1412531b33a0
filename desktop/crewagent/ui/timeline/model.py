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
``tool_started`` ...) are the only writers and the only callers of ``begin*``/``end*`` and
``dataChanged``. A streamed chunk is one ``dataChanged`` on one index, never a reset.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal

from crewagent.worker.turn_values import LoadedConversation, SubagentInfo, TimelineMessage, ToolCallRef, ToolFinish

_Index = QModelIndex | QPersistentModelIndex
_USER = Qt.ItemDataRole.UserRole.value

#: Tool part states, in the order a call goes through them.
PENDING, RUNNING, OK, FAILED, INTERRUPTED = "pending", "running", "ok", "failed", "interrupted"
STREAM_KEY_PREFIX = "stream:"
ASK_USER_TOOL = "ui.ask_user"
#: Streamed text reaches the view at most this often (the first chunk at once). Every update lays
#: the whole answer out again as Markdown, so a model sending hundreds of chunks a second would
#: otherwise keep the GUI thread re-rendering and let the chunks queue up behind it.
STREAM_UPDATE_MS = 40
#: The newest rows a conversation opens with. QTreeView lays out every top-level row again when
#: one is inserted, at ~17 us a row through Python: 10,000 rows would cost ~175 ms per new
#: message. So the model shows a window over the conversation, the newest rows at first; older
#: ones join it as the user scrolls up (``show_older``), and when it grows too long the newest
#: leave it (``hide_newer``): the window slides. While it does not reach the end, new messages
#: are kept but not shown (``newer_count``); ``show_latest`` brings it back to the end.
OPEN_ROWS = 120
TASK_TOOL = "task"
#: The row kind of a finished background subagent's notice (a synthetic user message).
SUBAGENT_NOTICE = "subagent_notice"


class TimelineRole(IntEnum):
    """Custom data roles of :class:`TimelineModel`."""

    KIND = _USER  #: "user", "assistant", "tool", "notice" or "subagent_notice"
    KEY = _USER + 1  #: stable identity: a message id, "tool:<call id>" or "stream:<n>"
    MESSAGE = _USER + 2  #: the TimelineMessage (None while streaming)
    TEXT = _USER + 3  #: the Markdown text shown (grows while streaming)
    REASONING = _USER + 4
    STREAMING = _USER + 5  #: True while the text is still arriving
    REASONING_SECONDS = _USER + 6  #: how long the model thought (None when unknown)
    IS_ERROR = _USER + 7
    ERROR = _USER + 8  #: the error block mapping of an error part
    INTERRUPTED = _USER + 9
    SYNTHETIC = _USER + 10
    TOOL_NAME = _USER + 11
    TOOL_CALL_ID = _USER + 12
    TOOL_ARGUMENTS = _USER + 13  #: the model's raw JSON arguments
    TOOL_STATE = _USER + 14  #: pending, running, ok, failed or interrupted
    TOOL_DURATION = _USER + 15  #: milliseconds, None until known
    TOOL_RESULT = _USER + 16  #: the result text (a preview when offloaded)
    FULL_OUTPUT_BYTES = _USER + 17  #: size of an offloaded result, None when not offloaded
    RESULT_MESSAGE_ID = _USER + 18  #: the id of the role=tool message (for "Open full output")
    WIDGET_REQUEST = _USER + 19  #: the ask-user request id while the widget waits, else ""
    VERSION = _USER + 20  #: bumped on every change of the row (a cache key for the delegate)
    IS_LAST = _USER + 21  #: True for the last top-level row
    WIDGET = _USER + 22  #: an ask-user part's widget (the validated one while it waits, else the arguments)
    #: What the delegate needs to size a row in one call: ``(key, version, kind, rows from the
    #: end, text, has reasoning, needs the full layout)``. Sizing 10,000 rows must stay cheap.
    MEASURE = _USER + 23
    #: The :class:`SubagentInfo` of a Task part or a subagent notice (None for other rows).
    SUBAGENT = _USER + 24
    #: The searched text to mark in this row ("" for every row but the search hit shown; issue 18).
    HIGHLIGHT = _USER + 25


@dataclass(eq=False)
class _Node:
    key: str
    kind: str
    row: int
    parent: _Node | None = None
    children: list[_Node] = field(default_factory=list)
    message: TimelineMessage | None = None
    text: str = ""
    reasoning: str = ""
    streaming: bool = False
    reasoning_seconds: float | None = None
    # tool parts
    call: ToolCallRef | None = None
    result: TimelineMessage | None = None
    state: str = ""
    duration_ms: float | None = None
    widget_request: str = ""
    widget: Mapping[str, Any] | None = None
    subagent: SubagentInfo | None = None
    #: The searched text marked in this row (see ``set_highlight``).
    highlight: str = ""
    version: int = 0
    # while streaming: when reasoning started and when the text took over
    _thinking_since: float | None = None


def _merged(old: SubagentInfo | None, new: SubagentInfo) -> SubagentInfo:
    """``new``, completed by what ``old`` knew; a final status is never taken back by a stale "running"
    (a background child's Task result says running, whatever happened since)."""
    if old is None or old.session_id != new.session_id:
        return new
    status, summary = new.status, new.summary or old.summary
    if new.running and not old.running:
        status, summary = old.status, old.summary
    return dataclasses.replace(
        new,
        status=status,
        summary=summary,
        description=new.description or old.description,
        conversation_id=new.conversation_id or old.conversation_id,
        parent_session_id=new.parent_session_id or old.parent_session_id,
        parent_call_id=new.parent_call_id or old.parent_call_id,
        background=new.background or old.background,
    )


def _tool_state(result: TimelineMessage) -> str:
    if result.synthetic or result.interrupted:
        return INTERRUPTED
    return FAILED if result.is_error else OK


class TimelineModel(QAbstractItemModel):
    """One conversation's timeline (see the module docstring)."""

    #: Rows were added above the window, nothing else changed: the complete history of a long
    #: conversation arrived after its first page (see ``load``). The view may show some of them.
    older_rows_added = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._rows: list[_Node] = []  # the window: the rows the view sees, the newest last
        self._older: list[_Node] = []  # top-level rows before the window, oldest first
        self._newer: list[_Node] = []  # top-level rows after the window (it has slid up), oldest first
        self._first_page: tuple[str, ...] = ()  # message ids of a first page shown (load)
        self._by_key: dict[str, _Node] = {}
        self._calls: dict[str, _Node] = {}
        self._stream: _Node | None = None
        self._streams = 0
        self._highlighted: _Node | None = None
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
        self._rows, self._newer, self._by_key, self._calls, self._stream = [], [], {}, {}, None
        self._highlighted = None
        self.conversation_id = loaded.conversation_id
        for message in loaded.messages:
            self._place(message, notify=False)
        for info in loaded.subagents:
            self._apply_subagent(info)
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
            node = self._apply_subagent(info)
            if node is not None:
                self._changed(node, TimelineRole.SUBAGENT)
        self.older_rows_added.emit()

    # -- the window over a long conversation (see OPEN_ROWS) --------------------------------------------

    @property
    def older_count(self) -> int:
        """How many top-level rows come before the first one shown."""
        return len(self._older)

    @property
    def newer_count(self) -> int:
        """How many top-level rows come after the last one shown (0: the window reaches the end)."""
        return len(self._newer)

    def show_newer(self, count: int) -> int:
        """Show up to ``count`` of the rows after the last one shown; returns how many."""
        count = min(count, len(self._newer))
        if count <= 0:
            return 0
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + count - 1)
        self._rows.extend(self._newer[:count])
        del self._newer[:count]
        self._renumber()
        self.endInsertRows()
        return count

    def hide_newer(self, count: int) -> int:
        """Take the last ``count`` rows out of the window (it grew too long upwards); returns how many."""
        count = min(count, len(self._rows) - 1)
        if count <= 0:
            return 0
        first = len(self._rows) - count
        self.beginRemoveRows(QModelIndex(), first, len(self._rows) - 1)
        self._newer[:0] = self._rows[first:]
        del self._rows[first:]
        self.endRemoveRows()
        return count

    def show_latest(self) -> None:
        """Let the window show the newest OPEN_ROWS rows again (it had slid up the conversation)."""
        if not self._newer:
            return
        if self._rows:
            self.beginRemoveRows(QModelIndex(), 0, len(self._rows) - 1)
            after, self._rows = [*self._rows, *self._newer], []
            self.endRemoveRows()
        else:
            after = list(self._newer)
        cut = max(0, len(after) - OPEN_ROWS)
        self._older.extend(after[:cut])
        self._newer = []
        self.beginInsertRows(QModelIndex(), 0, len(after) - cut - 1)
        self._rows = after[cut:]
        self._renumber()
        self.endInsertRows()

    def show_around(self, key: str) -> QModelIndex:
        """Slide the window so that it shows the row of ``key`` (a search hit far up a long
        conversation); returns its index, invalid when there is no such row."""
        node = self._by_key.get(key)
        if node is None:
            return QModelIndex()
        top = node.parent or node
        if not self._shown(top):
            every = [*self._older, *self._rows, *self._newer]
            position = next(number for number, item in enumerate(every) if item is top)
            start = max(0, min(position - OPEN_ROWS // 2, len(every) - OPEN_ROWS))
            if self._rows:
                self.beginRemoveRows(QModelIndex(), 0, len(self._rows) - 1)
                self._rows = []
                self.endRemoveRows()
            window = every[start : start + OPEN_ROWS]
            self._older, self._newer = every[:start], every[start + len(window):]
            self.beginInsertRows(QModelIndex(), 0, len(window) - 1)
            self._rows = window
            self._renumber()
            self.endInsertRows()
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

    def show_older(self, count: int) -> int:
        """Show up to ``count`` more of the older rows above the first one; returns how many."""
        count = min(count, len(self._older))
        if count <= 0:
            return 0
        self.beginInsertRows(QModelIndex(), 0, count - 1)
        self._rows[:0] = self._older[-count:]
        del self._older[-count:]
        self._renumber()
        self.endInsertRows()
        return count

    def hide_older(self, keep: int) -> int:
        """Keep only the newest ``keep`` rows shown (the user is back at the end); returns how many went."""
        count = len(self._rows) - max(keep, 1)
        if count <= 0:
            return 0
        self.beginRemoveRows(QModelIndex(), 0, count - 1)
        self._older.extend(self._rows[:count])
        del self._rows[:count]
        self._renumber()
        self.endRemoveRows()
        return count

    def _renumber(self) -> None:
        for row, node in enumerate(self._rows):
            node.row = row

    def _shown(self, node: _Node) -> bool:
        top = node.parent or node
        return 0 <= top.row < len(self._rows) and self._rows[top.row] is top

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
        if node._thinking_since is not None and node.reasoning_seconds is None:
            node.reasoning_seconds = time.monotonic() - node._thinking_since
        node.text += text
        self._stream_changed(TimelineRole.TEXT)

    def append_reasoning(self, text: str) -> None:
        node = self._stream
        if node is None or not text:
            return
        if node._thinking_since is None:
            node._thinking_since = time.monotonic()
        node.reasoning += text
        self._stream_changed(TimelineRole.REASONING)

    def end_stream(self) -> None:
        """The answer stopped streaming; the row stays until its stored message replaces it."""
        node = self._stream
        if node is None:
            return
        self._settle_stream()
        node.streaming = False
        if node._thinking_since is not None and node.reasoning_seconds is None:
            node.reasoning_seconds = time.monotonic() - node._thinking_since
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
        node = self._calls.get(call.id)
        if node is not None and node.state in (PENDING, ""):
            node.state = RUNNING
            self._changed(node, TimelineRole.TOOL_STATE)

    def tool_finished(self, finish: ToolFinish) -> None:
        node = self._calls.get(finish.call_id)
        if node is not None and node.result is None:
            node.state = OK if finish.ok else FAILED
            node.duration_ms = finish.duration_ms
            self._changed(node, TimelineRole.TOOL_STATE)

    def turn_ended(self) -> None:
        """The turn is over: no part can still be running (a stop answered them as interrupted)."""
        for node in self._calls.values():
            if node.state in (PENDING, RUNNING) and node.result is None:
                node.state = INTERRUPTED
                self._changed(node, TimelineRole.TOOL_STATE)
        if self._stream is not None and not self._stream.text and not self._stream.reasoning:
            self.discard_stream()
        elif self._stream is not None:
            self.end_stream()

    def subagent_status(self, info: SubagentInfo) -> bool:
        """A subagent started or ended: update its Task part (False when it is not this timeline's)."""
        node = self._apply_subagent(info)
        if node is not None:
            self._changed(node, TimelineRole.SUBAGENT)
        return node is not None

    def _apply_subagent(self, info: SubagentInfo) -> _Node | None:
        if info.parent_session_id != self.conversation_id:
            return None
        node = self._calls.get(info.parent_call_id)
        if node is not None:
            node.subagent = _merged(node.subagent, info)
        return node

    def set_widget_request(self, call_id: str, request_id: str, widget: Mapping[str, Any] | None = None) -> bool:
        """Mark the ``ui.ask_user`` part of ``call_id`` as waiting for the user (``""``: no longer)."""
        node = self._calls.get(call_id)
        if node is None or node.widget_request == request_id:
            return node is not None
        node.widget_request = request_id
        if widget is not None:
            node.widget = widget
        self._changed(node, TimelineRole.WIDGET_REQUEST)
        return True

    def withdraw_widget_request(self, request_id: str) -> str | None:
        """Forget a waiting widget by request id; returns its call id (None when unknown)."""
        for call_id, node in self._calls.items():
            if node.widget_request == request_id:
                node.widget_request = ""
                self._changed(node, TimelineRole.WIDGET_REQUEST)
                return call_id
        return None

    # -- placing messages --------------------------------------------------------------------------

    def _place(self, message: TimelineMessage, *, notify: bool) -> None:
        existing = self._by_key.get(message.id)
        if existing is not None and existing.kind != "tool":
            existing.message, existing.text = message, message.text
            existing.reasoning = message.reasoning
            if notify:
                self._changed(existing, TimelineRole.MESSAGE)
            return
        if message.role == "tool":
            node = self._calls.get(message.tool_call_id or "")
            if node is not None:
                node.result = message
                node.state = _tool_state(message)
                node.duration_ms = message.duration_ms if message.duration_ms is not None else node.duration_ms
                if message.subagent is not None:
                    node.subagent = _merged(node.subagent, message.subagent)
                self._by_key[message.id] = node
                if notify:
                    self._changed(node, TimelineRole.TOOL_RESULT)
                return
            self._append_top(self._tool_node(None, message, row=len(self._rows)), notify)  # an orphan result
            return
        if message.role == "assistant" and self._stream is not None:
            self._settle_stream()
            node = self._stream
            self._stream = None
            self._by_key.pop(node.key, None)
            node.key, node.message, node.streaming = message.id, message, False
            node.text = message.text
            node.reasoning = message.reasoning or node.reasoning
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
        node = _Node(key=message.id, kind=kind, row=len(self._rows), message=message, text=message.text,
                     reasoning=message.reasoning, subagent=message.subagent if kind == SUBAGENT_NOTICE else None)
        self._append_top(node, notify)
        self._add_calls(node, message, notify)

    def _append_top(self, node: _Node, notify: bool) -> None:
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

    def _add_calls(self, parent: _Node, message: TimelineMessage, notify: bool) -> None:
        if not message.tool_calls:
            return
        first = len(parent.children)
        nodes = [self._tool_node(call, None, row=first + n, parent=parent) for n, call in enumerate(message.tool_calls)]
        notify = notify and self._shown(parent)
        if notify:
            self.beginInsertRows(self._index_of(parent), first, first + len(nodes) - 1)
        parent.children.extend(nodes)
        for node in nodes:
            assert node.call is not None
            self._calls[node.call.id] = node
            self._by_key[node.key] = node
        if notify:
            self.endInsertRows()

    def _tool_node(self, call: ToolCallRef | None, result: TimelineMessage | None, *, row: int, parent: _Node | None = None) -> _Node:
        key = f"tool:{call.id}" if call is not None else f"tool:{result.id if result else row}"
        node = _Node(key=key, kind="tool", row=row, parent=parent, call=call, result=result, state=PENDING)
        if result is not None:
            node.state = _tool_state(result)
            node.duration_ms = result.duration_ms
            node.subagent = result.subagent
        return node

    def _new_stream_node(self) -> _Node:
        self._streams += 1
        node = _Node(key=f"{STREAM_KEY_PREFIX}{self._streams}", kind="assistant", row=len(self._rows), streaming=True)
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

    def _changed(self, node: _Node, role: TimelineRole) -> None:
        node.version += 1
        if self._shown(node):  # a row above the window is measured afresh when it is shown
            index = self._index_of(node)
            self.dataChanged.emit(index, index, [role, TimelineRole.VERSION])

    def _last_changed(self, new_last: int) -> None:
        # The previous last row loses its IS_LAST (its Retry/Continue buttons go away).
        previous = new_last - 1
        if 0 <= previous < len(self._rows):
            self._rows[previous].version += 1
            index = self.index(previous, 0)
            self.dataChanged.emit(index, index, [TimelineRole.IS_LAST, TimelineRole.VERSION])

    def _index_of(self, node: _Node) -> QModelIndex:
        return self.createIndex(node.row, 0, node)

    # -- queries -----------------------------------------------------------------------------------

    def index_of_key(self, key: str) -> QModelIndex:
        """The row of ``key``; invalid when there is none or it is above the window."""
        node = self._by_key.get(key)
        return self._index_of(node) if node is not None and self._shown(node) else QModelIndex()

    def index_of_call(self, call_id: str) -> QModelIndex:
        node = self._calls.get(call_id)
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

    # -- QAbstractItemModel -------------------------------------------------------------------------

    def index(self, row: int, column: int = 0, parent: _Index = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, self._rows[row]) if row < len(self._rows) else QModelIndex()
        node = parent.internalPointer()
        if not isinstance(node, _Node) or node.parent is not None or row >= len(node.children):
            return QModelIndex()
        return self.createIndex(row, 0, node.children[row])

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer()
        if not isinstance(node, _Node) or node.parent is None:
            return QModelIndex()
        return self._index_of(node.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._rows)
        if parent.column() != 0:
            return 0
        node = parent.internalPointer()
        return len(node.children) if isinstance(node, _Node) and node.parent is None else 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 1

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        node = index.internalPointer()
        flags = Qt.ItemFlag.ItemIsEnabled
        if isinstance(node, _Node) and node.widget_request:
            flags |= Qt.ItemFlag.ItemIsEditable  # the waiting ask-user widget is its editor
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = index.internalPointer()
        if not isinstance(node, _Node):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(node)
        if role == Qt.ItemDataRole.ToolTipRole:
            return None
        if role < _USER:
            return None
        return self._custom(node, role)

    def _display(self, node: _Node) -> str:
        if node.kind == "tool":
            return f"{self._tool_name(node)} · {node.state}"
        return node.text

    @staticmethod
    def _tool_name(node: _Node) -> str:
        if node.call is not None:
            return node.call.name
        return (node.result.tool_name if node.result else None) or "tool"

    def _custom(self, node: _Node, role: int) -> Any:
        message = node.message if node.kind != "tool" else node.result
        if role == TimelineRole.MEASURE:
            top = node.parent or node
            special = bool(node.streaming or node.widget_request or node.highlight or node.kind in ("notice", SUBAGENT_NOTICE)
                           or node.subagent is not None
                           or (message is not None and (message.is_error or message.interrupted))
                           or (node.call is not None and node.call.name in (ASK_USER_TOOL, TASK_TOOL)))
            from_end = len(self._rows) - 1 - top.row + len(self._newer)
            return (node.key, node.version, node.kind, from_end, node.text, bool(node.reasoning), special)
        if role == TimelineRole.KIND:
            return node.kind
        if role == TimelineRole.KEY:
            return node.key
        if role == TimelineRole.MESSAGE:
            return message
        if role == TimelineRole.TEXT:
            return node.text if node.kind != "tool" else ""
        if role == TimelineRole.REASONING:
            return node.reasoning
        if role == TimelineRole.STREAMING:
            return node.streaming
        if role == TimelineRole.REASONING_SECONDS:
            return node.reasoning_seconds
        if role == TimelineRole.IS_ERROR:
            return bool(message and message.is_error)
        if role == TimelineRole.ERROR:
            return dict(message.error) if message and message.error else {}
        if role == TimelineRole.INTERRUPTED:
            return bool(message and message.interrupted) or node.state == INTERRUPTED
        if role == TimelineRole.SYNTHETIC:
            return bool(message and message.synthetic)
        if role == TimelineRole.TOOL_NAME:
            return self._tool_name(node) if node.kind == "tool" else ""
        if role == TimelineRole.TOOL_CALL_ID:
            if node.call is not None:
                return node.call.id
            return (node.result.tool_call_id if node.result else None) or ""
        if role == TimelineRole.TOOL_ARGUMENTS:
            return node.call.arguments if node.call is not None else ""
        if role == TimelineRole.TOOL_STATE:
            return node.state
        if role == TimelineRole.TOOL_DURATION:
            return node.duration_ms
        if role == TimelineRole.TOOL_RESULT:
            return node.result.text if node.result is not None else ""
        if role == TimelineRole.FULL_OUTPUT_BYTES:
            return node.result.full_output_bytes if node.result is not None else None
        if role == TimelineRole.RESULT_MESSAGE_ID:
            return node.result.id if node.result is not None else ""
        if role == TimelineRole.WIDGET_REQUEST:
            return node.widget_request
        if role == TimelineRole.VERSION:
            return node.version
        if role == TimelineRole.WIDGET:
            return node.widget if node.widget is not None else _json_object(node.call.arguments if node.call else "")
        if role == TimelineRole.SUBAGENT:
            return node.subagent
        if role == TimelineRole.HIGHLIGHT:
            return node.highlight
        if role == TimelineRole.IS_LAST:
            top = node.parent or node
            return top.row == len(self._rows) - 1 and not self._newer
        return None


def _json_object(text: str) -> Mapping[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
