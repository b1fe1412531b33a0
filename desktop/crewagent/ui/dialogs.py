"""The questions the window asks (which folder, which name, which package file), behind a replaceable interface."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QCoreApplication, Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


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

    def ask_package_file(self, parent: QWidget, package_label: str) -> str | None: ...

    def ask_export_file(self, parent: QWidget, suggested_name: str) -> ExportAnswer | None: ...


class QtProjectDialogs:
    """The real dialogs. QFileDialog only browses: reading or creating the project is the worker's job."""

    def ask_new_project(self, parent: QWidget) -> NewProjectAnswer | None:
        dialog = NewProjectDialog(parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.answer()

    def ask_project_folder(self, parent: QWidget) -> str | None:
        folder = QFileDialog.getExistingDirectory(
            parent,
            QCoreApplication.translate("ProjectDialogs", "Open Project"),
            str(Path.home()),
            QFileDialog.Option.ShowDirsOnly,
        )
        return folder or None

    def ask_package_file(self, parent: QWidget, package_label: str) -> str | None:
        """A ``.bmad`` package file to import (``package_label`` names the one wanted, "" for any)."""
        title = QCoreApplication.translate("ProjectDialogs", "Import Package")
        if package_label:
            title = QCoreApplication.translate("ProjectDialogs", "Import the package {package}").format(package=package_label)
        path, _filter = QFileDialog.getOpenFileName(
            parent, title, str(Path.home()), QCoreApplication.translate("ProjectDialogs", "Workflow packages (*.bmad *.zip)")
        )
        return path or None


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

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("New Project"))
        self.setMinimumWidth(520)
        self._name = QLineEdit(self)
        self._name.setPlaceholderText(self.tr("My project"))
        self._location = QLineEdit(self)
        self._location.setText(str(Path.home()))
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
