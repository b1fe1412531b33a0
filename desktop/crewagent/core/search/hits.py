"""The answer of a search: one conversation whose messages contain the query."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crewagent.core.search.text import snippet

#: Returns True when the search was superseded (a newer query, the project closed).
IsCancelled = Callable[[], bool]


class SearchCancelled(Exception):
    """A search (or an index update) noticed it was superseded and stopped; its progress is kept."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A conversation whose messages contain the searched text, with its first match in context.

    ``message_id`` is the message of that first match (the timeline jumps to it); ``matches`` is
    how many messages of the conversation contain the text.
    """

    conversation_id: str
    snippet: str
    matches: int
    message_id: str = ""


@dataclass
class LogMatches:
    """The matches found in one log (or a part of it)."""

    count: int = 0
    snippet: str = ""
    message_id: str = ""

    def add(self, text: str, needle: str, message_id: str) -> None:
        self.count += 1
        if self.count == 1:
            self.snippet, self.message_id = snippet(text, needle), message_id

    def then(self, later: LogMatches) -> LogMatches:
        """These matches followed by ``later``'s (a log's indexed part, then its newest lines)."""
        if not self.count:
            return later
        return LogMatches(self.count + later.count, self.snippet, self.message_id)
