"""Opt-in start-up timing for benchmarks: ``CREWAGENT_STARTUP_PROBE=1`` reports the first paints, then quits.

``benchmarks/bench_ui.py`` launches ``crewagent gui`` with the variable set and reads two lines
from standard error, each ``crewagent-startup <milestone> <time.monotonic()>`` (a clock every
process on the machine shares, so the launcher can subtract its own start time):

- ``window``: the main window's first paint;
- ``works <rows>``: the first paint of the Works list with conversations in it.

The app then quits as if closed from the menu. Without the variable nothing is installed.
"""

from __future__ import annotations

import os
import sys
import time

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from crewagent.ui.mainwindow import MainWindow

ENV = "CREWAGENT_STARTUP_PROBE"


class _Probe(QObject):
    def __init__(self, window: MainWindow):
        super().__init__(window)
        self._window = window
        self._works = window.project_view.works.view.viewport()
        self._seen_window = False
        window.installEventFilter(self)
        self._works.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Paint:
            return False
        if watched is self._window and not self._seen_window:
            self._seen_window = True
            # A zero timer fires once this paint (and the rest of the frame) is done.
            QTimer.singleShot(0, lambda: self._report("window"))
        elif watched is self._works and self._window.project_view.works.view.model().rowCount() > 0:
            self._works.removeEventFilter(self)
            QTimer.singleShot(0, self._report_works)
        return False

    def _report_works(self) -> None:
        self._report("works", str(self._window.project_view.works.view.model().rowCount()))
        QTimer.singleShot(0, QApplication.quit)

    @staticmethod
    def _report(milestone: str, *details: str) -> None:
        print("crewagent-startup", milestone, f"{time.monotonic():.6f}", *details, file=sys.stderr, flush=True)


def install_if_requested(window: MainWindow) -> None:
    """Watch ``window``'s first paints when ``CREWAGENT_STARTUP_PROBE`` is set (benchmarks only)."""
    if os.environ.get(ENV):
        _Probe(window)
