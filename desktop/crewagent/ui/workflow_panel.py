"""The Workflow header: pick an installed workflow and start it; the conversation's runs, and Resume."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QCoreApplication, QEvent, QModelIndex, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from crewagent.core.packages import InstalledPackage, Workflow
from crewagent.core.runs.conversation import RunOverview
from crewagent.worker.values import PackagesListing
from crewagent.ui.narrow import PICKER_MIN, shrinkable

_Index = QModelIndex | QPersistentModelIndex


def phase_label(phase: str) -> str:
    """A run phase as users read it (idle, running, waiting-user, completed, failed)."""
    labels = {
        "idle": QCoreApplication.translate("WorkflowPanel", "Idle"),
        "running": QCoreApplication.translate("WorkflowPanel", "Running"),
        "waiting-user": QCoreApplication.translate("WorkflowPanel", "Waiting for you"),
        "completed": QCoreApplication.translate("WorkflowPanel", "Completed"),
        "failed": QCoreApplication.translate("WorkflowPanel", "Failed"),
    }
    return labels.get(phase, phase)


class WorkflowRole(IntEnum):
    PACKAGE_ID = Qt.ItemDataRole.UserRole + 1
    WORKFLOW_ID = Qt.ItemDataRole.UserRole + 2
    DESCRIPTION = Qt.ItemDataRole.UserRole + 3
    #: The package's name and version ("project-brief 1.0.0").
    PACKAGE_LABEL = Qt.ItemDataRole.UserRole + 4


class WorkflowListModel(QAbstractListModel):
    """Every workflow of the installed packages, one row each, in the listing's order."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self._rows: list[tuple[InstalledPackage, Workflow]] = []

    def set_listing(self, listing: PackagesListing) -> None:
        """The packages changed (loaded, imported, removed): a reset, which is rare."""
        self.beginResetModel()
        self._rows = list(listing.workflows())
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        package, workflow = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{workflow.display_name or workflow.id} — {package.name} {package.version}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return workflow.description or package.definition.description or None
        if role == WorkflowRole.PACKAGE_ID:
            return package.id
        if role == WorkflowRole.WORKFLOW_ID:
            return workflow.id
        if role == WorkflowRole.DESCRIPTION:
            return workflow.description or package.definition.description
        if role == WorkflowRole.PACKAGE_LABEL:
            return f"{package.name} {package.version}"
        return None

    def row_of(self, package_id: str | None, workflow_id: str | None) -> int | None:
        for row, (package, workflow) in enumerate(self._rows):
            if package.id == package_id and workflow.id == workflow_id:
                return row
        return None


