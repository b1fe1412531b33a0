"""A search hit to show in the conversation once its messages are there (issue 18, item 4)."""

from __future__ import annotations

from typing import Protocol


class Revealing(Protocol):
    def reveal(self, message_id: str, text: str) -> bool: ...
    def clear_highlight(self) -> None: ...


class PendingReveal:
    """The hit the user picked: shown at once when its message is loaded, else when more arrive."""

    def __init__(self, timeline: Revealing):
        self._timeline = timeline
        self._hit: tuple[str, str] | None = None  # (message id, searched text)

    def want(self, message_id: str, text: str, *, loaded: bool) -> None:
        self._hit = (message_id, text)
        if loaded:
            self.try_now(complete=False)

    def forget(self) -> None:
        self._hit = None

    def clear(self) -> None:
        """The search was cleared: no row stays marked."""
        self._hit = None
        self._timeline.clear_highlight()

    def try_now(self, *, complete: bool) -> None:
        if self._hit is None:
            return
        if self._timeline.reveal(*self._hit) or complete:
            self._hit = None  # shown, or not in this conversation (any more)
