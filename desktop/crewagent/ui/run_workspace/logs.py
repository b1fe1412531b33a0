"""The Logs panel: the execution log of the conversation shown (thinking, tool, info, warn, error lines).

Fed from the turn signals by the Run workspace; one model row per entry (never a widget per line),
at most :data:`MAX_ENTRIES` (the oldest go first). A model call's reasoning is one ``thinking``
entry that grows as it streams (a ``dataChanged`` on that row).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QShowEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTreeView, QVBoxLayout, QWidget

from crewagent.core.loop.events import RunProgress
from crewagent.ui import shortcuts
from crewagent.ui.core_texts import translate_core
from crewagent.ui.shortcuts import PanelKey
from crewagent.worker.turn_values import ToolCallRef, ToolFinish, TurnError

_Index = QModelIndex | QPersistentModelIndex

MAX_ENTRIES = 1000
#: Characters of a thinking entry (the timeline shows the reasoning in full).
MAX_THINKING_CHARS = 400
LEVELS = ("thinking", "tool", "info", "warn", "error")
LEVEL_COLORS = {"thinking": QColor("#8a8a8a"), "warn": QColor("#c98a1b"), "error": QColor("#d64545")}


@dataclass(frozen=True, slots=True)
class LogEntry:
    time: datetime
    level: str
    text: str


class LogModel(QAbstractTableModel):
    """The log's entries: time, level, text (see the module docstring)."""

    def __init__(self, parent: Any = None, *, limit: int = MAX_ENTRIES):
        super().__init__(parent)
        self._entries: list[LogEntry] = []
        self._limit = limit
        self._thinking_row = -1  # the row a streaming reasoning grows, -1 when none

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else 3

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 3:
            return (self.tr("Time"), self.tr("Level"), self.tr("Message"))[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return entry.time.strftime("%H:%M:%S")
            if index.column() == 1:
                return self.level_name(entry.level)
            return entry.text.replace("\n", " ")
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 2:
            return entry.text
        if role == Qt.ItemDataRole.ForegroundRole and entry.level in LEVEL_COLORS:
            return QBrush(LEVEL_COLORS[entry.level])
        if role == Qt.ItemDataRole.UserRole:
            return entry.level
        return None

    def level_name(self, level: str) -> str:
        names = {
            "thinking": self.tr("thinking"),
            "tool": self.tr("tool"),
            "info": self.tr("info"),
            "warn": self.tr("warn"),
            "error": self.tr("error"),
        }
        return names.get(level, level)

    def entries(self) -> list[LogEntry]:
        return list(self._entries)

    def add(self, level: str, text: str, *, now: datetime | None = None) -> None:
        """Append an entry (the oldest is dropped past the limit)."""
        if level != "thinking":
            self._thinking_row = -1
        if len(self._entries) >= self._limit:
            drop = len(self._entries) - self._limit + 1
            self.beginRemoveRows(QModelIndex(), 0, drop - 1)
            del self._entries[:drop]
            self.endRemoveRows()
            if self._thinking_row >= 0:
                self._thinking_row -= drop
        row = len(self._entries)
        self.beginInsertRows(QModelIndex(), row, row)
        self._entries.append(LogEntry(now or datetime.now(), level, text))
        self.endInsertRows()

    def add_thinking(self, text: str) -> None:
        """More reasoning of the current model call: grows its entry, or starts one."""
        row = self._thinking_row
        if 0 <= row < len(self._entries):
            entry = self._entries[row]
            if len(entry.text) >= MAX_THINKING_CHARS:
                return
            combined = entry.text + text
            if len(combined) > MAX_THINKING_CHARS:
                combined = combined[: MAX_THINKING_CHARS - 1] + "…"
            self._entries[row] = replace(entry, text=combined)
            self.dataChanged.emit(self.index(row, 2), self.index(row, 2))
            return
        self.add("thinking", text[:MAX_THINKING_CHARS])
        self._thinking_row = len(self._entries) - 1

    def end_thinking(self) -> None:
        self._thinking_row = -1

    def clear(self) -> None:
        if not self._entries:
            return
        self.beginResetModel()
        self._entries.clear()
        self._thinking_row = -1
        self.endResetModel()

    def retranslate(self) -> None:
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 2)
        if self._entries:
            self.dataChanged.emit(self.index(0, 1), self.index(len(self._entries) - 1, 1))


