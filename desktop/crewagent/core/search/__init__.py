"""Full-text search over a project's conversation logs: a scan, and a derived FTS5 index."""

from __future__ import annotations

from crewagent.core.search.hits import SearchCancelled, SearchHit
from crewagent.core.search.service import MessageSearch

__all__ = ["MessageSearch", "SearchCancelled", "SearchHit"]
