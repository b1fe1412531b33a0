"""The Run workspace's item models: steps, decisions, tool calls, artifacts (each the only writer of its rows).

They are filled from :class:`~crewagent.core.runs.snapshot.RunSnapshot` values the worker read.
An update that keeps the rows (a step changed status) is a ``dataChanged`` on those rows; new tool
calls at the end of the audit are inserted; anything else resets the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import IntEnum
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPen, QPixmap

from crewagent.core.runs.snapshot import ArtifactView, Decision, StepView, ToolCallView

_Index = QModelIndex | QPersistentModelIndex
_T = TypeVar("_T")

#: The status marks (🟢 completed, 🔵 current, ⚪ pending), drawn rather than typed: an emoji font
#: is not on every desktop, and a missing one shows empty boxes.
STATUS_COLORS = {"completed": QColor("#2ea043"), "current": QColor("#2f81f7"), "pending": QColor("#8a8a8a")}
_MARKS: dict[str, QIcon] = {}


def status_mark(status: str) -> QIcon:
    """A small filled circle (completed, current) or ring (pending) in the status's colour."""
    icon = _MARKS.get(status)
    if icon is None:
        pixmap = QPixmap(14, 14)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = STATUS_COLORS.get(status, STATUS_COLORS["pending"])
        painter.setPen(QPen(color, 1.6))
        painter.setBrush(QBrush(color) if status != "pending" else Qt.BrushStyle.NoBrush)
        painter.drawEllipse(2, 2, 10, 10)
        painter.end()
        icon = _MARKS[status] = QIcon(pixmap)
    return icon
ERROR_COLOR = QColor("#d64545")


class RunRole(IntEnum):
    """Custom roles of the Run workspace's models."""

    #: The row's value (StepView, Decision, ToolCallView or ArtifactView).
    VALUE = Qt.ItemDataRole.UserRole + 1
    #: A step's status (completed, current, pending), or a node id.
    STATUS = Qt.ItemDataRole.UserRole + 2
    NODE_ID = Qt.ItemDataRole.UserRole + 3
    #: An artifact's absolute path ("" when it leaves the project).
    PATH = Qt.ItemDataRole.UserRole + 4


def local_time(ts: str) -> str:
    """An ISO timestamp of the audit as the local ``HH:MM:SS`` ("" when unreadable)."""
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%H:%M:%S")
    except (TypeError, ValueError):
        return ""


