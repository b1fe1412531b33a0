"""The Start page: New Project, Open Project and the recent projects."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QModelIndex, QPoint, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPushButton,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

import crewagent
from crewagent.ui.delegates import RecentProjectDelegate, repaint_every_minute
from crewagent.ui.dialogs import ProjectDialogs
from crewagent.ui.models import RecentProjectsModel
from crewagent.ui.settings.labels import provider_label
from crewagent.worker.values import LocalServerFound, RecentProjectEntry


class StartPage(QWidget):
    """Where a session begins. It only asks: the worker does the work and answers.

    A recent project whose folder has gone missing stays listed (marked) so that the user sees
    what happened; it cannot be opened, only removed from the list.
    """

    #: ``(folder, name)``: create a project there (an existing project is opened). An empty
    #: name means "use the folder's name".
    new_project_requested = Signal(str, str)

    #: ``folder``: open the existing project in that folder.
    open_project_requested = Signal(str)

    #: ``project_id``: remove that project from the recent list (its files are kept).
    forget_project_requested = Signal(str)

    #: The recent list should be read again (the page is being shown).
    refresh_requested = Signal()

    #: The user wants the Settings dialog (the provider line's link).
    settings_requested = Signal()

    def __init__(self, dialogs: ProjectDialogs, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("startPage")
        self._dialogs = dialogs
        #: The folder the user last picked with Open Project (offered to become a project).
        self._picked_folder = ""
        self.model = RecentProjectsModel(self)

        hero = QFrame(self)
        hero.setObjectName("startHero")
        title = QLabel("CrewAgent", hero)
        title.setObjectName("startTitle")
        self._tagline = QLabel(hero)
        self._tagline.setObjectName("startTagline")
        self._tagline.setWordWrap(True)
        self.new_button = QPushButton(hero)
        self.new_button.setObjectName("primaryButton")
        self.open_button = QPushButton(hero)
        self._version = QLabel(hero)
        self._version.setObjectName("hint")
        # Which model answers: the demo on a fresh install, so that nothing needs configuring first.
        self.provider_label = QLabel(hero)
        self.provider_label.setObjectName("providerLine")
        self.provider_label.setWordWrap(True)
        self.settings_button = QPushButton(hero)
        self.settings_button.setObjectName("linkButton")
        self.settings_button.setCursor(Qt.CursorShape.PointingHandCursor)
        provider_row = QHBoxLayout()
        provider_row.setSpacing(4)
        provider_row.addWidget(self.provider_label, 1)
        provider_row.addWidget(self.settings_button)
        self._provider: tuple[str, str] | None = None
        # A model server found running on this computer (issue 17), offered on a first start.
        self.local_label = QLabel(hero)
        self.local_label.setObjectName("hint")
        self.local_label.setWordWrap(True)
        self.local_label.hide()
        self._local: tuple[str, ...] = ()
        hero_layout = QVBoxLayout(hero)
        hero_layout.setContentsMargins(36, 40, 36, 32)
        hero_layout.setSpacing(10)
        hero_layout.addWidget(title)
        hero_layout.addWidget(self._tagline)
        hero_layout.addSpacing(18)
        hero_layout.addWidget(self.new_button)
        hero_layout.addWidget(self.open_button)
        hero_layout.addStretch(1)
        hero_layout.addLayout(provider_row)
        hero_layout.addWidget(self.local_label)
        hero_layout.addWidget(self._version)

        recent_card = QFrame(self)
        recent_card.setObjectName("card")
        self._heading = QLabel(recent_card)
        self._heading.setObjectName("sectionTitle")
        self.view = QListView(recent_card)
        self.view.setObjectName("recentProjects")
        self.view.setModel(self.model)
        self.view.setItemDelegate(RecentProjectDelegate(self.view))
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setMouseTracking(True)
        self.view.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.empty_label = QLabel(recent_card)
        self.empty_label.setObjectName("emptyState")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._list_stack = QStackedLayout()
        self._list_stack.addWidget(self.empty_label)
        self._list_stack.addWidget(self.view)

        self.open_selected_button = QPushButton(recent_card)
        self.remove_button = QPushButton(recent_card)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.open_selected_button)
        card_layout = QVBoxLayout(recent_card)
        card_layout.setContentsMargins(20, 18, 20, 16)
        card_layout.addWidget(self._heading)
        card_layout.addLayout(self._list_stack, 1)
        card_layout.addLayout(buttons)

        right = QVBoxLayout()
        right.setContentsMargins(32, 40, 32, 32)
        right.addWidget(recent_card)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(hero, 2)
        layout.addLayout(right, 3)

        self._delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.view)
        self._delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

        self.new_button.clicked.connect(self.prompt_new_project)
        self.settings_button.clicked.connect(self.settings_requested)
        self.open_button.clicked.connect(self.prompt_open_project)
        self.open_selected_button.clicked.connect(self.open_selected)
        self.remove_button.clicked.connect(self.forget_selected)
        self._delete_shortcut.activated.connect(self.forget_selected)
        self.view.activated.connect(self._open_index)
        self.view.customContextMenuRequested.connect(self._show_context_menu)
        self.view.selectionModel().selectionChanged.connect(self._update_buttons)
        self.model.modelReset.connect(self._update_buttons)
        self._update_buttons()
        self._clock = repaint_every_minute(self.view)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """Every text of the page; called again on a language switch."""
        self._tagline.setText(self.tr("A workbench for LLM agents. Pick a project folder to begin."))
        self.new_button.setText(self.tr("New Project…"))
        self.new_button.setToolTip(self.tr("Create a project folder (Ctrl+N)"))
        self.open_button.setText(self.tr("Open Project…"))
        self.open_button.setToolTip(self.tr("Open an existing project folder (Ctrl+O)"))
        self._version.setText(self.tr("Version {version}").format(version=crewagent.__version__))
        self.settings_button.setText(self.tr("Settings…"))
        self._heading.setText(self.tr("Recent Projects"))
        self.empty_label.setText(self.tr("No recent projects yet.\nCreate a project or open an existing one to see it here."))
        self.open_selected_button.setText(self.tr("Open"))
        self.remove_button.setText(self.tr("Remove from List"))
        self.remove_button.setToolTip(self.tr("Forget this project; its folder is not touched (Del)"))
        self._show_provider()
        self._update_buttons()
        self.view.viewport().update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @Slot(str, str)
    def set_provider(self, label: str, model: str) -> None:
        """The provider in use (``label`` already in the user's language) and its model."""
        self._provider = (label, model)
        self._show_provider()

    @Slot(object)
    def show_local_servers(self, found: Iterable[LocalServerFound]) -> None:
        """Model servers running on this computer (``Worker.local_servers_found``)."""
        self._local = tuple(provider_label(server.provider) for server in found)
        self._show_provider()

    def _show_provider(self) -> None:
        if self._local:
            self.local_label.setText(
                self.tr("Found running on this computer: {servers}. Choose it in Settings to use it.").format(servers=", ".join(self._local))
            )
        self.local_label.setVisible(bool(self._local))
        if self._provider is None:
            self.provider_label.clear()
            return
        label, model = self._provider
        text = self.tr("Model provider: {provider}").format(provider=label)
        if model:
            text += f" · {model}"
        self.provider_label.setText(text)

    # -- fed by the worker -------------------------------------------------------------------

    @Slot(object)
    def set_recent_projects(self, entries: Iterable[RecentProjectEntry]) -> None:
        selected = self.selected_entry()
        self.model.set_entries(entries)
        self._list_stack.setCurrentWidget(self.view if self.model.rowCount() else self.empty_label)
        if selected is not None:
            for row in range(self.model.rowCount()):
                if self.model.entry(row).project_id == selected.project_id:
                    self.view.setCurrentIndex(self.model.index(row))

    # -- user requests -----------------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        self.refresh_requested.emit()

    @Slot()
    def prompt_new_project(self) -> None:
        answer = self._dialogs.ask_new_project(self.window())
        if answer is not None:
            self.new_project_requested.emit(answer.folder, answer.name)

    @Slot()
    def prompt_open_project(self) -> None:
        folder = self._dialogs.ask_project_folder(self.window())
        if folder:
            self._picked_folder = folder
            self.open_project_requested.emit(folder)

    def offer_to_make_project(self, folder: str) -> bool:
        """``folder`` is not a project: when the user just picked it with Open Project, ask to
        make it one (as ``--project`` does on the command line). False when nothing was asked."""
        if not folder or folder != self._picked_folder:
            return False
        self._picked_folder = ""
        if self._dialogs.confirm_make_project(self.window(), folder):
            self.new_project_requested.emit(folder, "")
        return True

    def request_project(self, folder: str, *, create: bool = False) -> None:
        """Open ``folder`` (for ``crewagent gui --project``); with ``create``, make it a project first."""
        if create:
            self.new_project_requested.emit(folder, "")
        else:
            self.open_project_requested.emit(folder)

    def selected_entry(self) -> RecentProjectEntry | None:
        index = self.view.currentIndex()
        if not index.isValid() or not self.view.selectionModel().isSelected(index):
            return None
        return self.model.entry(index.row())

    @Slot()
    def open_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None and entry.exists:
            self.open_project_requested.emit(entry.root)

    @Slot()
    def forget_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.forget_project_requested.emit(entry.project_id)

    @Slot(QModelIndex)
    def _open_index(self, index: QModelIndex) -> None:
        entry = self.model.entry(index.row())
        if entry.exists:
            self.open_project_requested.emit(entry.root)

    @Slot(QPoint)
    def _show_context_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():
            return
        self.view.setCurrentIndex(index)
        entry = self.model.entry(index.row())
        menu = QMenu(self)
        open_action = menu.addAction(self.tr("Open"))
        open_action.setEnabled(entry.exists)
        open_action.triggered.connect(self.open_selected)
        menu.addAction(self.tr("Remove from List"), self.forget_selected)
        menu.popup(self.view.viewport().mapToGlobal(position))

    @Slot()
    def _update_buttons(self) -> None:
        entry = self.selected_entry()
        self.open_selected_button.setEnabled(entry is not None and entry.exists)
        self.remove_button.setEnabled(entry is not None)
        if entry is not None and not entry.exists:
            self.open_selected_button.setToolTip(self.tr("This folder is missing; it cannot be opened."))
        else:
            self.open_selected_button.setToolTip("")
