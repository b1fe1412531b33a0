"""The card a Run-mode conversation shows, instead of its composer, when its run's package is gone."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from crewagent.core.runs.conversation import RunOverview


class MissingPackageCard(QFrame):
    """Names the package and version the run needs; offers Re-import Package and Back."""

    #: ``(package_label)``: the user wants to import the package again ("project-brief 1.0.0").
    reimport_requested = Signal(str)
    #: The user goes back: the conversation leaves Run mode, the run is kept.
    back_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("missingPackage")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(self)
        self.title.setObjectName("missingPackageTitle")
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reimport_button = QPushButton(self)
        self.reimport_button.setObjectName("reimportPackage")
        self.back_button = QPushButton(self)
        self.back_button.setObjectName("missingPackageBack")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.reimport_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 12, 20, 12)
        layout.addWidget(self.title)
        layout.addWidget(self.details)
        layout.addLayout(buttons)
        self._run: RunOverview | None = None
        self.reimport_button.clicked.connect(lambda: self.reimport_requested.emit(self.package_label))
        self.back_button.clicked.connect(self.back_requested)
        self.hide()
        self.retranslate_ui()

    @property
    def package_label(self) -> str:
        run = self._run
        return f"{run.package_name} {run.package_version}".strip() if run is not None else ""

    def show_run(self, run: RunOverview | None) -> None:
        """Show the card for ``run`` (its package is gone), or hide it (None)."""
        self._run = run
        self.retranslate_ui()
        self.setVisible(run is not None)

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("The package of this run is not installed"))
        run = self._run
        if run is not None:
            self.details.setText(
                self.tr(
                    "Run {run} of “{workflow}” needs the package {package}, which is no longer installed. "
                    "Import it again to go on with the run, or go back and keep the conversation without it."
                ).format(run=run.run_id, workflow=run.workflow_name, package=self.package_label)
            )
        self.reimport_button.setText(self.tr("Re-import Package…"))
        self.back_button.setText(self.tr("Back"))
        self.back_button.setToolTip(self.tr("Leave Run mode; the run is kept and Resume comes back to it"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)