class _RowsModel(QAbstractTableModel, Generic[_T]):
    """Rows of frozen values; subclasses name the columns and say what a cell shows."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self._rows: list[_T] = []
        #: ``headers()`` as last translated: views ask for them many times per show (140 calls when
        #: the panel appears), each a few ``tr()`` calls; dropped by ``retranslate``.
        self._header_texts: Sequence[str] | None = None

    def headers(self) -> Sequence[str]:
        raise NotImplementedError

    def cell(self, row: _T, column: int, role: int) -> Any:
        raise NotImplementedError

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    #: The number of columns (``headers()`` translates, so it is not called for each cell).
    COLUMNS = 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.COLUMNS

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        if self._header_texts is None:
            self._header_texts = tuple(self.headers())
        return self._header_texts[section] if 0 <= section < len(self._header_texts) else None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == RunRole.VALUE:
            return row
        return self.cell(row, index.column(), role)

    def value(self, row: int) -> _T | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def values(self) -> list[_T]:
        return list(self._rows)

    def _reset(self, rows: Sequence[_T]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def retranslate(self) -> None:
        self._header_texts = None
        if self.headers():
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.headers()) - 1)


class ProgressModel(_RowsModel[StepView]):
    """The workflow's steps in graph order, each with its status mark, title, agent and type."""

    COLUMNS = 3

    def headers(self) -> Sequence[str]:
        return (self.tr("Step"), self.tr("Agent"), self.tr("Type"))

    def set_steps(self, steps: Sequence[StepView]) -> None:
        if [s.node_id for s in steps] != [s.node_id for s in self._rows]:
            self._reset(steps)
            return
        for row, step in enumerate(steps):
            if step != self._rows[row]:
                self._rows[row] = step
                self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))

    def cell(self, step: StepView, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return step.title
            if column == 1:
                return step.agent_name or step.agent_id
            types = {
                "step": self.tr("step"),
                "decision": self.tr("decision"),
                "merge": self.tr("merge"),
                "end": self.tr("end"),
                "subworkflow": self.tr("subworkflow"),
            }
            return types.get(step.type, step.type)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            return status_mark(step.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            status = {"completed": self.tr("completed"), "current": self.tr("current"), "pending": self.tr("pending")}.get(step.status, step.status)
            return f"{step.node_id} · {status}" + (f"\n{step.description}" if step.description else "")
        if role == RunRole.STATUS:
            return step.status
        if role == RunRole.NODE_ID:
            return step.node_id
        if role == Qt.ItemDataRole.FontRole and step.status == "current" and column == 0:
            font = QFont()
            font.setBold(True)
            return font
        return None


class DecisionModel(_RowsModel[Decision]):
    """The run's decision log: from, to, the edge taken and why."""

    COLUMNS = 4

    def headers(self) -> Sequence[str]:
        return (self.tr("From"), self.tr("To"), self.tr("Edge"), self.tr("Reason"))

    def set_decisions(self, decisions: Sequence[Decision]) -> None:
        if list(decisions) != self._rows:
            self._reset(decisions)

    def cell(self, decision: Decision, column: int, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (decision.source, decision.target, decision.label, decision.reason)[column]
        return None


class ToolCallsModel(_RowsModel[ToolCallView]):
    """The run's tool calls from its audit log: time, tool, short arguments, result, duration."""

    COLUMNS = 5

    def headers(self) -> Sequence[str]:
        return (self.tr("Time"), self.tr("Tool"), self.tr("Arguments"), self.tr("Result"), self.tr("Duration"))

    def set_calls(self, calls: Sequence[ToolCallView]) -> None:
        old = len(self._rows)
        if len(calls) >= old and list(calls[:old]) == self._rows:
            if len(calls) > old:
                self.beginInsertRows(QModelIndex(), old, len(calls) - 1)
                self._rows.extend(calls[old:])
                self.endInsertRows()
            return
        self._reset(calls)

    def cell(self, call: ToolCallView, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return local_time(call.ts)
            if column == 1:
                return call.tool
            if column == 2:
                return call.short_arguments
            if column == 3:
                return self.tr("ok") if call.ok else call.error_code or self.tr("error")
            return f"{call.duration_ms:.0f} ms"
        if role == Qt.ItemDataRole.ForegroundRole and column == 3 and not call.ok:
            return QBrush(ERROR_COLOR)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 2:
            return call.arguments
        return None


class ArtifactsModel(_RowsModel[ArtifactView]):
    """The files the run wrote (``artifacts[]``) or declares (node outputs)."""

    COLUMNS = 3

    def headers(self) -> Sequence[str]:
        return (self.tr("File"), self.tr("From"), self.tr("Status"))

    def set_artifacts(self, artifacts: Sequence[ArtifactView]) -> None:
        if list(artifacts) != self._rows:
            self._reset(artifacts)

    def cell(self, artifact: ArtifactView, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return artifact.path
            if column == 1:
                return self.tr("state") if artifact.source == "state" else artifact.source
            if not artifact.absolute:
                return self.tr("outside the project")
            return self.tr("written") if artifact.exists else self.tr("not written yet")
        if role == Qt.ItemDataRole.ToolTipRole:
            return artifact.absolute or artifact.path
        if role == RunRole.PATH:
            return artifact.absolute
        if role == Qt.ItemDataRole.ForegroundRole and not artifact.exists:
            return QBrush(QColor("#8a8a8a"))
        return None
