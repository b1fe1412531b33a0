"""WindowedTreeModel: Qt's view of a list of top-level :class:`Node` rows and their tool parts.

The Qt model plumbing of the timeline (``index``, ``parent``, ``rowCount``, ``data`` ...) and the
sliding window over a long conversation: only the rows in the window are Qt rows, the older ones
wait before it and, once it has slid up, the newer ones after it. What the rows are built from
(messages, a streamed answer, tool events) is the business of the subclass,
:class:`~crewagent.ui.timeline.model.TimelineModel`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from crewagent.ui.timeline.nodes import USER_ROLE, Node, TimelineRole, display_text, node_data

_Index = QModelIndex | QPersistentModelIndex

#: The newest rows a conversation opens with. QTreeView lays out every top-level row again when
#: one is inserted, at ~17 us a row through Python: 10,000 rows would cost ~175 ms per new
#: message. So the model shows a window over the conversation, the newest rows at first; older
#: ones join it as the user scrolls up (``show_older``), and when it grows too long the newest
#: leave it (``hide_newer``): the window slides. While it does not reach the end, new messages
#: are kept but not shown (``newer_count``); ``show_latest`` brings it back to the end.
OPEN_ROWS = 120


class WindowedTreeModel(QAbstractItemModel):
    """A two-level tree of :class:`Node` rows, of which a sliding window is shown (see the module docstring)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._rows: list[Node] = []  # the window: the rows the view sees, the newest last
        self._older: list[Node] = []  # top-level rows before the window, oldest first
        self._newer: list[Node] = []  # top-level rows after the window (it has slid up), oldest first

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

    def _show_around(self, node: Node) -> None:
        """Slide the window so that it shows ``node``'s top-level row (a search hit far up a long
        conversation), about in the middle of the window."""
        top = node.parent or node
        if self._shown(top):
            return
        every = [*self._older, *self._rows, *self._newer]
        position = next(number for number, item in enumerate(every) if item is top)
        start = max(0, min(position - OPEN_ROWS // 2, len(every) - OPEN_ROWS))
        if self._rows:
            self.beginRemoveRows(QModelIndex(), 0, len(self._rows) - 1)
            self._rows = []
            self.endRemoveRows()
        window = every[start : start + OPEN_ROWS]
        self._older, self._newer = every[:start], every[start + len(window) :]
        self.beginInsertRows(QModelIndex(), 0, len(window) - 1)
        self._rows = window
        self._renumber()
        self.endInsertRows()

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

    def _drop_from(self, top: Node, notify: bool) -> list[Node]:
        """Take the top-level row ``top`` and every one after it out of the model (an edit's old
        branch); returns them. The window keeps the rows before it."""
        every = [*self._older, *self._rows, *self._newer]
        position = next((number for number, item in enumerate(every) if item is top), None)
        if position is None:
            return []
        dropped = every[position:]
        older, shown = len(self._older), len(self._rows)
        first_shown = max(0, position - older)
        if first_shown < shown:
            if notify:
                self.beginRemoveRows(QModelIndex(), first_shown, shown - 1)
            del self._rows[first_shown:]
            if notify:
                self.endRemoveRows()
        del self._older[min(position, older):]
        del self._newer[max(0, position - older - shown):]
        return dropped

    def _renumber(self) -> None:
        for row, node in enumerate(self._rows):
            node.row = row

    def _shown(self, node: Node) -> bool:
        top = node.parent or node
        return 0 <= top.row < len(self._rows) and self._rows[top.row] is top

    # -- telling the view -------------------------------------------------------------------------

    def _changed(self, node: Node | None, role: TimelineRole) -> None:
        if node is None:
            return
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

    def _index_of(self, node: Node) -> QModelIndex:
        return self.createIndex(node.row, 0, node)

    # -- QAbstractItemModel -------------------------------------------------------------------------

    def index(self, row: int, column: int = 0, parent: _Index = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, self._rows[row]) if row < len(self._rows) else QModelIndex()
        node = parent.internalPointer()
        if not isinstance(node, Node) or node.parent is not None or row >= len(node.children):
            return QModelIndex()
        return self.createIndex(row, 0, node.children[row])

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer()
        if not isinstance(node, Node) or node.parent is None:
            return QModelIndex()
        return self._index_of(node.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._rows)
        if parent.column() != 0:
            return 0
        node = parent.internalPointer()
        return len(node.children) if isinstance(node, Node) and node.parent is None else 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 1

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        node = index.internalPointer()
        flags = Qt.ItemFlag.ItemIsEnabled
        if not isinstance(node, Node):
            return flags
        if node.widget_request:
            flags |= Qt.ItemFlag.ItemIsEditable  # the waiting ask-user widget is its editor
        if node.parent is not None or node.kind != "assistant":
            # Only an assistant message has parts (its tool calls): told so, QTreeView asks the
            # other rows for no children at each layout (two calls into Python a row fewer).
            flags |= Qt.ItemFlag.ItemNeverHasChildren
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = index.internalPointer()
        if not isinstance(node, Node):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return display_text(node)
        if role < USER_ROLE:
            return None
        top = node.parent or node
        return node_data(node, role, len(self._rows) - 1 - top.row + len(self._newer))
