"""Immutable values the worker hands to the UI (safe to share between threads)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from crewagent.core.messages import ConversationMeta, Mode
from crewagent.core.store import ProjectInfo, RecentProject

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_timestamp(text: str) -> datetime:
    """An ISO-8601 store timestamp as an aware datetime; an unreadable one sorts as the oldest."""
    try:
        parsed = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return _EPOCH
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class ProjectRef:
    """An opened project, as the UI needs it."""

    id: str
    name: str
    root: str
    artifacts_dir: str

    @classmethod
    def from_info(cls, info: ProjectInfo) -> ProjectRef:
        return cls(id=info.id, name=info.name, root=str(info.root), artifacts_dir=str(info.artifacts_dir))


@dataclass(frozen=True, slots=True)
class RecentProjectEntry:
    """One row of the recent-projects list.

    ``exists`` was checked on the worker thread when the list was read, so the UI never stats a
    folder itself.
    """

    project_id: str
    name: str
    root: str
    last_opened_at: datetime
    exists: bool

    @classmethod
    def from_recent(cls, recent: RecentProject) -> RecentProjectEntry:
        return cls(
            project_id=recent.projectId,
            name=recent.name,
            root=recent.projectRoot,
            last_opened_at=parse_timestamp(recent.lastOpenedAt),
            exists=recent.exists,
        )


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One conversation of a project's Works list (a frozen copy of its index entry)."""

    id: str
    title: str
    entry_type: Mode
    active_type: Mode
    created_at: datetime
    last_active_at: datetime
    message_count: int
    agent_id: str | None = None
    workflow_id: str | None = None

    @classmethod
    def from_meta(cls, meta: ConversationMeta) -> ConversationSummary:
        return cls(
            id=meta.id,
            title=meta.title,
            entry_type=meta.entryType,
            active_type=meta.activeType,
            created_at=parse_timestamp(meta.createdAt),
            last_active_at=parse_timestamp(meta.lastActiveAt),
            message_count=meta.messageCount,
            agent_id=meta.agentId,
            workflow_id=meta.workflowId,
        )
