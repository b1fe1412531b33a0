"""The Packages page: import a workflow package (a .bmad file or a folder), see what is installed, remove one.

It holds no setting: the worker installs and removes packages at once (``Worker.import_package``,
``Worker.remove_package``) and announces the new listing (``packages_loaded``), which the
Workflow header and the agent picker follow too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, Signal, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QTreeView,
    QWidget,
)

from crewagent.core.settings import Settings
from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs
from crewagent.ui.settings.package_models import PackageRole, PackagesModel, ProblemsModel
from crewagent.ui.settings.page import SettingsPage
from crewagent.ui.workflow_panel import phase_label
from crewagent.worker.values import PackageImport, PackageRemoval, PackagesListing


def _add_copy(view: QAbstractItemView, button: QPushButton, text: Callable[[], str]) -> None:
    """Copy (the button, Ctrl+C in the view) puts ``text()`` on the clipboard."""

    def copy() -> None:
        QGuiApplication.clipboard().setText(text())

    action = QAction(view)
    action.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
    action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
    action.triggered.connect(copy)
    view.addAction(action)
    button.clicked.connect(copy)


def _selected_rows(view: QAbstractItemView) -> list[int]:
    return sorted({index.row() for index in view.selectionModel().selectedRows()})


class PackagesPage(SettingsPage):
    """Import (with a busy line, then success or every problem), the installed packages, Remove."""

    #: ``path``: install this .bmad file or package folder (``Worker.import_package``).
    import_requested = Signal(str)

    #: ``(package_id, confirmed)``: uninstall this package (``Worker.remove_package``).
    removal_requested = Signal(str, bool)

    #: The installed packages are wanted (``Worker.load_packages``).
    listing_requested = Signal()

    def __init__(self, dialogs: ProjectDialogs, parent: QWidget | None = None):
        super().__init__(parent)
        self._dialogs = dialogs
        self._importing = ""
        self._removing = ""
        self._select_after_listing = ""

        importing = self.add_group()
        self.import_file_button = QPushButton(importing)
        self.import_file_button.setObjectName("primaryButton")
        self.import_folder_button = QPushButton(importing)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.import_file_button)
        row.addWidget(self.import_folder_button)
        row.addStretch(1)
        buttons = QWidget(importing)
        buttons.setLayout(row)
        self.busy = QProgressBar(importing)
        self.busy.setRange(0, 0)  # indeterminate: an import does not report its stages
        self.busy.setTextVisible(False)
        self.busy.setFixedHeight(4)
        self.busy.hide()
        self.import_status = QLabel(importing)
        self.import_status.setObjectName("importStatus")
        self.import_status.setWordWrap(True)
        self.import_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.import_status.hide()
        self.problems = ProblemsModel(self)
        self.problems_view = QTableView(importing)
        self.problems_view.setObjectName("packageProblems")
        self.problems_view.setModel(self.problems)
        self.problems_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.problems_view.setWordWrap(True)
        self.problems_view.verticalHeader().hide()
        header = self.problems_view.horizontalHeader()
        header.setSectionResizeMode(ProblemsModel.FILE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ProblemsModel.FIELD, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.problems_view.setMinimumHeight(160)
        self.copy_problems = QPushButton(importing)
        copy_row = QHBoxLayout()
        copy_row.setContentsMargins(0, 0, 0, 0)
        copy_row.addStretch(1)
        copy_row.addWidget(self.copy_problems)
        self._copy_holder = QWidget(importing)
        self._copy_holder.setLayout(copy_row)
        for widget in (buttons, self.busy, self.import_status, self.problems_view, self._copy_holder):
            importing.add_wide(widget)
        self.problems_view.hide()
        self._copy_holder.hide()
        _add_copy(self.problems_view, self.copy_problems, self._problems_text)
        self._importing_group = importing

        installed = self.add_group()
        self.packages = PackagesModel(self)
        self.tree = QTreeView(installed)
        self.tree.setObjectName("installedPackages")
        self.tree.setModel(self.packages)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setMinimumHeight(220)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.remove_button = QPushButton(installed)
        self.remove_button.setObjectName("dangerButton")
        self.copy_installed = QPushButton(installed)
        self.remove_status = QLabel(installed)
        self.remove_status.setWordWrap(True)
        self.remove_status.hide()
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.remove_status, 1)
        actions.addWidget(self.copy_installed)
        actions.addWidget(self.remove_button)
        holder = QWidget(installed)
        holder.setLayout(actions)
        installed.add_wide(self.tree)
        installed.add_wide(holder)
        _add_copy(self.tree, self.copy_installed, self._installed_text)
        self._installed_group = installed
        self.finish()

        self.import_file_button.clicked.connect(self._ask_file)
        self.import_folder_button.clicked.connect(self._ask_folder)
        self.remove_button.clicked.connect(self._remove_selected)
        self.tree.selectionModel().selectionChanged.connect(self._update_buttons)
        self.retranslate_ui()

    # -- the settings page protocol: nothing to save here --------------------------------------

    def nav_title(self) -> str:
        return self.tr("Packages")

    def load(self, settings: Settings) -> None:
        return

    def changes(self) -> dict[str, Any]:
        return {}

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Packages"))
        self.intro.setText(
            self.tr("Workflow packages bring workflows for Run mode and agents for Agent mode. Installing or removing one takes effect at once.")
        )
        self._importing_group.title.setText(self.tr("Import"))
        self.import_file_button.setText(self.tr("Import .bmad File…"))
        self.import_folder_button.setText(self.tr("Import Folder…"))
        self.copy_problems.setText(self.tr("Copy"))
        self.copy_problems.setToolTip(self.tr("Copy the selected problems (all when none is selected)"))
        self._installed_group.title.setText(self.tr("Installed"))
        self.copy_installed.setText(self.tr("Copy"))
        self.remove_button.setText(self.tr("Remove…"))
        self.set_listing(self.packages.listing())
        self.problems.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 2)
        self._update_buttons()

    # -- importing ---------------------------------------------------------------------------

    @Slot()
    def _ask_file(self) -> None:
        path = self._dialogs.ask_package_file(self.window())
        if path:
            self.start_import(path)

    @Slot()
    def _ask_folder(self) -> None:
        path = self._dialogs.ask_package_folder(self.window())
        if path:
            self.start_import(path)

    def start_import(self, path: str) -> None:
        """Ask the worker to install ``path``; the page is busy until ``show_import`` answers."""
        self._importing = path
        self.problems.set_problems(())
        self.problems_view.hide()
        self._copy_holder.hide()
        self._set_status(self.import_status, "resultBusy", self.tr("Importing {name}…").format(name=Path(path).name))
        self.busy.show()
        self._update_buttons()
        self.import_requested.emit(path)

    @Slot(object)
    def show_import(self, result: PackageImport) -> None:
        """The worker's answer: installed, or every problem with its file and field."""
        if result.path != self._importing:
            return  # not ours (a stale answer)
        self._importing = ""
        self.busy.hide()
        name = Path(result.path).name
        if result.package is not None:
            package = result.package
            text = self.tr("✓ Installed {name} {version}: {workflows} workflow(s), {agents} agent(s).").format(
                name=package.name, version=package.version, workflows=len(package.workflows), agents=len(package.agents)
            )
            self._set_status(self.import_status, "resultOk", text)
            self._select_after_listing = package.id
        elif result.problems:
            text = self.tr("✕ {name} was not installed. Fix these {count} problem(s) and import it again:").format(
                name=name, count=len(result.problems)
            )
            self._set_status(self.import_status, "resultError", text)
            self.problems.set_problems(result.problems)
            self.problems_view.show()
            self._copy_holder.show()
            self.problems_view.resizeRowsToContents()
        else:
            self._set_status(self.import_status, "resultError", "✕ " + self.tr("{name} was not installed: {reason}").format(name=name, reason=translate_core(result.message)))
        self._update_buttons()

    def _problems_text(self) -> str:
        rows = _selected_rows(self.problems_view)
        return self.problems.text(rows or None)

    # -- the installed packages ---------------------------------------------------------------

    @Slot(object)
    def set_listing(self, listing: PackagesListing) -> None:
        selected = self._select_after_listing or self.selected_package()
        self._select_after_listing = ""
        self.packages.set_listing(listing)
        self.tree.expandToDepth(0)
        index = self.packages.package_row(selected)
        if index.isValid():
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            self.tree.selectionModel().setCurrentIndex(index, flags)
            self.tree.scrollTo(index)
        self._update_buttons()

    def selected_package(self) -> str:
        """The id of the package the selection is in ("" when none)."""
        index = self.tree.selectionModel().currentIndex()
        if not self.tree.selectionModel().hasSelection() or not index.isValid():
            return ""
        return str(index.data(PackageRole.PACKAGE_ID) or "")

    def _installed_text(self) -> str:
        lines = []
        for index in self.tree.selectionModel().selectedRows():
            detail = index.siblingAtColumn(1).data()
            lines.append(f"{index.data()}\t{detail}" if detail else str(index.data()))
        return "\n".join(lines)

    # -- removing -----------------------------------------------------------------------------

    @Slot()
    def _remove_selected(self) -> None:
        package_id = self.selected_package()
        if package_id:
            self._removing = package_id
            self._set_status(self.remove_status, "resultBusy", self.tr("Removing {name}…").format(name=self._name_of(package_id)))
            self._update_buttons()
            self.removal_requested.emit(package_id, False)

    @Slot(object)
    def show_removal(self, removal: PackageRemoval) -> None:
        """The worker's answer: removed; runs use it (ask, then remove or not); or why it failed."""
        if removal.package_id != self._removing:
            return
        name = self._name_of(removal.package_id)
        if removal.uses:
            runs = [
                self.tr("{project}: workflow {workflow} (run {run}, {phase})").format(
                    project=use.project_name, workflow=use.workflow_id, run=use.run_id[:8], phase=phase_label(use.phase)
                )
                for use in removal.uses
            ]
            if self._dialogs.confirm_remove_package(self.window(), name, runs):
                self.removal_requested.emit(removal.package_id, True)
                return
            self._removing = ""
            self._set_status(self.remove_status, "resultOk", self.tr("{name} was kept.").format(name=name))
        elif removal.removed:
            self._removing = ""
            self._set_status(self.remove_status, "resultOk", "✓ " + self.tr("Removed {name}.").format(name=name))
        else:
            self._removing = ""
            self._set_status(self.remove_status, "resultError", "✕ " + translate_core(removal.message))
        self._update_buttons()

    def _name_of(self, package_id: str) -> str:
        for package in self.packages.listing().packages:
            if package.id == package_id:
                return f"{package.name} {package.version}"
        return package_id

    # -- helpers -------------------------------------------------------------------------------

    @Slot()
    def _update_buttons(self) -> None:
        importing = bool(self._importing)
        self.import_file_button.setEnabled(not importing)
        self.import_folder_button.setEnabled(not importing)
        self.remove_button.setEnabled(bool(self.selected_package()) and not self._removing)
        self.copy_installed.setEnabled(self.tree.selectionModel().hasSelection())

    def showEvent(self, event: Any) -> None:
        self.listing_requested.emit()  # another process may have installed one meanwhile
        super().showEvent(event)

    @staticmethod
    def _set_status(label: QLabel, kind: str, text: str) -> None:
        label.setObjectName(kind)
        label.setText(text)
        label.setVisible(bool(text))
        label.style().unpolish(label)
        label.style().polish(label)
