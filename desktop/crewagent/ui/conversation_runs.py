"""Run mode in the Conversation tab (issue 11, the Workflow header): the conversation's runs in the
header, starting or resuming one, and the missing-package card in place of the composer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

if TYPE_CHECKING:
    from crewagent.ui.conversation_view import ConversationView


class RunControls(QObject):
    """The ConversationView's run parts: its RunTracker, the Workflow header and the missing-package card.

    A start or resume counts as a send (the composer is busy until its turn starts); the requests go
    out through the view's signals (``start_run_requested``, ``resume_run_requested``, ``run_shown``).
    """

    def __init__(self, view: ConversationView) -> None:
        super().__init__(view)
        self._view = view
        view.runs.load_requested.connect(view.runs_requested)
        view.runs.changed.connect(self.show_runs)
        view.header.workflow.start_requested.connect(self._on_start_run)
        view.header.workflow.resume_requested.connect(self._on_resume_run)
        view.missing_package.reimport_requested.connect(view.reimport_requested)
        view.missing_package.back_requested.connect(lambda: view._on_mode_selected("agent"))

    @Slot(str, str)
    def _on_start_run(self, package_id: str, workflow_id: str) -> None:
        view = self._view
        ids = view._ids()
        if ids is not None and not view.busy:
            view._sending = True
            view._update_busy()
            view.start_run_requested.emit(*ids, package_id, workflow_id)

    @Slot(str)
    def _on_resume_run(self, run_id: str) -> None:
        view = self._view
        ids = view._ids()
        if ids is not None and not view.busy:
            view._sending = True
            view._update_busy()
            view.resume_run_requested.emit(*ids, run_id)

    @Slot()
    def show_runs(self) -> None:
        """The runs in the Workflow header; the missing-package card instead of the composer; the open run."""
        view = self._view
        runs = view.runs
        active = runs.active if view.mode == "run" else None
        count = view._summary.run_count if view._summary is not None else 0
        view.header.workflow.set_runs(runs.runs, runs.active.run_id if runs.active else None, count)
        missing = active if active is not None and not active.package_installed else None
        view.missing_package.show_run(missing)
        view.composer.setVisible(missing is None)
        view.run_shown.emit(active)
