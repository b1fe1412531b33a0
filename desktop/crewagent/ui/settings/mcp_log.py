"""Settings → MCP's "Server log" of a server the turns started: its live stderr, asked of the turn worker.

The servers a turn starts live on the turn worker's event loop, each with a bounded stderr log
(core/mcp/stderr_log.py). While the page shows a server, this asks the worker for that log
(``requested``, answered by ``TurnWorker.read_mcp_log``) when the server is selected, when its
state changes, and every :data:`INTERVAL_MS` while the page is on screen; the answer replaces the
log shown. A server the turns have not started keeps the log of its last Test Connection.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from crewagent.worker.mcp_ops import McpLog

#: How often the log of the server shown is read again while the page is on screen.
INTERVAL_MS = 2000


class McpLogFollower(QObject):
    """See the module docstring. ``page``: the widget whose visibility gates the polling; ``view``: where the log goes."""

    #: ``(server_id)``: read this server's live log (``TurnWorker.read_mcp_log``).
    requested = Signal(str)

    def __init__(self, page: QWidget, view: QPlainTextEdit):
        super().__init__(page)
        self._page = page
        self._view = view
        self.server_id = ""
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def follow(self, server_id: str) -> None:
        """The page shows ``server_id`` now ("" for none): ask for its log at once, then now and then."""
        self.server_id = server_id
        if not server_id:
            self._timer.stop()
            return
        self.requested.emit(server_id)
        self._timer.start()

    def changed(self, server_id: str) -> None:
        """``server_id`` started, failed or stopped: its log has news."""
        if server_id and server_id == self.server_id:
            self.requested.emit(server_id)

    @Slot()
    def _tick(self) -> None:
        if self.server_id and self._page.isVisible():
            self.requested.emit(self.server_id)

    @Slot(object)
    def show(self, log: McpLog) -> None:
        """The worker's answer: the live log of the server shown (a server it has not started keeps its test log)."""
        if log.server_id != self.server_id or not log.live or not log.lines:
            return
        text = "\n".join(log.lines)
        if text != self._view.toPlainText():
            self._view.setPlainText(text)
            bar = self._view.verticalScrollBar()
            bar.setValue(bar.maximum())
