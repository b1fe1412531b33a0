"""The Run workspace: the panel beside the timeline that shows the open conversation's run.

It shows the run named by the conversation's ``activeRunId``: the worker reads it (``load_run``,
answered by ``run_loaded``: the state file, the audit log and the graph's layout, all off the GUI
thread) whenever the conversation is opened or changes, after each tool call and turn, and when
the run's files change on disk (:mod:`run_files`: a ``QFileSystemWatcher``, which only reports;
another process or an edit by hand). The engine's ``RunProgress`` updates the steps at once,
without waiting for the read (delivered ahead of the GUI work queued before it, see
``RunWorkspaceLayout.connect_turns``). Tabs: Progress (steps and decision log), Graph, Tool Calls, Artifacts. A rail button
collapses the panel to a strip; a conversation without a run hides it.

When the panel appears (the first snapshot of a conversation's run), it is shown in two slices of
the GUI thread: the panel with its header and empty tables first, the tables filled in the next
pass of the event loop, so that showing the panel and laying out a few hundred rows never add up
in one stall.
"""

from __future__ import annotations

import json
import time

from PySide6.QtCore import QCoreApplication, QEvent, QItemSelection, QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from crewagent.core.loop.events import RunProgress
from crewagent.core.runs.layout import GraphLayout
from crewagent.core.runs.snapshot import RunSnapshot, ToolCallView, with_progress
from crewagent.ui.core_texts import translate_core
from crewagent.ui.run_workspace.graph_view import GraphView
from crewagent.ui.run_workspace.models import ArtifactsModel, DecisionModel, ProgressModel, RunRole, ToolCallsModel, local_time
from crewagent.ui.run_workspace.run_files import RELOAD_DELAY_MS, RunFiles
from crewagent.worker.runs import LoadedRun
from crewagent.worker.turn_values import ToolFinish

def _tree(parent: QWidget, name: str) -> QTreeView:
    view = QTreeView(parent)
    view.setObjectName(name)
    view.setRootIsDecorated(False)
    view.setUniformRowHeights(True)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    return view


def _fixed_columns(view: QTreeView, *, stretch: int, widths: dict[int, str]) -> None:
    """Columns sized once from sample texts, one stretching: never ResizeToContents, which reads
    every row again on each change (with a few hundred rows, a progress update took 150 ms)."""
    header = view.header()
    header.setStretchLastSection(False)
    metrics = view.fontMetrics()
    for column, sample in widths.items():
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(column, metrics.horizontalAdvance(sample) + 24)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)


def call_text(call: ToolCallView) -> str:
    """The details of a tool call: tool, time, duration, result, ids, then the arguments in full
    (its texts in the panel's translation context)."""
    try:
        arguments = json.dumps(json.loads(call.arguments), indent=2, ensure_ascii=False)
    except ValueError:
        arguments = call.arguments
    result = QCoreApplication.translate("RunWorkspace", "ok") if call.ok else call.error_code
    lines = [
        f"{call.tool}    {local_time(call.ts)}    {call.duration_ms:.1f} ms",
        QCoreApplication.translate("RunWorkspace", "Result: {result}").format(result=result),
        QCoreApplication.translate("RunWorkspace", "Call id: {id}").format(id=call.call_id or "—"),
    ]
    if call.approval:
        lines.append(QCoreApplication.translate("RunWorkspace", "Approval: {approval}").format(approval=call.approval))
    return "\n".join(lines) + "\n\n" + arguments


