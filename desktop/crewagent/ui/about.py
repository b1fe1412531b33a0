"""The About dialog: version, where data and settings live, and how to report a problem."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

import crewagent

ISSUES_URL = "https://github.com/crewagent/crewagent-desktop/issues"


@dataclass(frozen=True)
class AppFolders:
    """Where this run keeps its data and settings (computed once at start-up, no disk access)."""

    data_dir: str
    config_dir: str


def diagnostics(folders: AppFolders) -> str:
    """Plain text for a bug report: versions and folders, never conversation content or keys."""
    return "\n".join(
        [
            f"CrewAgent Desktop {crewagent.__version__}",
            f"Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version}",
            f"OS {platform.platform()}",
            f"Data folder: {folders.data_dir}",
            f"Settings folder: {folders.config_dir}",
        ]
    )


class AboutDialog(QDialog):
    def __init__(self, folders: AppFolders, parent: QWidget | None = None):
        super().__init__(parent)
        self.folders = folders
        self.setObjectName("aboutDialog")
        self.setWindowTitle(self.tr("About CrewAgent"))
        layout = QVBoxLayout(self)
        title = QLabel(f"<h2>CrewAgent Desktop {crewagent.__version__}</h2>", self)
        summary = QLabel(self.tr("A desktop workbench for LLM agents."), self)
        self.details = QLabel(self)
        self.details.setTextInteractionFlags(self.details.textInteractionFlags() | self.details.textInteractionFlags().TextSelectableByMouse)
        self.details.setText(
            self.tr("Data folder: {data}<br>Settings folder: {config}<br>Qt {qt} · PySide6 {pyside} · Python {python}").format(
                data=folders.data_dir, config=folders.config_dir, qt=qVersion(), pyside=pyside_version, python=platform.python_version()
            )
        )
        report = QLabel(
            self.tr(
                "To report a problem, open an issue at <a href=\"{url}\">{url}</a> with what you did, "
                "what you expected, and the diagnostics below (Copy diagnostics). Conversation logs stay "
                "on your machine unless you attach them."
            ).format(url=ISSUES_URL),
            self,
        )
        report.setWordWrap(True)
        report.setOpenExternalLinks(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton(self.tr("Copy diagnostics"), self)
        self.open_data_button = QPushButton(self.tr("Open data folder"), self)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.open_data_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy_diagnostics)
        self.open_data_button.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(folders.data_dir)))
        for widget in (title, summary, self.details, report, buttons):
            layout.addWidget(widget)

    def copy_diagnostics(self) -> None:
        QGuiApplication.clipboard().setText(diagnostics(self.folders))
