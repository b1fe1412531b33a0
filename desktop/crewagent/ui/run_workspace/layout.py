"""Where the Run workspace sits in the Conversation tab, its wiring, and its remembered size and visibility.

:class:`RunWorkspaceLayout` puts the conversation's column (timeline, composer) and the
:class:`RunWorkspace` side by side in a splitter, with the :class:`LogPanel` under both. Ctrl+L
shows or hides the logs. The panel's width, whether it is collapsed, the logs' height and whether
they show are saved in the window state (``ui-state.ini``, see ``window_state``).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QSplitter, QWidget

from crewagent.ui.run_workspace.logs import LogPanel
from crewagent.ui.run_workspace.panel import RunWorkspace
from crewagent.ui.urgent_relay import UrgentRelay
from crewagent.worker.bridge import Worker
from crewagent.worker.turns import TurnWorker

DEFAULT_PANEL_WIDTH = 380
DEFAULT_LOG_HEIGHT = 160
_KEYS = ("runWorkspace/width", "runWorkspace/expanded", "runWorkspace/logHeight", "runWorkspace/logsVisible")


class RunWorkspaceLayout(QObject):
    """See the module docstring; ``root`` is the widget to put under the conversation header."""

    def __init__(self, chat: QWidget, parent: QWidget):
        super().__init__(parent)
        # Made in the splitters they end up in: under the app's style sheet, moving a built
        # subtree restyles all of it (see MainWindow.__init__).
        self.root = QSplitter(Qt.Orientation.Vertical, parent)
        self.root.setObjectName("logSplitter")
        self.columns = QSplitter(Qt.Orientation.Horizontal, self.root)
        self.columns.setObjectName("runSplitter")
        self.workspace = RunWorkspace(self.columns)
        self.logs = LogPanel(self.root)
        self.columns.addWidget(chat)
        self.columns.addWidget(self.workspace)
        self.columns.setStretchFactor(0, 1)
        self.columns.setStretchFactor(1, 0)
        self.columns.setChildrenCollapsible(False)
        self.root.addWidget(self.columns)
        self.root.addWidget(self.logs)
        self.root.setStretchFactor(0, 1)
        self.root.setChildrenCollapsible(False)
        self.logs.hide()
        self.panel_width = DEFAULT_PANEL_WIDTH
        self.log_height = DEFAULT_LOG_HEIGHT

        self.toggle_logs_action = QAction(parent)
        self.toggle_logs_action.setShortcut(QKeySequence("Ctrl+L"))
        parent.addAction(self.toggle_logs_action)
        self.toggle_logs_action.triggered.connect(self.toggle_logs)
        self.logs.close_requested.connect(self.toggle_logs)
        self.columns.splitterMoved.connect(self._remember_sizes)
        self.root.splitterMoved.connect(self._remember_sizes)
        self.workspace.expanded_changed.connect(self._apply_sizes)
        self.workspace.visibility_changed.connect(self._apply_sizes)
        self.toggle_logs_action.setText(self.tr("Show or hide the logs"))

    def show_conversation(self, project_id: str, conversation_id: str) -> None:
        self.workspace.show_conversation(project_id, conversation_id)
        self.logs.show_conversation(conversation_id)

    # -- wiring (called once by the project view) ------------------------------------------------

    def connect_turns(self, turns: TurnWorker) -> None:
        workspace, logs = self.workspace, self.logs
        # The engine's progress ahead of the timeline's work queued before it (see urgent_relay.py).
        UrgentRelay(workspace.on_run_progress, workspace).follow(turns.run_progress)
        turns.tool_finished.connect(workspace.on_tool_finished)
        turns.turn_started.connect(workspace.on_turn_started)
        turns.turn_finished.connect(workspace.on_turn_finished)
        turns.conversation_changed.connect(workspace.on_conversation_changed)
        turns.turn_started.connect(logs.on_turn_started)
        turns.stream_started.connect(logs.on_stream_started)
        turns.reasoning_chunk.connect(logs.on_reasoning_chunk)
        turns.stream_ended.connect(logs.on_stream_ended)
        turns.tool_started.connect(logs.on_tool_started)
        turns.tool_finished.connect(logs.on_tool_finished)
        turns.run_progress.connect(logs.on_run_progress)
        turns.turn_finished.connect(logs.on_turn_finished)
        turns.error.connect(logs.on_error)

    def connect_worker(self, worker: Worker) -> None:
        self.workspace.load_requested.connect(worker.load_run, Qt.ConnectionType.QueuedConnection)
        worker.run_loaded.connect(self.workspace.on_run_loaded)
        worker.conversation_changed.connect(self.workspace.on_conversation_changed)

    # -- visibility and sizes ---------------------------------------------------------------------

    @Slot()
    def toggle_logs(self) -> None:
        self.set_logs_visible(not self.logs.isVisibleTo(self.root))

    def set_logs_visible(self, visible: bool) -> None:
        self.logs.setVisible(visible)
        if visible:
            self._apply_sizes()
            self.logs.view.setFocus()

    @Slot()
    def _remember_sizes(self) -> None:
        sizes = self.columns.sizes()
        if self.workspace.isVisibleTo(self.columns) and self.workspace.expanded and len(sizes) == 2 and sizes[1] > 0:
            self.panel_width = sizes[1]
        heights = self.root.sizes()
        if self.logs.isVisibleTo(self.root) and len(heights) == 2 and heights[1] > 0:
            self.log_height = heights[1]

    @Slot()
    def _apply_sizes(self) -> None:
        if self.workspace.isVisibleTo(self.columns) and self.workspace.expanded:
            total = sum(self.columns.sizes()) or self.columns.width()
            self.columns.setSizes([max(100, total - self.panel_width), self.panel_width])
        if self.logs.isVisibleTo(self.root):
            total = sum(self.root.sizes()) or self.root.height()
            self.root.setSizes([max(100, total - self.log_height), self.log_height])

    def save_state(self, state: QSettings) -> None:
        self._remember_sizes()
        state.setValue(_KEYS[0], self.panel_width)
        state.setValue(_KEYS[1], self.workspace.expanded)
        state.setValue(_KEYS[2], self.log_height)
        state.setValue(_KEYS[3], self.logs.isVisibleTo(self.root))

    def restore_state(self, state: QSettings) -> None:
        self.panel_width = _int(state.value(_KEYS[0]), DEFAULT_PANEL_WIDTH)
        self.log_height = _int(state.value(_KEYS[2]), DEFAULT_LOG_HEIGHT)
        self.workspace.set_expanded(_bool(state.value(_KEYS[1]), True))
        self.set_logs_visible(_bool(state.value(_KEYS[3]), False))
        self._apply_sizes()


def _int(value: object, default: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        return default
    return number if 80 <= number <= 4000 else default


def _bool(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return default
