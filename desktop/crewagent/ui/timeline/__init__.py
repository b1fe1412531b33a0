"""The conversation timeline: one item model, one delegate, one view (STYLE.md: no widget per message)."""

from crewagent.ui.timeline.delegate import TimelineDelegate
from crewagent.ui.timeline.model import TimelineModel, TimelineRole
from crewagent.ui.timeline.state import TimelineViewState
from crewagent.ui.timeline.view import TimelineView

__all__ = ["TimelineDelegate", "TimelineModel", "TimelineRole", "TimelineView", "TimelineViewState"]
