"""The run tracker: what it shows of the open run changes only with ``changed``, and never goes back
to a phase the run has left when listings cross the end of a turn."""

from __future__ import annotations

from typing import Any

from crewagent.core.runs.conversation import RunOverview
from crewagent.ui.run_tracker import RunTracker
from crewagent.worker.values import ConversationRuns


def _listing(phase: str) -> ConversationRuns:
    run = RunOverview("run_1", "c", "pkg", "Pkg", "1.0.0", "brief", "Brief", phase, "2026-01-01T00:00:00Z")
    return ConversationRuns("p", "c", (run,), "run_1")


def test_the_end_of_a_turn_shows_running_until_the_listing_asked_for_then_arrives(qapp: Any) -> None:
    """The status bar follows ``changed``: the phase used to switch, unannounced, to that of a
    listing read during the turn as soon as the turn ended (the status bar said "Running" while the
    run said "Completed", or the other way round)."""
    tracker = RunTracker()
    asked: list[tuple[str, str]] = []
    shown: list[str | None] = []
    tracker.load_requested.connect(lambda *ids: asked.append(ids))
    tracker.changed.connect(lambda: shown.append(tracker.active.phase if tracker.active else None))

    def phase() -> str | None:
        current = tracker.active.phase if tracker.active else None
        assert current == shown[-1], "the phase changed without `changed`"
        return current

    tracker.show("p", "c")
    tracker.on_loaded(_listing("idle"))
    tracker.on_loaded(_listing("idle"))  # Start sends a listing of its own, asked for by nobody
    tracker.on_turn_started("c", "run")
    tracker.refresh()  # the conversation's row changed mid-turn
    tracker.on_loaded(_listing("completed"))  # read after the last step, before the turn's end
    assert phase() == "running"
    tracker.on_turn_finished("c")
    assert len(asked) == 3 and phase() == "running"  # not yet the phase of a listing read during the turn
    tracker.on_loaded(_listing("completed"))  # the listing asked for at the turn's end
    assert phase() == "completed"
