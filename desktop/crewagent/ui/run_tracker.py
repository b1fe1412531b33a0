"""The runs of the conversation shown, kept current for the Workflow header, the missing-package card and the status bar."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal, Slot

from crewagent.core.loop import RunProgress
from crewagent.core.runs.conversation import RunOverview
from crewagent.worker.values import ConversationRuns


class RunTracker(QObject):
    """Asks the worker for the runs when the conversation is shown, when it changes and after each of
    its turns (the index has the phase the turn ended in); in between, the open run's phase and
    progress follow the turn live (``turn_started`` in Run mode, ``run_progress``)."""

    #: ``(project_id, conversation_id)``: list the conversation's runs (TurnWorker ``load_runs``).
    load_requested = Signal(str, str)
    #: The runs, or the open run's phase or progress, changed.
    changed = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._ids: tuple[str, str] | None = None
        self._listing: ConversationRuns | None = None
        self._running = False  # a Run-mode turn runs in the conversation now
        # The turn has ended: its run is shown as running until a listing arrives (one read during the
        # turn, or the one asked for at its end; the worker answers in the order asked).
        self._settling = False

    @property
    def runs(self) -> tuple[RunOverview, ...]:
        """The conversation's runs, oldest first (empty until they have arrived)."""
        return tuple(self._live(run) for run in self._listing.runs) if self._listing is not None else ()

    @property
    def active(self) -> RunOverview | None:
        """The run the conversation's Run-mode turns continue, as it is now."""
        run = self._listing.active if self._listing is not None else None
        return self._live(run) if run is not None else None

    def show(self, project_id: str | None, conversation_id: str | None) -> None:
        """Another conversation is shown (None: none): forget the old runs, ask for the new ones."""
        self._ids = (project_id, conversation_id) if project_id and conversation_id else None
        self._listing, self._running, self._settling = None, False, False
        self.changed.emit()
        self.refresh()

    def refresh(self) -> None:
        if self._ids is not None:
            self.load_requested.emit(*self._ids)

    def _mine(self, conversation_id: str) -> bool:
        return self._ids is not None and self._ids[1] == conversation_id

    def _live(self, run: RunOverview) -> RunOverview:
        running = self._running or self._settling
        if running and self._listing is not None and run.run_id == self._listing.active_run_id and run.phase != "running":
            return replace(run, phase="running")
        return run

    # -- fed by the turn worker -------------------------------------------------------------------

    @Slot(object)
    def on_loaded(self, listing: ConversationRuns) -> None:
        if self._ids == (listing.project_id, listing.conversation_id):
            self._listing, self._settling = listing, False
            self.changed.emit()

    def on_turn_started(self, conversation_id: str, mode: str) -> None:
        if self._mine(conversation_id) and mode == "run":
            self._running = True
            self.changed.emit()

    def on_turn_finished(self, conversation_id: str) -> None:
        if self._mine(conversation_id):
            # Shown as running until the index's phase has arrived: a listing read during the turn
            # (and answered now) would show a phase the turn has since left.
            self._running, self._settling = False, self._running
            self.refresh()

    @Slot(str, object)
    def on_progress(self, conversation_id: str, progress: RunProgress) -> None:
        listing = self._listing
        if not self._mine(conversation_id) or listing is None:
            return
        runs = tuple(
            replace(run, current_node_id=progress.current_node_id, steps_completed=progress.steps_completed)
            if run.run_id == progress.run_id
            else run
            for run in listing.runs
        )
        self._listing = replace(listing, runs=runs)
        self.changed.emit()
