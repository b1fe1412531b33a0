"""What the timeline view remembers per row that is not conversation data: expanded parts, answered widgets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from crewagent.worker.tool_images import ToolImage


class Thumbnails(Protocol):
    """Where user rows get their attached images' thumbnails (ui/images.py ``ThumbnailCache``)."""

    def get(self, url: str, key: str = "") -> object:
        """A QPixmap when loaded, a one-line note when it cannot be shown, None while loading."""
        ...


@dataclass
class TimelineViewState:
    """Keyed by row key (message id or ``tool:<call id>``), never by row number."""

    expanded_tools: set[str] = field(default_factory=set)
    expanded_reasoning: set[str] = field(default_factory=set)
    #: Answers given to ask-user widgets in this session, by call id (shown read-only).
    widget_answers: dict[str, dict[str, object]] = field(default_factory=dict)
    #: A turn is running: Retry and Continue are not offered.
    busy: bool = False
    #: A timeline nobody can answer in (a subagent's tab): no Retry, Continue or full-output loading.
    read_only: bool = False
    #: Thumbnails of the images attached to user messages (None: the rows show placeholders).
    thumbnails: Thumbnails | None = None
    #: The thumbnails (or why not) of the images MCP tool parts name, by row key, as the worker read
    #: them; and the parts whose images were asked for (once each; timeline/images.py).
    images: dict[str, tuple[ToolImage, ...]] = field(default_factory=dict)
    images_asked: set[str] = field(default_factory=set)

    def clear(self) -> None:
        self.expanded_tools.clear()
        self.expanded_reasoning.clear()
        self.widget_answers.clear()
        self.images.clear()
        self.images_asked.clear()

    def toggle_tool(self, key: str) -> bool:
        """Expand or collapse a tool part; returns True when it is now expanded."""
        if key in self.expanded_tools:
            self.expanded_tools.discard(key)
            return False
        self.expanded_tools.add(key)
        return True

    def toggle_reasoning(self, key: str) -> bool:
        if key in self.expanded_reasoning:
            self.expanded_reasoning.discard(key)
            return False
        self.expanded_reasoning.add(key)
        return True

    def signature(self, key: str) -> tuple[bool, ...]:
        """The part of the state that changes a row's height (for the delegate's size cache)."""
        if key in self.images:  # its thumbnails replaced the "Loading image…" line
            return (key in self.expanded_tools, key in self.expanded_reasoning, True, True)
        return (key in self.expanded_tools, key in self.expanded_reasoning)
