"""Immutable values the worker hands to the UI (safe to share between threads)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from crewagent.core.messages import ConversationMeta, Mode
from crewagent.core.packages import InstalledPackage, PackageError, Problem, Workflow
from crewagent.core.runs.conversation import RunOverview
from crewagent.core.search import SearchHit  # noqa: F401  (a value the UI gets: conversation, snippet, count, message)
from crewagent.core.paths import conversations_dir
from crewagent.core.store import ProjectInfo, RecentProject
from crewagent.core.store.index import INDEX_NAME

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
    #: ``<data>/projects/<id>``: never shown in the Files panel, even when it lies inside ``root``.
    runtime_dir: str = ""

    @classmethod
    def from_info(cls, info: ProjectInfo) -> ProjectRef:
        return cls(
            id=info.id,
            name=info.name,
            root=str(info.root),
            artifacts_dir=str(info.artifacts_dir),
            runtime_dir=str(info.runtime_dir),
        )

    @property
    def conversation_index(self) -> str:
        """The project's conversation index (index.json); the window watches it for other processes."""
        return str(conversations_dir(Path(self.runtime_dir)) / INDEX_NAME) if self.runtime_dir else ""


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
    #: Run mode: the run its turns continue, and how many runs it has started.
    active_run_id: str | None = None
    run_count: int = 0
    package_id: str | None = None

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
            active_run_id=meta.activeRunId,
            run_count=len(meta.workflowRuns or ()),
            package_id=meta.packageId,
        )

    def only_recounted(self, previous: ConversationSummary) -> bool:
        """The same entry as ``previous`` but for its message count (a running turn persisted messages)."""
        return self.message_count != previous.message_count and self == replace(previous, message_count=self.message_count)


# -- settings, agents, search and file previews (the settings dialog, Works and Files panels) ----


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """One invalid settings value: ``field`` is its dotted path (``llm.baseUrl``), ``message`` a sentence."""

    field: str
    message: str


@dataclass(frozen=True, slots=True)
class ApiKeyState:
    """Whether a provider has an API key stored, and where keys are kept (never the key itself)."""

    provider: str
    is_set: bool
    backend: str
    secure: bool
    #: Non-empty when keys are not in a system keyring (shown on the LLM page).
    warning: str = ""


@dataclass(frozen=True, slots=True)
class LlmDraft:
    """The LLM page as typed, not yet saved: what Test Connection and the model list use.

    ``api_key`` empty means "the stored key"; a typed key is only held in memory.
    """

    provider: str
    base_url: str
    model: str
    timeout_seconds: float
    api_key: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """What Test Connection found; ``status`` is ``ok``, ``auth_failed``, ``unreachable``, ``timeout``,
    ``not_found``, ``http_error``, ``bad_response`` or ``invalid`` (the settings themselves)."""

    status: str
    message: str
    models: tuple[str, ...] = ()
    latency_ms: float | None = None
    #: ``(model id, context window)`` for the models whose metadata gives a window.
    windows: tuple[tuple[str, int], ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class ModelList:
    """The models a provider lists (``GET /v1/models``); ``error`` says why there are none."""

    provider: str
    base_url: str
    models: tuple[str, ...] = ()
    error: str = ""
    #: ``(model id, context window)`` for the models whose metadata gives a window.
    windows: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class LocalServerFound:
    """A model server running on this computer (Ollama, LM Studio) and the models it lists."""

    provider: str
    base_url: str
    models: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MenuEntry:
    trigger: str
    description: str


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """An agent the user can pick in Agent mode (a frozen copy of its ``agents.json`` entry)."""

    id: str
    name: str
    title: str
    icon: str
    description: str
    menu: tuple[MenuEntry, ...]
    #: ``builtin`` or the id of the package the agent comes from.
    source: str = "builtin"


@dataclass(frozen=True, slots=True)
class PackagesListing:
    """The installed workflow packages (``packages_loaded``): the ones that load, sorted by name then
    version, and the error of each installed package that does not (its ``source`` names the
    package folder, its ``problems`` each name a file and a JSON pointer)."""

    packages: tuple[InstalledPackage, ...]
    broken: tuple[PackageError, ...] = ()

    def workflows(self) -> tuple[tuple[InstalledPackage, Workflow], ...]:
        """Every workflow of every package, in package order, as ``(package, workflow)``."""
        return tuple((package, workflow) for package in self.packages for workflow in package.workflows)


@dataclass(frozen=True, slots=True)
class ConversationRuns:
    """The runs started in a conversation (``runs_loaded``), oldest first, each with its phase as it
    is now, and ``active_run_id``: the run its Run-mode turns continue."""

    project_id: str
    conversation_id: str
    runs: tuple[RunOverview, ...] = ()
    active_run_id: str | None = None

    @property
    def active(self) -> RunOverview | None:
        return next((run for run in self.runs if run.run_id == self.active_run_id), None)


@dataclass(frozen=True, slots=True)
class PackageImport:
    """The answer to ``import_package``: the package installed, or why not (nothing was installed then).

    ``problems`` are the package's defects, each naming a file and a JSON pointer; ``message`` is a
    failure that is not the package's fault (a full disk), as a sentence for the user.
    """

    path: str
    package: InstalledPackage | None = None
    problems: tuple[Problem, ...] = ()
    message: str = ""


@dataclass(frozen=True, slots=True)
class PackageRunUse:
    """A run that uses a package, named for a confirmation question."""

    project_name: str
    run_id: str
    workflow_id: str
    phase: str


@dataclass(frozen=True, slots=True)
class PackageRemoval:
    """The answer to ``remove_package``: removed; or not, because runs use the package and the removal
    was not confirmed (``uses``), or because it failed (``message``)."""

    package_id: str
    removed: bool
    uses: tuple[PackageRunUse, ...] = ()
    message: str = ""


@dataclass(frozen=True, slots=True)
class FilePreview:
    """A project file read for a workspace tab.

    ``kind`` is ``markdown`` or ``text`` (``text`` holds the content), ``binary`` (not text),
    ``too_large`` (over the size cap) or ``error`` (``message`` says why).
    """

    path: str
    kind: str
    size: int = 0
    text: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class SavedFile:
    """A text written where the user chose (``Worker.save_text``); ``error`` says why it was not."""

    path: str
    error: str = ""
