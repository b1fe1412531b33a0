"""Qt fixtures for UI tests: scripted dialogs, a worker thread and a main window wired to it."""

from __future__ import annotations

import contextlib
import functools
import importlib
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QEvent, QEventLoop, QMimeData, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from crewagent.core import turn_host
from crewagent.core.llm.demo import start_demo_server
from crewagent.ui import markdown
from crewagent.ui.dialogs import ExportAnswer, NewProjectAnswer, UnsavedAnswer
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.settings import SettingsDialog
from crewagent.ui.settings_opener import SettingsOpener
from crewagent.worker import WorkerThread
from pytestqt.exceptions import TimeoutError as WaitTimeout
from pytestqt.qtbot import QtBot
from tests.worker.conftest import worker_thread  # noqa: F401  (a fixture shared with tests/worker)
from tests.worker.gui_thread import wait_signal

# A window's first requests make the worker import the keyring backends (Settings: is there a
# key?) and jsonschema (Packages), which it does once per process. That is ~2 s of CPU on a loaded
# machine, and it used to land inside the first window's 5 s wait for the worker's answer: the
# first UI test of an xdist worker timed out while the slow tests' subprocesses held the cores.
# Imported here, at collection, no test's wait pays for it (the keyring backend is still chosen
# by the app, under each test's own folders).
for _module in ("jsonschema", "keyring.backends.SecretService", "keyring.backends.libsecret", "keyring.backends.kwallet"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_module)


