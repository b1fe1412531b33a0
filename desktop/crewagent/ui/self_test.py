"""``crewagent gui --self-test``: drive the real window through one demo turn, then quit.

Used by packaging/smoke.sh on a built artifact: the window opens, a project is opened, a Chat
conversation is started, "list the files" is typed into the composer and sent with a real
Return key event, and the app exits 0 once the turn has finished (1 on a timeout). Whether the
turn was persisted is checked afterwards by the command line, from the store on disk.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from crewagent.ui.mainwindow import MainWindow

log = logging.getLogger(__name__)

MESSAGE = "list the files"
POLL_MS = 50


class SelfTest(QObject):
    """A small state machine polled on the GUI thread; each step waits for what a user would see."""

    def __init__(self, window: MainWindow, project: str, *, timeout_s: float = 90.0):
        super().__init__(window)
        self.window = window
        self.project = project
        self.deadline = time.monotonic() + timeout_s
        self.step = "open project"
        self._sent = False
        self._steps: dict[str, tuple[Callable[[], bool], Callable[[], None], str]] = {
            "open project": (self._window_shown, self._open_project, "project open"),
            "project open": (self._project_open, self._new_chat, "conversation open"),
            "conversation open": (self._conversation_open, self._send, "turn running"),
            "turn running": (self._turn_running, lambda: None, "turn finished"),
            "turn finished": (self._turn_finished, self._done, "done"),
        }
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def start(self) -> None:
        self._timer.start()

    def _poll(self) -> None:
        if self.step == "done":
            return
        if time.monotonic() > self.deadline:
            print(f"self-test: timed out waiting for: {self.step}", file=sys.stderr, flush=True)
            self._finish(1)
            return
        ready, act, following = self._steps[self.step]
        if ready():
            print(f"self-test: {self.step} ✓", file=sys.stderr, flush=True)
            self.step = following
            act()

    # -- conditions ------------------------------------------------------------------------

    def _window_shown(self) -> bool:
        return self.window.isVisible()

    def _project_open(self) -> bool:
        return self.window.stack.currentWidget() is self.window.project_view and self.window.project_view.loaded

    def _conversation_open(self) -> bool:
        conversation = self.window.project_view.conversation
        return conversation.loaded and bool(conversation.conversation_id)

    def _turn_running(self) -> bool:
        return self.window.project_view.conversation.busy

    def _turn_finished(self) -> bool:
        return not self.window.project_view.conversation.busy

    # -- actions ---------------------------------------------------------------------------

    def _open_project(self) -> None:
        self.window.open_project_folder(self.project)

    def _new_chat(self) -> None:
        self.window.project_view.new_chat()

    def _send(self) -> None:
        field = self.window.project_view.conversation.composer.input
        field.setFocus()
        field.setPlainText(MESSAGE)
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(field, QKeyEvent(kind, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier))

    def _done(self) -> None:
        self._finish(0)

    def _finish(self, code: int) -> None:
        self.step = "done"
        self._timer.stop()
        self.window.close()
        QApplication.exit(code)