class RunWorkspace(QFrame):
    """See the module docstring."""

    #: ``(project_id, conversation_id)``: read this conversation's run (``Worker.load_run``).
    load_requested = Signal(str, str)

    #: ``path``: open this file read-only in a file tab (an artifact, a step file).
    file_open_requested = Signal(str)

    #: ``(bool)``: the user expanded (True) or collapsed the panel.
    expanded_changed = Signal(bool)

    #: ``(bool)``: the panel appeared (the conversation has a run) or went away.
    visibility_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("runWorkspace")
        self._project_id = ""
        self._conversation_id = ""
        self._snapshot: RunSnapshot | None = None
        #: The engine's last progress shown, and when (``time.monotonic()``): a read of the run that
        #: began before it may hold the older state, and gets it re-applied (see ``on_run_loaded``).
        self._progress: tuple[float, RunProgress] | None = None
        self._layout: GraphLayout | None = None
        self._busy = False
        self._expanded = True

        self.rail = QToolButton(self)
        self.rail.setObjectName("runRail")
        self.rail.setCheckable(True)
        self.rail.setChecked(True)
        self.rail.setAutoRaise(True)
        self.rail.setFixedWidth(22)
        self.rail.setSizePolicy(self.rail.sizePolicy().horizontalPolicy(), self.rail.sizePolicy().Policy.Expanding)

        self.body = QWidget(self)
        self.title = QLabel(self.body)
        self.title.setObjectName("sectionTitle")
        self.subtitle = QLabel(self.body)
        self.subtitle.setObjectName("hint")
        self.phase = QLabel(self.body)
        self.phase.setObjectName("runPhase")
        self.problem = QLabel(self.body)
        self.problem.setObjectName("hint")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self.tabs = QTabWidget(self.body)
        self.tabs.setObjectName("runTabs")
        self.tabs.setDocumentMode(True)

        # Progress: the steps, then the decision log.
        self.progress_model = ProgressModel(self)
        self.decision_model = DecisionModel(self)
        progress_page = QSplitter(Qt.Orientation.Vertical, self.tabs)
        self.progress_view = _tree(progress_page, "runProgress")
        self.progress_view.setModel(self.progress_model)
        _fixed_columns(self.progress_view, stretch=0, widths={1: "Agent name", 2: "decision"})
        decisions = QWidget(progress_page)
        self.decisions_title = QLabel(decisions)
        self.decisions_title.setObjectName("hint")
        self.decision_view = _tree(decisions, "runDecisions")
        self.decision_view.setModel(self.decision_model)
        decisions_layout = QVBoxLayout(decisions)
        decisions_layout.setContentsMargins(0, 4, 0, 0)
        decisions_layout.addWidget(self.decisions_title)
        decisions_layout.addWidget(self.decision_view, 1)
        progress_page.addWidget(self.progress_view)
        progress_page.addWidget(decisions)
        progress_page.setSizes([300, 140])

        # Graph (drawn when its tab shows, see _refresh_graph).
        graph_page = QWidget(self.tabs)
        self._graph_page = graph_page
        self._graph_dirty = False
        self._center_pending = True
        self.graph = GraphView(graph_page)
        self.graph_hint = QLabel(graph_page)
        self.graph_hint.setObjectName("hint")
        self.graph_hint.setWordWrap(True)
        graph_layout = QVBoxLayout(graph_page)
        graph_layout.setContentsMargins(0, 0, 0, 0)
        graph_layout.addWidget(self.graph, 1)
        graph_layout.addWidget(self.graph_hint)

        # Tool Calls: the table, the selected call's details under it.
        self.calls_model = ToolCallsModel(self)
        calls_page = QSplitter(Qt.Orientation.Vertical, self.tabs)
        self.calls_view = _tree(calls_page, "runToolCalls")
        self.calls_view.setModel(self.calls_model)
        _fixed_columns(self.calls_view, stretch=2, widths={0: "00:00:00", 1: "fs.apply_patch", 3: "E_SCHEMA_VALID", 4: "99999 ms"})
        self.call_details = QPlainTextEdit(calls_page)
        self.call_details.setObjectName("runCallDetails")
        self.call_details.setReadOnly(True)
        self.call_details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        calls_page.addWidget(self.calls_view)
        calls_page.addWidget(self.call_details)
        calls_page.setSizes([300, 160])

        # Artifacts.
        self.artifacts_model = ArtifactsModel(self)
        artifacts_page = QWidget(self.tabs)
        self.artifacts_view = _tree(artifacts_page, "runArtifacts")
        self.artifacts_view.setModel(self.artifacts_model)
        self.artifacts_hint = QLabel(artifacts_page)
        self.artifacts_hint.setObjectName("hint")
        artifacts_layout = QVBoxLayout(artifacts_page)
        artifacts_layout.setContentsMargins(0, 0, 0, 0)
        artifacts_layout.addWidget(self.artifacts_view, 1)
        artifacts_layout.addWidget(self.artifacts_hint)

        for page in (progress_page, graph_page, calls_page, artifacts_page):
            self.tabs.addTab(page, "")

        head = QVBoxLayout()
        head.setContentsMargins(10, 8, 10, 4)
        head.setSpacing(2)
        title_row = QHBoxLayout()
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.phase)
        head.addLayout(title_row)
        head.addWidget(self.subtitle)
        head.addWidget(self.problem)
        body_layout = QVBoxLayout(self.body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.setSpacing(0)
        body_layout.addLayout(head)
        body_layout.addWidget(self.tabs, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.rail)
        layout.addWidget(self.body, 1)

        # The run's files on disk (the state and the audit), and when to read them again.
        self.files = RunFiles(self)
        self.watcher = self.files.watcher
        # The snapshot waiting for its tables while the panel appears (see the module docstring).
        self._pending: tuple[RunSnapshot, GraphLayout | None] | None = None
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)

        self.rail.toggled.connect(self.set_expanded)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.graph.node_clicked.connect(self._on_node_clicked)
        self.artifacts_view.doubleClicked.connect(self._on_artifact_activated)
        self.artifacts_view.activated.connect(self._on_artifact_activated)
        self.calls_view.selectionModel().selectionChanged.connect(self._on_call_selected)
        self.files.reload_due.connect(self.reload)
        self._fill_timer.timeout.connect(self._fill_slice)
        self.setVisible(False)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        for index, text in enumerate((self.tr("Progress"), self.tr("Graph"), self.tr("Tool Calls"), self.tr("Artifacts"))):
            self.tabs.setTabText(index, text)
        self.decisions_title.setText(self.tr("Decision log"))
        self.graph_hint.setText(self.tr("Ctrl+wheel or +/− to zoom, drag to pan; click a step to open its file."))
        self.artifacts_hint.setText(self.tr("Double-click a file to open it in a tab."))
        self.rail.setText("▸" if self._expanded else "◂")
        self.rail.setToolTip(self.tr("Hide the Run workspace") if self._expanded else self.tr("Show the Run workspace"))
        for model in (self.progress_model, self.decision_model, self.calls_model, self.artifacts_model):
            model.retranslate()
        self._show_header()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- what is shown ----------------------------------------------------------------------------

    @property
    def snapshot(self) -> RunSnapshot | None:
        return self._snapshot

    @property
    def conversation_id(self) -> str:
        return self._conversation_id

    @property
    def expanded(self) -> bool:
        return self._expanded

    @Slot(bool)
    def set_expanded(self, expanded: bool) -> None:
        """Show the tabs (True) or only the rail (the panel collapsed)."""
        changed = expanded != self._expanded
        self._expanded = expanded
        self.body.setVisible(expanded)
        self.rail.setChecked(expanded)
        self.setMaximumWidth(16_777_215 if expanded else self.rail.sizeHint().width())
        self.retranslate_ui()
        if changed:
            self.expanded_changed.emit(expanded)

    def show_conversation(self, project_id: str, conversation_id: str) -> None:
        """Follow another conversation (or none): forget the run shown, read the new one's."""
        if (project_id, conversation_id) == (self._project_id, self._conversation_id):
            return
        self._project_id, self._conversation_id = project_id, conversation_id
        self._progress = None
        self._set_busy(False)
        self._show(None, None)
        if conversation_id:
            self.reload()

    @Slot()
    def reload(self) -> None:
        """Ask the worker for the run again (now)."""
        self.files.cancel()
        if self._project_id and self._conversation_id:
            self.load_requested.emit(self._project_id, self._conversation_id)

    def schedule_reload(self, delay_ms: int | None = None) -> None:
        """Read the run again soon: after ``delay_ms`` (default: short when idle, longer during a turn)."""
        self.files.schedule(delay_ms)

    def _set_busy(self, busy: bool) -> None:
        self._busy = self.files.busy = busy

    def _show(self, snapshot: RunSnapshot | None, layout: GraphLayout | None) -> None:
        self._pending = None
        self._fill_timer.stop()
        if snapshot is not None and self.isHidden():  # the panel appears: its tables in the next slice
            self._pending = (snapshot, layout)
            self._show_header(snapshot)
            self._set_shown(True)
            self._fill_timer.start()
            return
        previous = self._snapshot
        same_run = previous is not None and snapshot is not None and previous.run_id == snapshot.run_id
        self._snapshot, self._layout = snapshot, layout
        if snapshot is None:
            self.progress_model.set_steps(())
            self.decision_model.set_decisions(())
            self.calls_model.set_calls(())
            self.artifacts_model.set_artifacts(())
            self.call_details.clear()
            self.graph.show_graph(None, ())
            self._graph_dirty, self._center_pending = False, True
            self.files.watch([])
            self._set_shown(False)
            return
        self.progress_model.set_steps(snapshot.steps)
        self.decision_model.set_decisions(snapshot.decisions)
        self.calls_model.set_calls(snapshot.tool_calls)
        self.artifacts_model.set_artifacts(snapshot.artifacts)
        self._graph_dirty = True
        self._center_pending = self._center_pending or not same_run
        self._refresh_graph()
        self.files.watch([snapshot.state_file, snapshot.audit_file])
        self._show_header()
        self._set_shown(True)

    def _set_shown(self, shown: bool) -> None:
        if shown == self.isHidden():  # isHidden: hidden by us, whatever the parent's state
            self.setVisible(shown)
            self.visibility_changed.emit(shown)

    @Slot()
    def _fill_slice(self) -> None:
        """The second slice of a panel appearing: the tables, the graph and the watch."""
        if self._pending is not None:
            self._show(*self._pending)

    def _show_header(self, snapshot: RunSnapshot | None = None) -> None:
        snapshot = snapshot or self._snapshot
        if snapshot is None:
            return
        self.title.setText(snapshot.workflow_name)
        package = f"{snapshot.package_name} {snapshot.package_version}".strip()
        self.subtitle.setText(f"{package} · {snapshot.run_id}" if package else snapshot.run_id)
        self.phase.setText(self.phase_name("running" if self._busy else snapshot.phase))
        self.problem.setText(translate_core(snapshot.problem))
        self.problem.setVisible(bool(snapshot.problem))

    def phase_name(self, phase: str) -> str:
        names = {
            "idle": self.tr("idle"),
            "running": self.tr("running"),
            "waiting-user": self.tr("waiting for you"),
            "completed": self.tr("completed"),
            "failed": self.tr("failed"),
        }
        return names.get(phase, phase)

    # -- fed by the worker ------------------------------------------------------------------------

    @Slot(object)
    def on_run_loaded(self, loaded: LoadedRun) -> None:
        if (loaded.project_id, loaded.conversation_id) != (self._project_id, self._conversation_id):
            return
        snapshot, shown = loaded.snapshot, self._progress
        if snapshot is not None and shown is not None and loaded.read_at < shown[0] and shown[1].run_id == snapshot.run_id:
            # Read before the engine's last write was shown (the progress jumps queued work, the
            # answer of an earlier read may come after it): keep the newer steps.
            progress = shown[1]
            snapshot = with_progress(snapshot, progress.current_node_id, progress.steps_completed, progress.complete)
        self._show(snapshot, loaded.layout)

    @Slot(str, object)
    def on_run_progress(self, conversation_id: str, progress: RunProgress) -> None:
        """The engine wrote the state: show the steps now, read the rest (decisions, artifacts) after."""
        snapshot = self._snapshot
        if conversation_id != self._conversation_id:
            return
        if snapshot is None or snapshot.run_id != progress.run_id:  # a run started: read it
            self.schedule_reload()
            return
        updated = with_progress(snapshot, progress.current_node_id, progress.steps_completed, progress.complete)
        self._snapshot, self._progress = updated, (time.monotonic(), progress)
        self.progress_model.set_steps(updated.steps)
        self._graph_dirty = True
        self._refresh_graph(center=True)
        self.schedule_reload()

    def _refresh_graph(self, *, center: bool = False) -> None:
        """Draw the graph now if its tab shows; else when the tab is opened (200 nodes cost the GUI
        thread a few ms per update, and building the scene much more)."""
        if not self._graph_dirty or self.tabs.currentWidget() is not self._graph_page:
            return
        self._graph_dirty = False
        snapshot = self._snapshot
        self.graph.show_graph(self._layout, snapshot.steps if snapshot is not None else ())
        if snapshot is not None and (center or self._center_pending):
            self.graph.center_on_node(snapshot.current_node_id or snapshot.entry_node_id)
        self._center_pending = False

    @Slot(str, object)
    def on_tool_finished(self, conversation_id: str, finish: ToolFinish) -> None:
        if conversation_id == self._conversation_id:
            self.schedule_reload()

    @Slot(str, str)
    def on_turn_started(self, conversation_id: str, mode: str) -> None:
        if conversation_id == self._conversation_id:
            self._set_busy(True)
            self._show_header()

    @Slot(str, str, object)
    def on_turn_finished(self, conversation_id: str, reason: str, error: object) -> None:
        if conversation_id == self._conversation_id:
            self._set_busy(False)
            self._show_header()
            self.schedule_reload(RELOAD_DELAY_MS)

    @Slot(str, object)
    def on_conversation_changed(self, project_id: str, summary: object) -> None:
        """A conversation's metadata changed: its ``activeRunId`` may name another run now."""
        if project_id == self._project_id and getattr(summary, "id", None) == self._conversation_id:
            self.schedule_reload()

    @Slot(int)
    def _on_tab_changed(self, index: int) -> None:
        self._refresh_graph()

    # -- user actions -----------------------------------------------------------------------------

    @Slot(str)
    def _on_node_clicked(self, node_id: str) -> None:
        step = self._snapshot.step(node_id) if self._snapshot is not None else None
        if step is not None and step.step_file:
            self.file_open_requested.emit(step.step_file)

    @Slot(QModelIndex)
    def _on_artifact_activated(self, index: QModelIndex) -> None:
        path = index.data(RunRole.PATH)
        if path:
            self.file_open_requested.emit(str(path))

    @Slot(QItemSelection, QItemSelection)
    def _on_call_selected(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        rows = self.calls_view.selectionModel().selectedRows()
        call = self.calls_model.value(rows[0].row()) if rows else None
        if call is None:
            self.call_details.clear()
            return
        self.call_details.setPlainText(call_text(call))
