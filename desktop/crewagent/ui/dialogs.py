"""The questions the app asks through modal dialogs (which folder, which name, which package file, where to save), behind a replaceable interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from PySide6.QtCore import QCoreApplication, QSettings, Qt, Slot
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


#: What to do with unsaved settings when the dialog closes.
UnsavedAnswer = Literal["save", "discard", "cancel"]

#: The runs a removal confirmation lists by name (the rest are counted, and listed under Details).
_RUNS_SHOWN = 10


@dataclass(frozen=True, slots=True)
class NewProjectAnswer:
    folder: str
    name: str


@dataclass(frozen=True, slots=True)
class ExportAnswer:
    """Where to export a conversation, and in which format (openai, markdown or jsonl)."""

    path: str
    format: str


class ProjectDialogs(Protocol):
    """Asks the user; tests pass a scripted implementation so that nothing modal blocks them."""

    def ask_new_project(self, parent: QWidget) -> NewProjectAnswer | None: ...

    def ask_project_folder(self, parent: QWidget) -> str | None: ...

    # -- the Packages page of Settings --

    def ask_package_file(self, parent: QWidget, package_label: str = "") -> str | None:
        """A ``.bmad`` file to import, or None (``package_label`` names the one wanted, "" for any)."""
        ...

    def ask_package_folder(self, parent: QWidget) -> str | None:
        """A package folder (holding ``bmad.json``) to import, or None."""
        ...

    def confirm_remove_package(self, parent: QWidget, package: str, runs: Sequence[str]) -> bool:
        """Whether to remove ``package`` although ``runs`` (described for the user) use it."""
        ...

    # -- the MCP page of Settings --

    def ask_mcp_servers_file(self, parent: QWidget) -> str | None:
        """A Claude-Desktop-style ``{"mcpServers": ...}`` JSON file to import, or None."""
        ...

    # -- the Settings dialog --

    def ask_unsaved_settings(self, parent: QWidget) -> UnsavedAnswer:
        """Closing Settings with unsaved changes: ``save``, ``discard`` or ``cancel``."""
        ...

    def confirm_make_project(self, parent: QWidget, folder: str) -> bool:
        """``folder`` is not a project yet: make it one? (as ``--project`` on the command line does)"""
        ...

    def ask_save_path(self, parent: QWidget, title: str, suggested_name: str) -> str | None:
        """Where to save a file (``suggested_name`` is proposed); None when the user cancels."""
        ...

    def ask_export_file(self, parent: QWidget, suggested_name: str) -> ExportAnswer | None:
        """Where to export a conversation and in which format (the file type); None when cancelled."""
        ...

    def ask_image_files(self, parent: QWidget) -> list[str]:
        """Image files to attach to the message being written ([] when cancelled)."""
        ...


#: The window-state key of the folder the last project was created in.
LAST_LOCATION_KEY = "dialogs/newProjectLocation"


class QtProjectDialogs:
    """The real dialogs. QFileDialog only browses: reading or creating the project is the worker's job.

    ``state`` (the window state, see window_state.py) remembers where the last project was
    created, so that the next New Project starts there rather than in the home folder.
    """

    def __init__(self, state: QSettings | None = None):
        self._state = state

    def ask_new_project(self, parent: QWidget) -> NewProjectAnswer | None:
        dialog = NewProjectDialog(parent, location=self.last_location())
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        answer = dialog.answer()
        if self._state is not None:
            self._state.setValue(LAST_LOCATION_KEY, str(Path(answer.folder).parent))
        return answer

    def last_location(self) -> str:
        remembered = self._state.value(LAST_LOCATION_KEY) if self._state is not None else None
        return remembered if isinstance(remembered, str) and remembered else str(Path.home())

    def confirm_make_project(self, parent: QWidget, folder: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Question, QCoreApplication.translate("ProjectDialogs", "Open Project"),
                          QCoreApplication.translate("ProjectDialogs", "{folder} is not a CrewAgent project yet.").format(folder=folder),
                          QMessageBox.StandardButton.NoButton, parent)
        box.setInformativeText(QCoreApplication.translate(
            "ProjectDialogs", "Make it one? CrewAgent adds a small .crewagent.json file and an artifacts folder; nothing else changes."))
        make = box.addButton(QCoreApplication.translate("ProjectDialogs", "Make It a Project"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(make)
        fit_bold_text(make)
        box.exec()
        return box.clickedButton() is make

    def ask_project_folder(self, parent: QWidget) -> str | None:
        folder = QFileDialog.getExistingDirectory(
            parent,
            QCoreApplication.translate("ProjectDialogs", "Open Project"),
            str(Path.home()),
            QFileDialog.Option.ShowDirsOnly,
        )
        return folder or None

    def ask_package_file(self, parent: QWidget, package_label: str = "") -> str | None:
        title = QCoreApplication.translate("ProjectDialogs", "Import a Workflow Package")
        if package_label:
            title = QCoreApplication.translate("ProjectDialogs", "Import the package {package}").format(package=package_label)
        path, _filter = QFileDialog.getOpenFileName(
            parent,
            title,
            str(Path.home()),
            QCoreApplication.translate("ProjectDialogs", "Workflow packages (*.bmad *.zip);;All files (*)"),
        )
        return path or None

    def ask_package_folder(self, parent: QWidget) -> str | None:
        folder = QFileDialog.getExistingDirectory(
            parent,
            QCoreApplication.translate("ProjectDialogs", "Import a Package Folder"),
            str(Path.home()),
            QFileDialog.Option.ShowDirsOnly,
        )
        return folder or None

    def ask_mcp_servers_file(self, parent: QWidget) -> str | None:
        path, _filter = QFileDialog.getOpenFileName(
            parent,
            QCoreApplication.translate("ProjectDialogs", "Import MCP Servers"),
            str(Path.home()),
            QCoreApplication.translate("ProjectDialogs", "MCP server settings (*.json);;All files (*)"),
        )
        return path or None

    def confirm_remove_package(self, parent: QWidget, package: str, runs: Sequence[str]) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, QCoreApplication.translate("ProjectDialogs", "Remove Package"), "", parent=parent)
        box.setText(
            QCoreApplication.translate("ProjectDialogs", "{count} run(s) use {package}. Remove it anyway?").format(
                count=len(runs), package=package
            )
        )
        shown = [f"• {run}" for run in runs[:_RUNS_SHOWN]]
        if len(runs) > _RUNS_SHOWN:
            shown.append(QCoreApplication.translate("ProjectDialogs", "… and {more} more").format(more=len(runs) - _RUNS_SHOWN))
            box.setDetailedText("\n".join(runs))
        consequence = QCoreApplication.translate(
            "ProjectDialogs", "These runs cannot continue until the package is imported again. Their conversations and files are kept."
        )
        box.setInformativeText("\n".join(shown) + "\n\n" + consequence)
        remove = box.addButton(QCoreApplication.translate("ProjectDialogs", "Remove"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(box.addButton(QCoreApplication.translate("ProjectDialogs", "Keep"), QMessageBox.ButtonRole.RejectRole))
        box.exec()
        return box.clickedButton() is remove


    def ask_unsaved_settings(self, parent: QWidget) -> UnsavedAnswer:
        box = QMessageBox(QMessageBox.Icon.Question, QCoreApplication.translate("ProjectDialogs", "Unsaved Settings"), "", parent=parent)
        box.setText(QCoreApplication.translate("ProjectDialogs", "Save the changes you made in Settings?"))
        box.setInformativeText(QCoreApplication.translate("ProjectDialogs", "If you discard them, the settings stay as they were."))
        save = box.addButton(QCoreApplication.translate("ProjectDialogs", "Save"), QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton(QCoreApplication.translate("ProjectDialogs", "Discard"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(save)
        box.setEscapeButton(box.addButton(QCoreApplication.translate("ProjectDialogs", "Cancel"), QMessageBox.ButtonRole.RejectRole))
        box.exec()
        clicked = box.clickedButton()
        return "save" if clicked is save else "discard" if clicked is discard else "cancel"

    def ask_save_path(self, parent: QWidget, title: str, suggested_name: str) -> str | None:
        path, _filter = QFileDialog.getSaveFileName(parent, title, str(Path.home() / suggested_name))
        return path or None


    def ask_image_files(self, parent: QWidget) -> list[str]:
        """Image files to attach (PNG, JPEG, WebP, GIF)."""
        title = QCoreApplication.translate("ProjectDialogs", "Attach Images")
        kinds = QCoreApplication.translate("ProjectDialogs", "Images (*.png *.jpg *.jpeg *.webp *.gif)")
        paths, _filter = QFileDialog.getOpenFileNames(parent, title, str(Path.home()), kinds)
        return list(paths)

    def ask_export_file(self, parent: QWidget, suggested_name: str) -> ExportAnswer | None:
        """A file to export a conversation to; the chosen file type is the format."""
        filters = {
            QCoreApplication.translate("ProjectDialogs", "Markdown (*.md)"): ("markdown", ".md"),
            QCoreApplication.translate("ProjectDialogs", "OpenAI messages JSON (*.json)"): ("openai", ".json"),
            QCoreApplication.translate("ProjectDialogs", "JSON Lines log (*.jsonl)"): ("jsonl", ".jsonl"),
        }
        title = QCoreApplication.translate("ProjectDialogs", "Export Conversation")
        path, chosen = QFileDialog.getSaveFileName(parent, title, str(Path.home() / (suggested_name + ".md")), ";;".join(filters))
        if not path:
            return None
        fmt, suffix = filters.get(chosen, ("markdown", ".md"))
        return ExportAnswer(path if Path(path).suffix else path + suffix, fmt)


class NewProjectDialog(QDialog):
    """A project name and its folder; the folder is created when it does not exist yet."""

    def __init__(self, parent: QWidget | None = None, *, location: str | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("New Project"))
        self.setMinimumWidth(520)
        self._name = QLineEdit(self)
        self._name.setPlaceholderText(self.tr("My project"))
        self._location = QLineEdit(self)
        self._location.setText(location or str(Path.home()))
        browse = QPushButton(self.tr("Browse…"), self)
        browse.clicked.connect(self._browse)
        self._folder_hint = QLabel(self)
        self._folder_hint.setObjectName("hint")
        self._folder_hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        location_row = QHBoxLayout()
        location_row.addWidget(self._location, 1)
        location_row.addWidget(browse)
        form = QFormLayout()
        form.addRow(self.tr("Name"), self._name)
        form.addRow(self.tr("Location"), location_row)
        form.addRow("", self._folder_hint)

        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        create = self._buttons.button(QDialogButtonBox.StandardButton.Ok)
        create.setText(self.tr("Create Project"))
        fit_bold_text(create)
        self._buttons.accepted.connect(self.accept)
        self._buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        intro = QLabel(self.tr("A project is a folder. CrewAgent adds a small .crewagent.json file and an artifacts folder."), self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self._buttons)

        self._name.textChanged.connect(self._update)
        self._location.textChanged.connect(self._update)
        self._update()

    def answer(self) -> NewProjectAnswer:
        name = self._name.text().strip()
        return NewProjectAnswer(folder=str(Path(self._location.text().strip()).expanduser() / name), name=name)

    @Slot()
    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Choose where to create the project"), self._location.text())
        if folder:
            self._location.setText(folder)

    @Slot()
    def _update(self) -> None:
        name, location = self._name.text().strip(), self._location.text().strip()
        valid = bool(name) and bool(location) and "/" not in name and "\\" not in name
        self._buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(valid)
        self._folder_hint.setText(self.tr("Folder: {folder}").format(folder=self.answer().folder) if valid else "")


def fit_bold_text(button: QPushButton) -> None:
    """Make room for the button's text in bold.

    The stylesheet draws the default button's text bold (``QPushButton:default``), but Qt sizes
    a button for its unstyled font: "Create Project" came out as "Create Projec".
    """
    button.ensurePolished()
    bold = QFont(button.font())
    bold.setWeight(QFont.Weight.DemiBold)
    text = button.text()
    room = button.sizeHint().width() - button.fontMetrics().horizontalAdvance(text)
    button.setMinimumWidth(QFontMetrics(bold).horizontalAdvance(text) + room)