class LogPanel(QFrame):
    """The bottom panel showing :class:`LogModel`; Ctrl+K clears it while it has the focus."""

    #: The user closed the panel (its close button).
    close_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("runLogs")
        self.model = LogModel(self)
        self._conversation_id = ""
        #: Lines came while the panel was hidden, with the log at its bottom: go there when shown.
        self._follow_when_shown = False
        self.title = QLabel(self)
        self.title.setObjectName("sectionTitle")
        self.clear_button = QPushButton(self)
        self.clear_button.setObjectName("linkButton")
        self.close_button = QPushButton(self)
        self.close_button.setObjectName("linkButton")
        self.view = QTreeView(self)
        self.view.setObjectName("runLogView")
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setModel(self.model)
        # Fixed widths: ResizeToContents would read all 1,000 rows again on every new line.
        header = self.view.header()
        header.setStretchLastSection(True)
        metrics = self.view.fontMetrics()
        header.resizeSection(0, metrics.horizontalAdvance("00:00:00") + 24)
        header.resizeSection(1, metrics.horizontalAdvance("thinking") + 24)
        # Ctrl+K clears the log only when the focus is in this panel: the window's Ctrl+K focuses
        # search everywhere else. A second QAction for the key would make it ambiguous in the
        # window (neither would run), so the panel claims the key with PanelKey.
        self.clear_key = PanelKey(shortcuts.SEARCH, self)
        top = QHBoxLayout()
        top.setContentsMargins(10, 4, 10, 0)
        top.addWidget(self.title)
        top.addStretch(1)
        top.addWidget(self.clear_button)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self.clear_key.activated.connect(self.model.clear)
        self.clear_button.clicked.connect(self.model.clear)
        self.close_button.clicked.connect(self.close_requested)
        self.model.rowsInserted.connect(self._follow)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Logs"))
        self.clear_button.setText(self.tr("Clear"))
        self.clear_button.setToolTip(self.tr("Clear the log (Ctrl+K while the log has the focus)"))
        self.close_button.setText(self.tr("Hide"))
        self.close_button.setToolTip(self.tr("Hide the log (Ctrl+L)"))
        self.model.retranslate()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- fed by the turn signals (the conversation shown only) ------------------------------------

    @property
    def conversation_id(self) -> str:
        return self._conversation_id

    def show_conversation(self, conversation_id: str) -> None:
        """Follow another conversation: the log starts empty."""
        if conversation_id != self._conversation_id:
            self._conversation_id = conversation_id
            self.model.clear()

    def _mine(self, conversation_id: str) -> bool:
        return bool(conversation_id) and conversation_id == self._conversation_id

    @Slot(str, str)
    def on_turn_started(self, conversation_id: str, mode: str) -> None:
        if self._mine(conversation_id):
            self.model.add("info", self.tr("Turn started ({mode} mode)").format(mode=mode))

    @Slot(str, int, str)
    def on_stream_started(self, conversation_id: str, step: int, model: str) -> None:
        if self._mine(conversation_id):
            self.model.add("info", self.tr("Model call {step} ({model})").format(step=step, model=model))

    @Slot(str, str)
    def on_reasoning_chunk(self, conversation_id: str, text: str) -> None:
        if self._mine(conversation_id):
            self.model.add_thinking(text)

    @Slot(str)
    def on_stream_ended(self, conversation_id: str) -> None:
        if self._mine(conversation_id):
            self.model.end_thinking()

    @Slot(str, object)
    def on_tool_started(self, conversation_id: str, call: ToolCallRef) -> None:
        if self._mine(conversation_id):
            arguments = call.arguments if len(call.arguments) <= 120 else call.arguments[:119] + "…"
            self.model.add("tool", f"→ {call.name} {arguments}")

    @Slot(str, object)
    def on_tool_finished(self, conversation_id: str, finish: ToolFinish) -> None:
        if not self._mine(conversation_id):
            return
        if finish.ok:
            self.model.add("tool", self.tr("✓ {tool} ok ({ms} ms)").format(tool=finish.name, ms=f"{finish.duration_ms:.0f}"))
        else:
            self.model.add("warn", self.tr("✗ {tool} failed: {code}").format(tool=finish.name, code=finish.error_code or "?"))

    @Slot(str, object)
    def on_run_progress(self, conversation_id: str, progress: RunProgress) -> None:
        if not self._mine(conversation_id):
            return
        if progress.complete:
            self.model.add("info", self.tr("The workflow is complete."))
        else:
            self.model.add("info", self.tr("Run state saved: now on {node}, {count} step(s) done.").format(
                node=progress.current_node_id or "—", count=len(progress.steps_completed)))

    @Slot(str, str, object)
    def on_turn_finished(self, conversation_id: str, reason: str, error: object) -> None:
        if not self._mine(conversation_id):
            return
        self.model.end_thinking()
        if reason == "error":
            message = error.get("message", "") if isinstance(error, Mapping) else ""
            self.model.add("error", self.tr("Turn failed: {message}").format(message=translate_core(message) or reason))
        elif reason == "stopped":
            self.model.add("warn", self.tr("Turn stopped."))
        elif reason == "waiting_user":
            self.model.add("info", self.tr("Turn ended: waiting for your answer."))
        else:
            self.model.add("info", self.tr("Turn completed."))

    @Slot(object)
    def on_error(self, error: TurnError) -> None:
        if self._mine(error.conversation_id):
            self.model.add("error", translate_core(error.message))

    def _follow(self) -> None:
        if self._follow_when_shown:
            return
        bar = self.view.verticalScrollBar()
        if bar.value() >= bar.maximum() - 4:  # at the bottom: stay there
            if self.view.isVisible():
                self.view.scrollToBottom()
            else:
                # Hidden (the panel is closed by default): scrolling lays the hidden view out
                # again for every line (~1 ms each, every turn of every conversation). Nobody can
                # scroll a hidden log, so it is done once, when the panel is shown.
                self._follow_when_shown = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._follow_when_shown:
            self._follow_when_shown = False
            self.view.scrollToBottom()
