"""The main window: the composition root that builds the pages and wires them to the worker."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QStackedWidget, QVBoxLayout, QWidget

import crewagent
from crewagent.ui.dialogs import ProjectDialogs, QtProjectDialogs
from crewagent.ui.message_bar import MessageBar
from crewagent.ui.project_view import ProjectView
from crewagent.ui.start_page import StartPage
from crewagent.ui.window_state import read_bytes
from crewagent.worker import ProjectRef, Worker

APP_TITLE = "CrewAgent"


class MainWindow(QMainWindow):
    """Builds the Start page, the project view, the actions and the message bar, and wires them.

    It owns no store and no business rule: requests go from the pages to the worker's slots
    and results come back from the worker's signals, all connected in ``_connect_signals``.
    The pages never reference each other.
    """

    def __init__(
        self,
        worker: Worker,
        *,
        dialogs: ProjectDialogs | None = None,
        state: QSettings | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self._worker = worker
        self._state = state

        self.message_bar = MessageBar(self)
        self.start_page = StartPage(dialogs or QtProjectDialogs(), self)
        self.project_view = ProjectView(self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(self.project_view)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.status_project = QLabel(self)
        self.statusBar().addPermanentWidget(self.status_project)

        self._create_actions()
        self._create_menus()
        self._connect_signals()
        self.resize(1120, 720)
        self._restore_state()
        self.show_start_page()

    def _create_actions(self) -> None:
        def action(text: str, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None, tip: str = "") -> QAction:
            created = QAction(text, self)
            if shortcut is not None:
                created.setShortcut(QKeySequence(shortcut))
            if tip:
                created.setStatusTip(tip)
            self.addAction(created)  # shortcuts work even with the menu bar hidden
            return created

        self.new_project_action = action(
            self.tr("&New Project…"), QKeySequence.StandardKey.New, self.tr("Create a project folder")
        )
        self.open_project_action = action(
            self.tr("&Open Project…"), QKeySequence.StandardKey.Open, self.tr("Open an existing project folder")
        )
        self.new_conversation_action = action(
            self.tr("New &Conversation"), "Ctrl+Shift+N", self.tr("Start a Chat conversation in this project")
        )
        self.exit_project_action = action(
            self.tr("&Exit Project"), "Ctrl+Shift+W", self.tr("Close the project and return to the Start page")
        )
        # QKeySequence.Quit is empty on Windows; Ctrl+Q is what users expect everywhere.
        self.quit_action = action(self.tr("&Quit"), "Ctrl+Q", self.tr("Quit CrewAgent"))
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.about_action = action(self.tr("&About CrewAgent"))
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)

    def _create_menus(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        file_menu.addAction(self.new_project_action)
        file_menu.addAction(self.open_project_action)
        file_menu.addSeparator()
        file_menu.addAction(self.new_conversation_action)
        file_menu.addAction(self.exit_project_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        help_menu = self.menuBar().addMenu(self.tr("&Help"))
        help_menu.addAction(self.about_action)

    def _connect_signals(self) -> None:
        worker, start, project = self._worker, self.start_page, self.project_view
        # UI -> worker: always queued, so the slot runs on the worker thread, never here.
        queued = Qt.ConnectionType.QueuedConnection
        start.refresh_requested.connect(worker.load_recent_projects, queued)
        start.new_project_requested.connect(worker.create_project, queued)
        start.open_project_requested.connect(worker.open_project, queued)
        start.forget_project_requested.connect(worker.forget_project, queued)
        project.new_conversation_requested.connect(worker.create_conversation, queued)

        # worker -> UI (queued by Qt: the receivers live on the GUI thread).
        worker.recent_projects_changed.connect(start.set_recent_projects)
        worker.project_opened.connect(self._on_project_opened)
        worker.conversations_loaded.connect(project.set_conversations)
        worker.conversation_created.connect(project.add_conversation)
        worker.error.connect(self._on_worker_error)

        # Page navigation and actions.
        project.exit_requested.connect(self.show_start_page)
        self.new_project_action.triggered.connect(start.prompt_new_project)
        self.open_project_action.triggered.connect(start.prompt_open_project)
        self.new_conversation_action.triggered.connect(project.new_chat)
        self.exit_project_action.triggered.connect(self.show_start_page)
        self.quit_action.triggered.connect(self.close)
        self.about_action.triggered.connect(self._show_about)

    # -- navigation --------------------------------------------------------------------------

    @Slot()
    def show_start_page(self) -> None:
        self.project_view.clear()
        self.stack.setCurrentWidget(self.start_page)
        self.setWindowTitle(APP_TITLE)
        self.status_project.setText("")
        self._update_actions()
        self.start_page.refresh()  # a folder may have gone missing since the list was read

    def open_project_folder(self, folder: str) -> None:
        """Open ``folder`` at start-up, making it a project if it is not one (``--project``)."""
        self.start_page.request_project(folder, create=True)

    @Slot(object)
    def _on_project_opened(self, project: ProjectRef) -> None:
        self.message_bar.clear()
        self.project_view.show_project(project)
        self.stack.setCurrentWidget(self.project_view)
        self.setWindowTitle(f"{project.name} — {APP_TITLE}")
        self.status_project.setText(project.root)
        self._update_actions()

    def _update_actions(self) -> None:
        in_project = self.stack.currentWidget() is self.project_view
        self.new_conversation_action.setEnabled(in_project)
        self.exit_project_action.setEnabled(in_project)

    @Slot(str, str)
    def _on_worker_error(self, request: str, message: str) -> None:
        self.message_bar.show_error(message)

    @Slot()
    def _show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("About CrewAgent"))
        box.setText(f"<b>CrewAgent Desktop</b> {crewagent.__version__}")
        box.setInformativeText(self.tr("A desktop workbench for LLM agents."))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal, does not block the event loop

    # -- remembered geometry -----------------------------------------------------------------

    def _restore_state(self) -> None:
        if self._state is None:
            return
        geometry = read_bytes(self._state, "window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        splitter = read_bytes(self._state, "projectView/splitter")
        if splitter is not None:
            self.project_view.splitter.restoreState(splitter)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._state is not None:
            self._state.setValue("window/geometry", self.saveGeometry())
            self._state.setValue("projectView/splitter", self.project_view.splitter.saveState())
            self._state.sync()
        super().closeEvent(event)
