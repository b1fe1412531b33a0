"""Start the desktop app: the QApplication, the worker thread and the main window."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, SignalInstance, Slot
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication

import crewagent
from crewagent.core import paths, tuning
from crewagent.ui import theme as themes
from crewagent.ui.about import AppFolders
from crewagent.ui.i18n import LanguageManager
from crewagent.ui.single_instance import InstanceServer, forward_to_running
from crewagent.ui.window_state import default_state

if TYPE_CHECKING:
    from crewagent.ui.mainwindow import MainWindow

log = logging.getLogger(__name__)

APP_NAME = "CrewAgent"


def run_gui(data_dir: str | None = None, project: str | None = None, *, self_test: bool = False) -> int:
    """Show the main window and run until it is closed; returns the exit code.

    ``data_dir`` overrides the runtime data folder (as ``--data-dir``); ``project`` opens that
    folder at start, making it a project first if it is not one yet. ``self_test`` drives one
    demo turn through the window and quits (see :mod:`crewagent.ui.self_test`).
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    tuning.tune_gui_process()  # the GIL handed to the GUI thread sooner (see core/tuning.py)
    data = paths.data_dir(data_dir)
    # One window per data folder: a second launch brings the first forward (with --project).
    if forward_to_running(data, project):
        log.info("CrewAgent already runs on %s; it was asked to come forward", data)
        return 0
    instance = InstanceServer(data)
    instance.listen()
    # The window and the worker (about 600 modules, ~1.5 s of CPU) only now: a second launch that
    # hands over to the running instance above exits without importing them.
    with tuning.start_imports():
        from crewagent.ui.mainwindow import MainWindow
        from crewagent.ui.startup_probe import install_if_requested as install_startup_probe
        from crewagent.worker import start_worker

    setup_application(app)
    theme = themes.ThemeManager(app)
    languages = LanguageManager(app)
    worker = start_worker(data_dir)
    restore_sigint = _quit_on_sigint(app)
    try:
        # Listening before the window asks for the settings: the worker may answer at once.
        shower = _ShowWhenStyled(worker.worker.settings_changed, app)
        folders = AppFolders(str(data), str(paths.config_dir()))
        window = MainWindow(worker.worker, state=default_state(), theme=theme, languages=languages, folders=folders)
        install_startup_probe(window)  # CREWAGENT_STARTUP_PROBE: benchmarks time the first paints
        shower.attach(window)
        instance.activation_requested.connect(window.activate_from_launch)
        if self_test and project:
            from crewagent.ui.self_test import SelfTest

            SelfTest(window, project).start()
        elif project:
            window.open_project_folder(project)
        return app.exec()
    finally:
        instance.close()
        restore_sigint()
        worker.stop()


def setup_application(app: QApplication) -> None:
    """Name, icon, style and the theme the desktop prefers (the settings may change it at once).

    Reads a few bundled files once, before the window exists.
    """
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(crewagent.__version__)
    app.setDesktopFileName("crewagent")
    app.setStyle("Fusion")
    first = themes.system_theme()
    app.setPalette(themes.palette(first))
    app.setStyleSheet(themes.stylesheet(first))
    icon = QPixmap()
    icon.loadFromData((resources.files("crewagent.resources") / "icons" / "crewagent.svg").read_bytes())
    app.setWindowIcon(QIcon(icon))


#: The longest the window waits for the settings (theme, language) before it shows anyway.
SHOW_DEADLINE_MS = 1500


class _ShowWhenStyled(QObject):
    """Shows the main window once the worker has read the settings, so that it does not flash in
    the wrong theme or language; a slow disk only delays it by ``SHOW_DEADLINE_MS``.

    Made before the window, which asks for the settings as it is built: the worker answers from
    its own thread, often before the window's constructor returns, and a connection made after
    that answer would leave the window waiting for the deadline.
    """

    def __init__(self, settings_changed: SignalInstance, parent: QObject | None = None):
        super().__init__(parent)
        self._window: MainWindow | None = None
        self._styled = False
        # A slot of this object (on the GUI thread): queued here, never run on the worker thread.
        settings_changed.connect(self._on_settings, Qt.ConnectionType.SingleShotConnection)

    def attach(self, window: MainWindow) -> None:
        self._window = window
        if self._styled:
            self._show()
        else:
            QTimer.singleShot(SHOW_DEADLINE_MS, window.show)

    @Slot(object)
    def _on_settings(self, _settings: object) -> None:
        self._styled = True
        if self._window is not None:
            self._show()

    def _show(self) -> None:
        # After the window's own handling of the same settings (theme, language); show() twice is harmless.
        assert self._window is not None
        QTimer.singleShot(0, self._window.show)


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
