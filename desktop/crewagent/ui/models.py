"""Item models for the Start page's recent projects and a project's conversation list.

Each model is filled only through its adapter methods (``set_*``, ``upsert``, ``remove``), which
are the only places that call ``begin*``/``end*``: the views keep their selection and scroll
position across every change except a full reload.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Slot

from crewagent.worker.values import ConversationSummary, RecentProjectEntry

_Index = QModelIndex | QPersistentModelIndex
_USER = Qt.ItemDataRole.UserRole.value


class RecentProjectRole(IntEnum):
    """Custom data roles of :class:`RecentProjectsModel`."""

    ENTRY = _USER  #: the whole RecentProjectEntry
    PROJECT_ID = _USER + 1
    ROOT = _USER + 2
    LAST_OPENED_AT = _USER + 3
    EXISTS = _USER + 4  #: False when the folder (or its .crewagent.json) has gone missing


class ConversationRole(IntEnum):
    """Custom data roles of :class:`ConversationListModel`."""

    SUMMARY = _USER  #: the whole ConversationSummary
    CONVERSATION_ID = _USER + 1
    ENTRY_TYPE = _USER + 2
    ACTIVE_TYPE = _USER + 3
    LAST_ACTIVE_AT = _USER + 4
    MESSAGE_COUNT = _USER + 5
    RUNNING = _USER + 6  #: True while a turn runs in the conversation


class RecentProjectsModel(QAbstractListModel):
    """The recent projects, most recently opened first, in the order the store gives them."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._entries: list[RecentProjectEntry] = []

    def set_entries(self, entries: Iterable[RecentProjectEntry]) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entry(self, row: int) -> RecentProjectEntry:
        return self._entries[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.name
        if role == Qt.ItemDataRole.ToolTipRole:
            if entry.exists:
                return entry.root
            return self.tr("{root}\nThis folder is missing or is no longer a project.").format(root=entry.root)
        if role == RecentProjectRole.ENTRY:
            return entry
        if role == RecentProjectRole.PROJECT_ID:
            return entry.project_id
        if role == RecentProjectRole.ROOT:
            return entry.root
        if role == RecentProjectRole.LAST_OPENED_AT:
            return entry.last_opened_at
        if role == RecentProjectRole.EXISTS:
            return entry.exists
        return None


class ConversationListModel(QAbstractListModel):
    """A project's conversations, most recently active first.

    ``upsert`` keeps that order itself (a conversation that becomes active moves to the top with
    ``beginMoveRows``), so the view never needs a reset after the initial ``set_conversations``.
    """

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._items: list[ConversationSummary] = []
        #: Conversations with a running turn (kept across list reloads; a turn outlives them).
        self._running: set[str] = set()

    # -- adapter: the only writers -----------------------------------------------------------

    def set_conversations(self, items: Iterable[ConversationSummary]) -> None:
        self.beginResetModel()
        self._items = sorted(items, key=_recency)
        self.endResetModel()

    def clear(self) -> None:
        self.set_conversations(())

    def upsert(self, item: ConversationSummary) -> int:
        """Add a conversation or replace the one with the same id; returns its row."""
        old_row = self.row_of(item.id)
        if old_row is None:
            row = self._insert_position(item, self._items)
            self.beginInsertRows(QModelIndex(), row, row)
            self._items.insert(row, item)
            self.endInsertRows()
            return row
        old = self._items[old_row]
        if old == item:
            return old_row  # nothing changed: no signal (a dataChanged would reset an open rename editor)
        others = self._items[:old_row] + self._items[old_row + 1 :]
        row = self._insert_position(item, others)
        if row != old_row:
            # beginMoveRows wants the destination in the coordinates before the move.
            destination = row if row < old_row else row + 1
            self.beginMoveRows(QModelIndex(), old_row, old_row, QModelIndex(), destination)
            self._items = [*others[:row], item, *others[row:]]
            self.endMoveRows()
        else:
            self._items[row] = item
        changed = self.index(row)
        self.dataChanged.emit(changed, changed)
        return row

    def merge(self, items: Iterable[ConversationSummary]) -> None:
        """A reload of the whole list: rows change in place (no reset), so the selection stays.

        Rows not listed go, new ones come, changed ones are updated (only those: a reload comes
        about once a second while a turn appends in a burst). A reload can be older than what a running turn has
        reported since (the index was read before its last message): the count of a running
        conversation never goes back.
        """
        listed = {item.id: item for item in items}
        for gone in [item.id for item in self._items if item.id not in listed]:
            self.remove(gone)
        shown = {item.id: item for item in self._items}
        for item in listed.values():
            current = shown.get(item.id)
            if current is not None:
                item = self._not_behind(item, current)
            if item != current:
                self.upsert(item)

    def _not_behind(self, item: ConversationSummary, current: ConversationSummary) -> ConversationSummary:
        if item.id not in self._running or item.message_count >= current.message_count:
            return item
        return dataclasses.replace(item, message_count=current.message_count)

    # -- a running turn: its row says so and counts what it persists (issue 18, stale state) ----

    @Slot(str, str)
    def on_turn_started(self, conversation_id: str, mode: str) -> None:
        self._running.add(conversation_id)
        self._row_changed(conversation_id)

    @Slot(str, str, object)
    def on_turn_finished(self, conversation_id: str, reason: str, error: object) -> None:
        self._running.discard(conversation_id)
        self._row_changed(conversation_id)

    @Slot(str, object)
    def on_message_persisted(self, conversation_id: str, message: object) -> None:
        """One more message in the log; the turn's end brings the exact count from the index."""
        row = self.row_of(conversation_id)
        if row is not None and conversation_id in self._running:
            item = self._items[row]
            self._items[row] = dataclasses.replace(item, message_count=item.message_count + 1)
            self._row_changed(conversation_id)

    @Slot(str, object)
    def on_counted(self, project_id: str, item: ConversationSummary) -> None:
        """An opened conversation's entry as its log holds it: its row, if shown, is updated."""
        row = self.row_of(item.id)
        if row is not None:
            self.upsert(self._not_behind(item, self._items[row]))

    def _row_changed(self, conversation_id: str) -> None:
        row = self.row_of(conversation_id)
        if row is not None:
            self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, conversation_id: str) -> None:
        row = self.row_of(conversation_id)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._items[row]
        self.endRemoveRows()

    @staticmethod
    def _insert_position(item: ConversationSummary, items: list[ConversationSummary]) -> int:
        # A tie goes to the top: a brand-new conversation shows first.
        return bisect.bisect_left(items, _recency(item), key=_recency)

    # -- queries -----------------------------------------------------------------------------

    def row_of(self, conversation_id: str) -> int | None:
        return next((row for row, item in enumerate(self._items) if item.id == conversation_id), None)

    def summary(self, row: int) -> ConversationSummary:
        return self._items[row]

    # -- QAbstractItemModel ------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ToolTipRole):
            return item.title
        if role == ConversationRole.SUMMARY:
            return item
        if role == ConversationRole.CONVERSATION_ID:
            return item.id
        if role == ConversationRole.ENTRY_TYPE:
            return item.entry_type
        if role == ConversationRole.ACTIVE_TYPE:
            return item.active_type
        if role == ConversationRole.LAST_ACTIVE_AT:
            return item.last_active_at
        if role == ConversationRole.MESSAGE_COUNT:
            return item.message_count
        if role == ConversationRole.RUNNING:
            return item.id in self._running
        return None


    def flags(self, index: _Index) -> Qt.ItemFlag:
        # Editable so that the view opens an inline editor (F2, double-click); the Works panel's
        # delegate turns the edit into a rename request instead of writing here.
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable


def _recency(item: ConversationSummary) -> float:
    return -item.last_active_at.timestamp()