@pytest.fixture(autouse=True)
def unpaced_demo(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo provider that a window's worker starts streams without the app's pause of 20 ms
    per chunk: what a test waits for comes as soon as it is ready, and a streamed answer repaints
    the window a few times instead of once per chunk (about a tenth of the UI tests' CPU, most of
    it painting timeline rows). Tests that stop a turn mid-stream script their own pacing
    (scripted_llm); the benchmarks' smoke tests keep the app's pacing."""
    if not request.module.__name__.rpartition(".")[2].startswith("test_bench_"):
        monkeypatch.setattr(turn_host, "start_demo_server", functools.partial(start_demo_server, chunk_delay=0.0))


@pytest.fixture(autouse=True)
def no_lexer_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first Markdown a window lays out schedules the compiling of 13 Pygments lexers a second
    later (markdown.warm_up_later), on a thread of its own: ~0.2 CPU-s in every xdist worker
    process, charged to whichever test runs then, for lexers that hardly any test uses (a test's
    code block compiles its own lexer when it is rendered). Marked as already scheduled here;
    tests/ui/test_markdown_blocks.py resets the mark and checks the warm-up itself."""
    monkeypatch.setattr(markdown, "_warm_up_scheduled", True)


class LeanQtBot(QtBot):
    """pytest-qt's ``QtBot``, whose ``waitUntil`` polls on one event loop and timer per wait.

    ``QtBot.waitUntil`` calls its callback every 10 ms and waits in between with ``wait(10)``,
    which makes a QEventLoop, a QTimer and their connection anew each time: ~0.5 ms of CPU a poll,
    5 % of a core for as long as a test waits (the UI tests wait about a minute in all). The same
    loop and timer reused cost ~0.2 ms a poll. Otherwise it is pytest-qt's: the callback returns
    None (raising AssertionError until then) or True/False, anything else is a ValueError, and the
    same TimeoutError is raised once ``timeout`` ms have passed.
    """

    def waitUntil(self, callback: Any, *, timeout: int = 5000) -> None:
        __tracebackhide__ = True
        start = time.time()
        loop = QEventLoop()
        timer = QTimer(loop)
        timer.setSingleShot(True)
        timer.setInterval(10)
        timer.timeout.connect(loop.quit)
        message = f"waitUntil timed out in {timeout} milliseconds"
        while True:
            try:
                result = callback()
            except AssertionError as exc:
                if (time.time() - start) * 1000 > timeout:
                    raise WaitTimeout(message) from exc
            else:
                if result not in (None, True, False):
                    raise ValueError(f"waitUntil() callback must return None, True or False, returned {result!r}")
                if result is None or result:
                    return
                if (time.time() - start) * 1000 > timeout:
                    raise WaitTimeout(message)
            timer.start()
            loop.exec()

    wait_until = waitUntil


@pytest.fixture
def qtbot(qapp: QApplication, request: pytest.FixtureRequest) -> LeanQtBot:
    """pytest-qt's ``qtbot`` with a cheaper ``waitUntil`` (see :class:`LeanQtBot`)."""
    return LeanQtBot(request)


def _top_level_widgets() -> dict[int, QWidget]:
    return {shiboken6.getCppPointer(widget)[0]: widget for widget in QApplication.topLevelWidgets()}


@pytest.fixture(autouse=True)
def no_leaked_top_level_widgets(qapp: QApplication) -> Iterator[None]:
    """Fails a test that leaves a window behind: every top-level widget it creates must be deleted
    by its owner or by qtbot (which closes and deletes what ``qtbot.addWidget`` registered)."""
    before = set(_top_level_widgets())
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()
    leaked = {key: widget for key, widget in _top_level_widgets().items() if key not in before}
    names = [f"{type(widget).__name__}({widget.objectName()!r})" for widget in leaked.values()]
    for widget in leaked.values():  # so that one leak fails one test, not every later one
        widget.close()
        widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not names, f"top-level widgets left behind: {names}"


class ScriptedDialogs:
    """Answers the app's questions (folders, names, a package file, where to save) from a script instead of showing modal dialogs."""

    def __init__(self) -> None:
        self.new_project: NewProjectAnswer | None = None
        self.folder: str | None = None
        #: The answer of a Save dialog (None: cancelled).
        self.save_path: str | None = None
        #: The answer to "make this folder a project?".
        self.make_project = False
        self.export: ExportAnswer | None = None
        self.asked: list[str] = []
        self.removal_questions = []

    def ask_new_project(self, parent: QWidget) -> NewProjectAnswer | None:
        self.asked.append("new_project")
        return self.new_project

    def ask_project_folder(self, parent: QWidget) -> str | None:
        self.asked.append("project_folder")
        return self.folder

    # The Packages page of Settings: what to import, and whether to remove a package runs use.
    package_file: str | None = None
    package_folder: str | None = None
    remove_package_anyway = False
    removal_questions: list[tuple[str, list[str]]]

    def ask_package_file(self, parent: QWidget, package_label: str = "") -> str | None:
        self.asked.append(f"package_file {package_label}" if package_label else "package_file")
        return self.package_file

    def ask_package_folder(self, parent: QWidget) -> str | None:
        self.asked.append("package_folder")
        return self.package_folder

    def confirm_remove_package(self, parent: QWidget, package: str, runs: Sequence[str]) -> bool:
        self.asked.append("confirm_remove_package")
        self.removal_questions.append((package, list(runs)))
        return self.remove_package_anyway

    #: The MCP page's Import: a Claude-Desktop-style mcpServers JSON file (None: cancelled).
    mcp_servers_file: str | None = None

    def ask_mcp_servers_file(self, parent: QWidget) -> str | None:
        self.asked.append("mcp_servers_file")
        return self.mcp_servers_file

    #: Closing Settings with unsaved changes: "save", "discard" or "cancel".
    unsaved_settings_answer: UnsavedAnswer = "cancel"

    def ask_unsaved_settings(self, parent: QWidget) -> UnsavedAnswer:
        self.asked.append("unsaved_settings")
        return self.unsaved_settings_answer

    def confirm_make_project(self, parent: QWidget, folder: str) -> bool:
        self.asked.append(f"make_project:{folder}")
        return self.make_project

    #: "Attach image…" in the composer: the files chosen ([]: cancelled).
    image_files: list[str] = []

    def ask_image_files(self, parent: QWidget) -> list[str]:
        self.asked.append("image_files")
        return list(self.image_files)

    def ask_save_path(self, parent: QWidget, title: str, suggested_name: str) -> str | None:
        self.asked.append(f"save_path:{suggested_name}")
        return self.save_path

    def ask_export_file(self, parent: QWidget, suggested_name: str) -> ExportAnswer | None:
        self.asked.append(f"export_file {suggested_name}")
        return self.export


@pytest.fixture
def dialogs() -> ScriptedDialogs:
    return ScriptedDialogs()


@pytest.fixture
def window(qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:  # noqa: F811
    """A shown main window on the Start page, with the first recent-projects answer received."""
    main = MainWindow(worker_thread.worker, dialogs=dialogs)
    qtbot.addWidget(main)
    main.show()
    with wait_signal(qtbot, worker_thread.worker.recent_projects_changed):  # the window's own copy came first
        main.start_page.refresh()
    yield main
    main.close()


class SettingsOnly(QWidget):
    """The Settings dialog wired to the worker as the main window wires it (ui/settings_opener.py),
    without the window's pages: for tests whose claim is about the dialog (a window costs about
    0.1 CPU-s to build, show and close). The window's own ways to open it are tested with a
    MainWindow (test_settings.py, test_settings_opener.py)."""

    load_settings_requested = Signal()

    def __init__(self, worker: Any, dialogs: ScriptedDialogs):
        super().__init__()
        self.settings_opener = SettingsOpener(self, worker, dialogs)
        self.load_settings_requested.connect(worker.load_settings, Qt.ConnectionType.QueuedConnection)
        self.load_settings_requested.emit()

    @property
    def settings_dialog(self) -> SettingsDialog:
        return self.settings_opener.dialog()

    def show_settings(self) -> None:
        self.settings_dialog.show_settings()

    @property
    def settings(self) -> Any:
        return self.settings_opener.settings


@pytest.fixture
def settings_only(qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[SettingsOnly]:  # noqa: F811
    """A :class:`SettingsOnly` with the worker's settings received (the dialog not built yet)."""
    host = SettingsOnly(worker_thread.worker, dialogs)
    qtbot.addWidget(host)
    qtbot.waitUntil(lambda: host.settings is not None)
    yield host
    host.settings_opener.close()


def open_settings_dialog(qtbot: Any, host: MainWindow | SettingsOnly) -> SettingsDialog:
    """Open Settings on ``host`` and wait until it shows the settings and the key state."""
    host.show_settings()
    dialog = host.settings_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.llm_page._key_state is not None)
    return dialog


def open_project(qtbot: Any, main: MainWindow, folder: Path) -> None:
    """Open ``folder`` through the Start page and wait until its conversations are shown."""
    main.start_page.request_project(str(folder))
    qtbot.waitUntil(lambda: main.stack.currentWidget() is main.project_view)
    qtbot.waitUntil(lambda: main.project_view.loaded)


def drop_on(target: QWidget, mime: QMimeData) -> None:
    """Drag ``mime`` onto the middle of ``target`` and drop it there; both events must be accepted."""
    where = QPointF(target.rect().center())
    enter = QDragEnterEvent(where.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    drop = QDropEvent(where, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, drop)
    assert drop.isAccepted()