class WorkflowPanel(QWidget):
    """The Workflow mode of the conversation header.

    Start asks for a new run of the picked workflow; Resume for the picked run (one that is not
    completed and whose package is installed). Both are off while a turn runs.
    """

    #: ``(package_id, workflow_id)``: start a run of that workflow in this conversation.
    start_requested = Signal(str, str)
    #: ``(run_id)``: make that run the active one and continue it.
    resume_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("workflowPanel")
        self.model = WorkflowListModel(self)
        self.picker_label = QLabel(self)
        self.picker = QComboBox(self)
        self.picker.setObjectName("workflowSelector")
        self.picker.setModel(self.model)
        self.start_button = QPushButton(self)
        self.start_button.setObjectName("startWorkflow")
        self.description = QLabel(self)
        self.description.setObjectName("hint")
        self.runs_label = QLabel(self)
        self.runs = QComboBox(self)
        self.runs.setObjectName("runSelector")
        self.resume_button = QPushButton(self)
        self.resume_button.setObjectName("resumeRun")
        self.count = QLabel(self)
        self.count.setObjectName("hint")

        shrinkable(self.picker, self.runs, minimum=PICKER_MIN)  # issue 18 item 17: 800 px wide
        shrinkable(self.description, self.count)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.picker_label)
        top.addWidget(self.picker)
        top.addWidget(self.start_button)
        top.addWidget(self.description, 1)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.runs_label)
        bottom.addWidget(self.runs)
        bottom.addWidget(self.resume_button)
        bottom.addWidget(self.count, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addLayout(bottom)

        self._busy = False
        self._run_count = 0
        self._shown_runs: dict[str, RunOverview] = {}
        self._active_run_id: str | None = None
        #: The workflow to pick when the list is (re)filled: the conversation's own, or the user's pick.
        self._wanted: tuple[str | None, str | None] = (None, None)
        self.picker.currentIndexChanged.connect(self._update)
        self.picker.activated.connect(self._on_picked)
        self.runs.currentIndexChanged.connect(self._update)
        self.start_button.clicked.connect(self._on_start)
        self.resume_button.clicked.connect(self._on_resume)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.picker_label.setText(self.tr("Workflow:"))
        self.picker.setPlaceholderText(self.tr("No workflows installed"))
        self.start_button.setText(self.tr("Start Workflow"))
        self.start_button.setToolTip(self.tr("Start a new run of this workflow in this conversation"))
        self.runs_label.setText(self.tr("Runs:"))
        self.runs.setPlaceholderText(self.tr("No runs yet"))
        self.resume_button.setText(self.tr("Resume"))
        self.resume_button.setToolTip(self.tr("Continue this run where it stopped"))
        self.count.setText(self._count_text(self._run_count))
        self._fill_runs(tuple(self._shown_runs.values()), self._selected_run_id())
        self._update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- fed by the conversation view -------------------------------------------------------------

    def set_listing(self, listing: PackagesListing) -> None:
        """The installed workflows (``packages_loaded``): the wanted one is picked while it is installed,
        else the one shown stays (a list that grows does not change it under the user)."""
        shown = self.selected_workflow()
        self.model.set_listing(listing)
        self._pick(*(shown if self._wanted == (None, None) and shown else self._wanted))

    def want_workflow(self, package_id: str | None, workflow_id: str | None) -> None:
        """Pick the conversation's workflow (the first one when it has none or it is not installed)."""
        self._wanted = (package_id, workflow_id)
        self._pick(package_id, workflow_id)

    def set_runs(self, runs: Iterable[RunOverview], active_run_id: str | None, run_count: int) -> None:
        """The conversation's runs, oldest first. The active one is picked when it changes; until
        then the run the user picked stays picked."""
        self._run_count = run_count
        self.count.setText(self._count_text(run_count))
        listed = tuple(runs)
        keep = self._selected_run_id() if active_run_id == self._active_run_id else None
        self._active_run_id = active_run_id
        self._fill_runs(listed, keep if any(run.run_id == keep for run in listed) else active_run_id)
        self._update()

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update()

    def _count_text(self, count: int) -> str:
        if count == 0:
            return self.tr("No run started in this conversation yet")
        if count == 1:
            return self.tr("1 run started in this conversation")
        return self.tr("{count} runs started in this conversation").format(count=count)

    # -- what is picked ---------------------------------------------------------------------------

    def selected_workflow(self) -> tuple[str, str] | None:
        index = self.model.index(self.picker.currentIndex(), 0)
        if not index.isValid():
            return None
        return str(index.data(WorkflowRole.PACKAGE_ID)), str(index.data(WorkflowRole.WORKFLOW_ID))

    def selected_run(self) -> RunOverview | None:
        return self._shown_runs.get(self._selected_run_id() or "")

    def _selected_run_id(self) -> str | None:
        data = self.runs.currentData()
        return str(data) if data else None

    def _pick(self, package_id: str | None, workflow_id: str | None) -> None:
        row = self.model.row_of(package_id, workflow_id)
        self.picker.setCurrentIndex(row if row is not None else (0 if self.model.rowCount() else -1))
        self._update()

    def _fill_runs(self, runs: tuple[RunOverview, ...], selected: str | None) -> None:
        self.runs.blockSignals(True)
        try:
            self.runs.clear()
            self._shown_runs = {run.run_id: run for run in runs}
            for run in runs:
                self.runs.addItem(f"{run.workflow_name} · {phase_label(run.phase)} · {run.run_id}", run.run_id)
                self.runs.setItemData(self.runs.count() - 1, f"{run.package_name} {run.package_version}", Qt.ItemDataRole.ToolTipRole)
            index = self.runs.findData(selected) if selected else -1
            self.runs.setCurrentIndex(index if index >= 0 else self.runs.count() - 1)
        finally:
            self.runs.blockSignals(False)

    @Slot()
    def _update(self) -> None:
        index = self.model.index(self.picker.currentIndex(), 0)
        description = str(index.data(WorkflowRole.DESCRIPTION) or "") if index.isValid() else ""
        if not self.model.rowCount():
            description = self.tr("No installed package provides workflows yet; import one in Settings.")
        metrics = self.description.fontMetrics()
        self.description.setText(metrics.elidedText(description, Qt.TextElideMode.ElideRight, 460))
        self.description.setToolTip(description)
        self.start_button.setEnabled(index.isValid() and not self._busy)
        run = self.selected_run()
        resumable = run is not None and not run.completed and run.package_installed and run.phase != "running"
        self.resume_button.setEnabled(resumable and not self._busy)
        self.runs.setEnabled(bool(self._shown_runs))

    @Slot(int)
    def _on_picked(self, _row: int) -> None:
        self._wanted = self.selected_workflow() or (None, None)

    @Slot()
    def _on_start(self) -> None:
        picked = self.selected_workflow()
        if picked is not None and not self._busy:
            self.start_requested.emit(*picked)

    @Slot()
    def _on_resume(self) -> None:
        run = self.selected_run()
        if run is not None and self.resume_button.isEnabled():
            self.resume_requested.emit(run.run_id)
