"""The main window: the composition root that builds the pages and wires them to the worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QStackedWidget, QVBoxLayout, QWidget

from crewagent.core import paths
from crewagent.core.settings import Settings
from crewagent.core.runs.conversation import RunOverview
from crewagent.ui import shortcuts, wiring
from crewagent.ui.about import AboutDialog, AppFolders
from crewagent.ui.approval import ApprovalController, ApprovalPrompter
from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs, QtProjectDialogs
from crewagent.ui.export_action import ConversationExporter
from crewagent.ui.i18n import LanguageManager
from crewagent.ui.message_bar import MessageBar
from crewagent.ui.model_picker import connect_model_picker
from crewagent.ui.narrow import shrinkable
from crewagent.ui.project_view import ProjectView
from crewagent.ui.settings.labels import provider_label
from crewagent.ui.settings_opener import SettingsOpener
from crewagent.ui.shortcut_sheet import ShortcutSheetOpener
from crewagent.ui.sidebar_toggle import SidebarToggle
from crewagent.ui.single_instance import ActivationRequest
from crewagent.ui.start_page import StartPage
from crewagent.ui.theme import ThemeManager
from crewagent.ui.workflow_panel import phase_label
from crewagent.ui.window_state import read_bytes
from crewagent.worker import ProjectRef, Worker
from crewagent.worker.turn_values import ProviderInfo, TurnError
from crewagent.worker.values import PackageImport

if TYPE_CHECKING:
    from crewagent.ui.settings import SettingsDialog

APP_TITLE = "CrewAgent"
#: Milliseconds a close waits for running turns to stop and persist what they stopped.
CLOSE_TIMEOUT_MS = 5_000


class MainWindow(QMainWindow):
    """Builds the Start page, the project view, the actions and the message bar, and wires them.

    It owns no store and no business rule: requests go from the pages to the worker's slots
    and results come back from the worker's signals, all connected in :func:`crewagent.ui.wiring.connect_signals`.
    The pages never reference each other.

    ``theme`` and ``languages`` apply the Appearance settings to the application; without them
    (most tests) the window leaves the application's look alone.
    """

    #: Ask the worker for the settings (once at start; ``settings_changed`` answers).
    load_settings_requested = Signal()

    #: Stop every running turn (the window is closing).
    stop_all_requested = Signal()

    #: Ask the turn worker which provider and model the next turn uses (``provider_changed``).
    describe_provider_requested = Signal()

    #: Look for model servers on this computer (``Worker.probe_local_servers``): once, at a start
    #: that still runs on the demo provider.
    local_probe_requested = Signal()

    #: Ask the worker for the agents Agent mode offers (``agents_loaded``).
    load_agents_requested = Signal()

    #: Ask the worker for the installed workflow packages (``packages_loaded``).
    load_packages_requested = Signal()

    #: ``(path)``: install a ``.bmad`` file or a package folder (``Worker.import_package``).
    import_package_requested = Signal(str)

    def __init__(
        self,
        worker: Worker,
        *,
        dialogs: ProjectDialogs | None = None,
        state: QSettings | None = None,
        theme: ThemeManager | None = None,
        languages: LanguageManager | None = None,
        approvals: ApprovalPrompter | None = None,
        folders: AppFolders | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self._worker = worker
        self._folders = folders
        self.about_dialog: AboutDialog | None = None
        self._state = state
        self._theme = theme
        self._languages = languages
        self._settings: Settings | None = None

        # Each widget is made in the parent it ends up in: under the app's style sheet, moving a
        # built subtree to another parent restyles all of it (the pages' moves were ~40 % of a
        # themed window's build).
        central = QWidget(self)
        self.message_bar = MessageBar(central)
        self._dialogs = dialogs or QtProjectDialogs(state)
        self.stack = QStackedWidget(central)
        self.start_page = StartPage(self._dialogs, self.stack)
        self.project_view = ProjectView(self.stack)
        self.project_view.conversation.outputs.dialogs = self._dialogs
        self.project_view.conversation.composer.dialogs = self._dialogs  # "Attach image…" (issue 17)
        self.settings_opener = SettingsOpener(self, worker, self._dialogs)  # the dialog is built on first use
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(self.project_view)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.status_project = QLabel(self)
        self.statusBar().addPermanentWidget(self.status_project)
        self.status_provider = QLabel(self)
        self.status_provider.setObjectName("statusProvider")
        self.statusBar().addPermanentWidget(self.status_provider)
        self.status_run = QLabel(self)  # the open run: its package, id and phase
        self.status_run.setObjectName("statusRun")
        self.status_run.hide()
        self.statusBar().addPermanentWidget(self.status_run)
        shrinkable(self.status_project, self.status_provider, self.status_run)  # issue 18 item 17
        self.approvals = ApprovalController(self, approvals)
        self._closing = False
        self._stopped_for_close = False
        self._close_timer = QTimer(self)
        self._close_timer.setSingleShot(True)
        self._close_timer.setInterval(CLOSE_TIMEOUT_MS)
        self._close_timer.timeout.connect(self._close_now)
        self._restore_conversation = ""
        self._provider: ProviderInfo | None = None
        self._open_run: RunOverview | None = None

        self._create_actions()
        self._create_menus()
        self.retranslate_ui()
        wiring.connect_signals(self)
        # Issue 18 item 15: File > Export Conversation… (Ctrl+Shift+E), written by the worker.
        self.exporter = ConversationExporter(self, self.project_view, self._dialogs, self.message_bar)
        self.file_menu.insertAction(self.exit_project_action, self.exporter.action)
        self.exporter.export_requested.connect(worker.export_conversation, Qt.ConnectionType.QueuedConnection)
        worker.conversation_exported.connect(self.exporter.exported)
        connect_model_picker(self.project_view.conversation.header.model_picker, worker)  # issue 18 item 13
        self.sidebar_toggle = SidebarToggle(self, self.project_view.sidebar, state, self.help_menu.menuAction())  # issue 18 item 17
        self.resize(1120, 720)
        self._restore_state()
        self.show_start_page()
        self._restore_session()

    def _create_actions(self) -> None:
        # Texts are set in retranslate_ui, so that a language switch renames them.
        def action(shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None) -> QAction:
            created = QAction(self)
            if shortcut is not None:
                created.setShortcut(QKeySequence(shortcut))
            self.addAction(created)  # shortcuts work even with the menu bar hidden
            return created

        self.new_project_action = action(QKeySequence.StandardKey.New)
        self.open_project_action = action(QKeySequence.StandardKey.Open)
        self.new_conversation_action = action("Ctrl+Shift+N")
        self.exit_project_action = action("Ctrl+Shift+W")
        # QKeySequence.Preferences is empty on Windows and GNOME; Ctrl+, is the common choice.
        self.settings_action = action("Ctrl+,")
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        # QKeySequence.Quit is empty on Windows; Ctrl+Q is what users expect everywhere.
        self.quit_action = action("Ctrl+Q")
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.about_action = action()
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        # Search (issue 18): Ctrl+K puts the keyboard in the Works panel's search box from anywhere
        # in the window; a panel that wants the key while it has the focus claims it (ui/shortcuts.py).
        self.search_action = action(shortcuts.SEARCH)
        self.search_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        # Ctrl+/ (issue 18 item 18): the sheet of every key of the window, also in the Help menu.
        self.shortcut_sheet = ShortcutSheetOpener(self)

    def _create_menus(self) -> None:
        self.file_menu = self.menuBar().addMenu("")
        self.file_menu.addAction(self.new_project_action)
        self.file_menu.addAction(self.open_project_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.new_conversation_action)
        self.file_menu.addAction(self.exit_project_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.settings_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.help_menu = self.menuBar().addMenu("")
        self.help_menu.addAction(self.shortcut_sheet.action)
        self.help_menu.addAction(self.about_action)

    def retranslate_ui(self) -> None:
        """Every text this window sets itself; called again on a language switch."""
        texts = (
            (self.new_project_action, self.tr("&New Project…"), self.tr("Create a project folder")),
            (self.open_project_action, self.tr("&Open Project…"), self.tr("Open an existing project folder")),
            (self.new_conversation_action, self.tr("New &Conversation…"), self.tr("Start a conversation: Chat, Agent or Workflow")),
            (self.exit_project_action, self.tr("&Exit Project"), self.tr("Close the project and return to the Start page")),
            (self.settings_action, self.tr("&Settings…"), self.tr("Model provider, tools, context budgets, theme and language")),
            (self.quit_action, self.tr("&Quit"), self.tr("Quit CrewAgent")),
            (self.shortcut_sheet.action, self.tr("&Keyboard Shortcuts"), self.tr("Every keyboard shortcut of the window")),
            (self.about_action, self.tr("&About CrewAgent"), ""),
        )
        for action, text, tip in texts:
            action.setText(text)
            action.setStatusTip(tip)
        self.file_menu.setTitle(self.tr("&File"))
        self.help_menu.setTitle(self.tr("&Help"))
        self._update_title()
        self._show_provider()
        self._show_run(self._open_run)
        if self._settings is not None:  # the provider's name is translated here, not by the page
            self.start_page.set_provider(provider_label(self._settings.llm.provider), self._settings.llm.model)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- navigation --------------------------------------------------------------------------

    @Slot()
    def show_start_page(self) -> None:
        self.project_view.clear()
        self.stack.setCurrentWidget(self.start_page)
        self._update_title()
        self.status_project.setText("")
        self._update_actions()
        self.start_page.refresh()  # a folder may have gone missing since the list was read

    @Slot(object)
    def activate_from_launch(self, request: ActivationRequest) -> None:
        """Another launch on this data folder: come to the front, and open its ``--project``."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()
        if request.project:
            self.open_project_folder(request.project)

    def open_project_folder(self, folder: str) -> None:
        """Open ``folder`` at start-up, making it a project if it is not one (``--project``)."""
        self.start_page.request_project(folder, create=True)

    @Slot(object)
    @Slot()
    def _focus_search(self) -> None:
        """Ctrl+K: the search box of the project shown (nothing on the Start page)."""
        if self.stack.currentWidget() is self.project_view:
            self.project_view.focus_search()

    def _on_project_opened(self, project: ProjectRef) -> None:
        self.message_bar.clear()
        self.project_view.show_project(project)
        self.stack.setCurrentWidget(self.project_view)
        self._update_title()
        self.status_project.setText(project.root)
        self._update_actions()
        if self._state is not None:
            self._state.setValue("session/projectRoot", project.root)

    @Slot(str, str)
    def _on_project_unavailable(self, folder: str, reason: str) -> None:
        if reason == "missing":
            self.message_bar.show_error(self.tr("The folder {folder} does not exist.").format(folder=folder))
        elif not self.start_page.offer_to_make_project(folder):
            self.message_bar.show_error(
                self.tr("{folder} is not a CrewAgent project: it has no .crewagent.json. Choose it with Open Project to make it one.").format(folder=folder)
            )

    # -- the last session ----------------------------------------------------------------------

    def _restore_session(self) -> None:
        """Reopen the project and conversation open at the last exit (the mode is the conversation's)."""
        if self._state is None:
            return
        root = self._state.value("session/projectRoot")
        if isinstance(root, str) and root:
            self._restore_conversation = str(self._state.value("session/conversationId") or "")
            self.start_page.request_project(root)

    @Slot(str, str)
    def _remember_conversation(self, project_id: str, conversation_id: str) -> None:
        if self._state is not None and conversation_id:
            self._state.setValue("session/conversationId", conversation_id)

    @Slot(str, object)
    def _reopen_conversation(self, project_id: str, items: object) -> None:
        conversation_id, self._restore_conversation = self._restore_conversation, ""
        if conversation_id and self.project_view.project is not None and self.project_view.project.id == project_id:
            self.project_view.select_conversation(conversation_id)

    @Slot(object)
    def _on_provider_changed(self, info: ProviderInfo) -> None:
        self._provider = info
        self.project_view.conversation.composer.set_accepts_images(info.vision, info.model)
        self._show_provider()

    def _show_provider(self) -> None:
        info = self._provider
        if info is None:
            return
        # The worker names the demo in English; its name is translated here, as on the Start page.
        label = provider_label(info.provider) if info.provider == "demo" else info.label
        self.status_provider.setText(label if not info.problem else self.tr("{label} (not ready)").format(label=label))
        self.status_provider.setToolTip(translate_core(info.problem) if info.problem else f"{info.provider} · {info.model}")

    @Slot(object)
    def _show_run(self, run: RunOverview | None) -> None:
        """The open run in the status bar: its package name and version, its id and phase."""
        self._open_run = run
        self.status_run.setVisible(run is not None)
        if run is not None:
            self.status_run.setText(f"{run.package_name} {run.package_version} · {run.run_id} · {phase_label(run.phase)}")
            self.status_run.setToolTip(self.tr("Workflow: {workflow}").format(workflow=run.workflow_name))

    @Slot(str)
    def _reimport_package(self, package_label: str) -> None:
        """Ask for the package file (the worker imports it off this thread; ``packages_loaded`` follows)."""
        path = self._dialogs.ask_package_file(self, package_label)
        if path:
            self.import_package_requested.emit(path)

    @Slot(object)
    def _on_package_imported(self, answer: PackageImport) -> None:
        """A failed Re-import from the missing-package card (the Packages page shows its own answers)."""
        if answer.package is not None or self.settings_opener.is_open():
            return
        first = str(answer.problems[0]) if answer.problems else ""
        more = self.tr(" (and {count} more problems)").format(count=len(answer.problems) - 1) if len(answer.problems) > 1 else ""
        self.message_bar.show_error(answer.message or self.tr("{path} was not imported: {problem}{more}").format(path=answer.path, problem=first, more=more))

    def _update_title(self) -> None:
        project = self.project_view.project if self.stack.currentWidget() is self.project_view else None
        self.setWindowTitle(f"{project.name} — {APP_TITLE}" if project else APP_TITLE)

    # -- settings ----------------------------------------------------------------------------

    @Slot()
    def show_settings(self) -> None:
        """Open the Settings dialog (non-modal: the window stays usable)."""
        self.settings_dialog.show_settings()

    @property
    def settings_dialog(self) -> SettingsDialog:
        """The Settings dialog, built the first time it is asked for (ui/settings_opener.py)."""
        return self.settings_opener.dialog()

    @property
    def settings(self) -> Settings | None:
        """The settings in force, as last announced by the worker."""
        return self._settings

    @Slot(object)
    def _on_settings_changed(self, settings: Settings) -> None:
        first, self._settings = self._settings is None, settings
        if self._theme is not None:
            self._theme.set_choice(settings.appearance.theme)
        if self._languages is not None:
            self._languages.set_language(settings.appearance.language)
        self.start_page.set_provider(provider_label(settings.llm.provider), settings.llm.model)
        if first and settings.llm.provider == "demo":
            self.local_probe_requested.emit()
        elif settings.llm.provider != "demo":
            self.start_page.show_local_servers(())  # a provider is chosen: nothing more to offer

    def _update_actions(self) -> None:
        in_project = self.stack.currentWidget() is self.project_view
        self.new_conversation_action.setEnabled(in_project)
        self.exit_project_action.setEnabled(in_project)

    @Slot(str, str)
    def _on_worker_error(self, request: str, message: str) -> None:
        self.message_bar.show_error(message)

    @Slot(object)
    def _on_turn_error(self, error: TurnError) -> None:
        self.message_bar.show_error(error.message)

    @Slot()
    def _show_about(self) -> None:
        dialog = AboutDialog(self._folders or AppFolders(str(paths.data_dir()), str(paths.config_dir())), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()  # window-modal, does not block the event loop
        self.about_dialog = dialog

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
        self.project_view.conversation.run_layout.restore_state(self._state)  # Run workspace, issue 11

    @Slot(str, str, object)
    def _on_turn_finished(self, conversation_id: str, reason: str, error: object) -> None:
        if self._closing and not self.project_view.any_busy:
            self._close_now()

    @Slot()
    def _close_now(self) -> None:
        self._close_timer.stop()
        self._closing = False
        self._stopped_for_close = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        # A running turn is stopped first so that what it stopped is persisted; the window closes
        # once it has finished (or after CLOSE_TIMEOUT_MS), without blocking the event loop.
        if self.project_view.any_busy and not self._stopped_for_close:
            event.ignore()
            if not self._closing:
                self._closing = True
                self.statusBar().showMessage(self.tr("Stopping the running answer before closing…"))
                self.stop_all_requested.emit()
                self._close_timer.start()
            return
        self._stopped_for_close = False
        if self._state is not None:
            self._state.setValue("window/geometry", self.saveGeometry())
            self._state.setValue("projectView/splitter", self.project_view.splitter.saveState())
            self.project_view.conversation.run_layout.save_state(self._state)  # Run workspace, issue 11
            self._state.sync()
        super().closeEvent(event)
