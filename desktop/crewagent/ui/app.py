"""Start the desktop app: the QApplication, the worker thread and the main window."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from importlib import resources

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QIcon, QPalette, QPixmap
from PySide6.QtWidgets import QApplication

import crewagent
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.window_state import default_state
from crewagent.worker import start_worker

log = logging.getLogger(__name__)

APP_NAME = "CrewAgent"


def run_gui(data_dir: str | None = None, project: str | None = None) -> int:
    """Show the main window and run until it is closed; returns the exit code.

    ``data_dir`` overrides the runtime data folder (as ``--data-dir``); ``project`` opens that
    folder at start, making it a project first if it is not one yet.
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    setup_application(app)
    worker = start_worker(data_dir)
    restore_sigint = _quit_on_sigint(app)
    try:
        window = MainWindow(worker.worker, state=default_state())
        window.show()
        if project:
            window.open_project_folder(project)
        return app.exec()
    finally:
        restore_sigint()
        worker.stop()


def setup_application(app: QApplication) -> None:
    """Name, icon, style and palette. Reads a few bundled files once, before the window exists."""
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(crewagent.__version__)
    app.setDesktopFileName("crewagent")
    app.setStyle("Fusion")
    app.setPalette(light_palette())
    styles = resources.files("crewagent.resources") / "styles" / "light.qss"
    app.setStyleSheet(styles.read_text(encoding="utf-8"))
    icon = QPixmap()
    icon.loadFromData((resources.files("crewagent.resources") / "icons" / "crewagent.svg").read_bytes())
    app.setWindowIcon(QIcon(icon))


def light_palette() -> QPalette:
    """One light theme for now; the settings issue adds system/dark."""
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#f4f5f8",
        QPalette.ColorRole.WindowText: "#111827",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f1f3f9",
        QPalette.ColorRole.Text: "#111827",
        QPalette.ColorRole.PlaceholderText: "#6b7280",
        QPalette.ColorRole.Button: "#ffffff",
        QPalette.ColorRole.ButtonText: "#111827",
        QPalette.ColorRole.Highlight: "#e0e7ff",
        QPalette.ColorRole.HighlightedText: "#1e1b4b",
        QPalette.ColorRole.ToolTipBase: "#111827",
        QPalette.ColorRole.ToolTipText: "#f9fafb",
        QPalette.ColorRole.Link: "#4f46e5",
    }
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#9ca3af"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#9ca3af"))
    return palette


def _quit_on_sigint(app: QApplication) -> Callable[[], None]:
    """Ctrl+C in the terminal closes the windows; returns a function that undoes this.

    Qt's event loop runs in C++, so a timer wakes the interpreter now and then to let the
    Python signal handler run.
    """
    previous = signal.signal(signal.SIGINT, lambda *_: app.closeAllWindows())
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(250)

    def restore() -> None:
        timer.stop()
        timer.deleteLater()
        signal.signal(signal.SIGINT, previous)

    return restore
