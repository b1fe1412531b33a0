"""The Worker: owns the RuntimeStore off the GUI thread, takes requests as slots, answers with signals."""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar, cast

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance, Slot

from crewagent.core import agent_catalog, texts
from crewagent.core.errors import CrewAgentError, NotAProjectError, ProjectFolderMissing
from crewagent.core.messages import MODES, ConversationMeta, Mode
from crewagent.core.packages import example_package_id
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.store.runtime import DEFAULT_TITLE
from crewagent.core.store import ProjectInfo
from crewagent.core.export import export_conversation
from crewagent.core.turns import package_store
from crewagent.core.store import RuntimeStore
from crewagent.worker.background import BackgroundJobs
from crewagent.worker.mcp_requests import McpRequests
from crewagent.worker.package_ops import PackageOps
from crewagent.worker.runs import LoadedRun, RunLoader
from crewagent.worker.search import SearchRequests, read_preview
from crewagent.worker.settings_ops import SettingsInvalid, SettingsOps
from crewagent.worker.threads import require_own_thread
from crewagent.worker.turns import ProviderFactory, TurnWorker
from crewagent.worker.values import (
    AgentSummary,
    ConversationSummary,
    LlmDraft,
    MenuEntry,
    PackagesListing,
    ProjectRef,
    RecentProjectEntry,
    SavedFile,
)
from crewagent.worker.worker_signals import WorkerSignals

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_W = TypeVar("_W", bound="Worker")


def _request(method: Callable[Concatenate[_W, _P], None]) -> Callable[Concatenate[_W, _P], None]:
    """Run a request on the worker thread; a CrewAgentError becomes ``error``, anything else is a bug.

    A bug is not caught: Qt reports an exception escaping a slot loudly (and pytest-qt fails the
    test), which is what we want for a defect as opposed to a bad folder or a full disk.
    """

    @functools.wraps(method)
    def wrapper(self: _W, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        self._check_thread(method.__name__)
        try:
            method(self, *args, **kwargs)
        except CrewAgentError as exc:
            log.info("%s failed: %s", method.__name__, exc)
            self.error.emit(method.__name__, str(exc))

    return wrapper


class Worker(WorkerSignals):
    """The UI's only way to the store (and, later, to the tool loop).

    Lives in its own QThread (see :func:`crewagent.worker.host.start_worker`). The UI connects its
    request signals to the slots below; Qt queues the calls onto the worker thread, so the GUI
    thread never touches disk. Results come back as signals carrying immutable values
    (:mod:`crewagent.worker.values`); the UI never receives a store object.

    Every result signal says what changed, not who asked: a window that did not send the request
    (or a second view later) can react to it in the same way.

    Requests (slots): ``load_recent_projects()``, ``create_project(root, name)``,
    ``open_project(root)``, ``forget_project(project_id)``, ``load_conversations(project_id)``,
    ``create_conversation(project_id, entry_type)``, ``rename_conversation(project_id, id, title)``,
    ``delete_conversation(project_id, id)``, ``search_conversations(project_id, query)``,
    ``read_project_file(path)``, ``load_settings()``, ``refresh_settings()``, ``save_settings(changes)``,
    ``load_api_key_state(provider)``, ``set_api_key(provider, key)``, ``test_connection(draft)``,
    ``list_models(draft)``, ``load_agents()``, ``load_packages()``, ``import_package(path)``,
    ``remove_package(package_id, confirmed)``, ``try_workflow(project_id)``, ``load_run(project_id, cid)``. Slow reads and network checks run in a small
    background pool (:mod:`crewagent.worker.background`); their answers are still emitted from
    the worker thread.
    """

    #: Internal: a background job's result, to be handled on the worker thread.
    _delivered = Signal(object)

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        parent: QObject | None = None,
        *,
        provider_factory: ProviderFactory | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("crewagent-worker")
        self._data_dir = data_dir
        self._store_instance: RuntimeStore | None = None
        self._store_lock = threading.Lock()
        #: Conversation turns (a child: it moves to the worker thread with this object and
        #: shares its store). ``provider_factory`` replaces the settings' provider in tests.
        self.turns = TurnWorker(lambda: self._store, self, provider_factory=provider_factory)
        self._settings = SettingsOps()
        self._delivered.connect(self._run_delivered, Qt.ConnectionType.QueuedConnection)
        self._jobs = BackgroundJobs(self._delivered.emit, self._job_failed)
        self.mcp = McpRequests(self._jobs, self)  # Settings → MCP (issue 12): secrets, Test Connection, import
        self._searches = SearchRequests(lambda: self._store, self._store_lock, self._jobs.submit)
        # The Run workspace (issue 11): the opened projects, by id, and the run reads.
        self._projects: dict[str, ProjectInfo] = {}
        self._runs = RunLoader(lambda: self._store, lambda: package_store(self._store.data_dir), self._jobs.submit, self.run_loaded.emit)

    @property
    def _store(self) -> RuntimeStore:
        # Created on first use, off the GUI thread: on the worker thread, or on the turns' loop
        # thread (the lock makes it one store for both).
        with self._store_lock:
            if self._store_instance is None:
                self._store_instance = RuntimeStore(self._data_dir)
            return self._store_instance

    def _check_thread(self, request: str) -> None:
        require_own_thread(self, f"Worker.{request}")

    # -- projects --------------------------------------------------------------------------

    @Slot()
    @_request
    def load_recent_projects(self) -> None:
        self._emit_recent()

    @Slot(str, str)
    @_request
    def create_project(self, root: str, name: str) -> None:
        """Make ``root`` a project named ``name`` (the folder's name when empty) and open it.

        A folder that already is a project is simply opened.
        """
        info = self._store.create_project(root, name.strip() or None)
        self.turns.add_project(info)
        self._projects[info.id] = info
        self._opened(ProjectRef.from_info(info))

    @Slot(str)
    @_request
    def open_project(self, root: str) -> None:
        """Open an existing project folder; ``project_unavailable`` when it is missing or not a project."""
        try:
            info = self._store.open_project(root)
        except ProjectFolderMissing:
            self.project_unavailable.emit(root, "missing")
            return
        except NotAProjectError:
            self.project_unavailable.emit(root, "not_a_project")
            return
        self.turns.add_project(info)
        self._projects[info.id] = info
        self._opened(ProjectRef.from_info(info))

    @Slot(str)
    @_request
    def forget_project(self, project_id: str) -> None:
        """Remove a project from the recent list; its folder and data are kept."""
        self._store.forget_project(project_id)
        self._emit_recent()

    def _opened(self, project: ProjectRef) -> None:
        self.project_opened.emit(project)
        self._emit_conversations(project.id)
        self._emit_recent()
        self._searches.warm(project.id)

    def _emit_recent(self) -> None:
        entries = tuple(RecentProjectEntry.from_recent(recent) for recent in self._store.recent_projects())
        self.recent_projects_changed.emit(entries)

    # -- conversations ---------------------------------------------------------------------

    @Slot(str)
    @_request
    def load_conversations(self, project_id: str) -> None:
        self._emit_conversations(project_id)

    @Slot(str, str)
    @_request
    def create_conversation(self, project_id: str, entry_type: str) -> None:
        """Start a conversation of type ``chat``, ``agent`` or ``run`` (its title comes later).

        One draft at a time: an untouched empty conversation of that type is reused rather than
        another "New conversation" left behind by every "+ New"; an empty one of another type is
        deleted (switching its mode instead would race with the turn worker's view of it).
        """
        if entry_type not in MODES:
            raise ValueError(f"Unknown conversation type {entry_type!r}; expected one of {MODES}")
        meta = self._unused_conversation(project_id)
        if meta is not None and (meta.entryType, meta.activeType) != (entry_type, entry_type):
            self._store.delete_conversation(project_id, meta.id)
            self.conversation_deleted.emit(project_id, meta.id)
            meta = None
        if meta is None:
            meta = self._store.create_conversation(project_id, entry_type=cast(Mode, entry_type))
        self.conversation_created.emit(project_id, ConversationSummary.from_meta(meta))

    @Slot(str)
    @_request
    def try_workflow(self, project_id: str) -> None:
        """A Workflow conversation with the built-in example workflow picked, not started yet (the empty
        Works list's "Try a workflow"); ``conversation_created`` answers."""
        package_id = example_package_id(self._store.data_dir)
        package = package_store(self._store.data_dir).get(package_id)
        workflow_id = package.definition.default_workflow_id
        meta = self._store.create_conversation(project_id, entry_type="run", packageId=package.id, workflowId=workflow_id)
        self.conversation_created.emit(project_id, ConversationSummary.from_meta(meta))

    def _unused_conversation(self, project_id: str) -> ConversationMeta | None:
        """An empty conversation nobody has touched: no message in its log, its placeholder title,
        no workflow picked for it (as "Try a workflow" does)."""
        for meta in self._store.list_conversations(project_id):
            if meta.messageCount or meta.title != DEFAULT_TITLE or meta.autoTitle is False:
                continue
            if meta.workflowId or meta.packageId or meta.workflowRuns or meta.activeRunId:
                continue
            log_file = self._store.log_path(project_id, meta.id)
            try:
                empty = log_file.stat().st_size == 0
            except FileNotFoundError:
                empty = True
            except OSError:
                continue
            # Opening it (a recovery on the turn thread) holds its lock for a moment: that is no turn.
            if empty and not self._store.is_turn_running(project_id, meta.id, count_recovery=False):
                return meta
        return None

    def _emit_conversations(self, project_id: str) -> None:
        metas = self._store.list_conversations(project_id)
        self.conversations_loaded.emit(project_id, tuple(ConversationSummary.from_meta(meta) for meta in metas))
        for notice in self._store.take_notices():  # what the load repaired: a rebuilt index, conversations brought back
            self.error.emit("load_conversations", notice)

    # -- conversations: rename, delete, search -----------------------------------------------

    @Slot(str, str, str)
    @_request
    def rename_conversation(self, project_id: str, conversation_id: str, title: str) -> None:
        """Give a conversation a title of the user's choosing (an empty title is refused)."""
        if not title.strip():
            self.error.emit("rename_conversation", "A conversation needs a name; it was not renamed.")
            return
        meta = self._store.rename_conversation(project_id, conversation_id, title)
        self.conversation_changed.emit(project_id, ConversationSummary.from_meta(meta))

    @Slot(str, str, str, str)
    @_request
    def export_conversation(self, project_id: str, conversation_id: str, fmt: str, path: str) -> None:
        """Write a conversation to ``path`` as ``crewagent export`` does (issue 18, item 15)."""
        result = export_conversation(self._store, project_id, conversation_id, fmt)
        if result.error is not None:
            self.error.emit("export_conversation", texts.EXPORT_INVALID)
            return
        try:
            Path(path).write_text(result.text, encoding="utf-8")  # as the command line writes -o FILE
        except OSError as exc:
            self.error.emit("export_conversation", texts.EXPORT_CANNOT_WRITE.format(path=path, reason=exc.strerror or exc))
            return
        self.conversation_exported.emit(path, result.warnings)

    @Slot(str, str)
    @_request
    def delete_conversation(self, project_id: str, conversation_id: str) -> None:
        """Delete a conversation with its messages, offloaded outputs and sidechains."""
        self._store.delete_conversation(project_id, conversation_id)
        self.conversation_deleted.emit(project_id, conversation_id)

    @Slot(str, str)
    @_request
    def search_conversations(self, project_id: str, query: str) -> None:
        """Search the message text of a project's conversations; a newer search cancels this one."""
        self._searches.search(project_id, query, self.search_results.emit)

    # -- project files ------------------------------------------------------------------------

    @Slot(str)
    @_request
    def read_project_file(self, path: str) -> None:
        """Read a file for a preview tab (size-capped); answers with ``file_read``."""
        self._jobs.submit("read_project_file", lambda: read_preview(path), self.file_read.emit)

    @Slot(str, str)
    @_request
    def save_text(self, path: str, text: str) -> None:
        """Write ``text`` (UTF-8) to ``path`` chosen in a Save dialog, replacing it whole; answers with ``text_saved``."""
        self._jobs.submit("save_text", lambda: _save_text(path, text), self.text_saved.emit)

    # -- settings -----------------------------------------------------------------------------

    @Slot()
    @_request
    def load_settings(self) -> None:
        """Read settings.json; answers with ``settings_changed`` and the key state of the provider."""
        settings, problems = self._settings.load()
        if problems:
            self.error.emit("load_settings", " ".join(problems))
        self.settings_changed.emit(settings.model_copy(deep=True))
        self.api_key_changed.emit(self._settings.key_state(settings.llm.provider))

    @Slot()
    @_request
    def refresh_settings(self) -> None:
        """Re-read settings.json if it changed on disk; ``settings_changed`` only when it did."""
        settings = self._settings.refresh()
        if settings is not None:
            self.settings_changed.emit(settings.model_copy(deep=True))

    @Slot(object)
    @_request
    def save_settings(self, changes: object) -> None:
        """Apply ``{section: {key: value}}`` changes; ``settings_changed`` and ``settings_saved``, or ``settings_invalid``."""
        if not isinstance(changes, dict):
            raise TypeError(f"save_settings takes a dict of sections, got {type(changes).__name__}")
        try:
            settings = self._settings.save(changes)
        except SettingsInvalid as invalid:
            self.settings_invalid.emit(invalid.problems)
            return
        self.settings_changed.emit(settings.model_copy(deep=True))
        self.settings_saved.emit(settings.model_copy(deep=True))

    @Slot(str)
    @_request
    def load_api_key_state(self, provider: str) -> None:
        self.api_key_changed.emit(self._settings.key_state(provider))

    @Slot(str, str)
    @_request
    def set_api_key(self, provider: str, key: str) -> None:
        """Keep ``key`` for ``provider`` in the keyring (or the private fallback file); "" removes it."""
        try:
            state = self._settings.set_key(provider, key)
        except SettingsInvalid as invalid:
            self.settings_invalid.emit(invalid.problems)
            return
        self.api_key_changed.emit(state)

    @Slot(object)
    @_request
    def test_connection(self, draft: object) -> None:
        """Reach the provider described by an ``LlmDraft`` (in the background; bounded wait)."""
        llm = self._draft(draft)
        self._jobs.submit("test_connection", lambda: self._settings.check_connection(llm), self.connection_tested.emit)

    @Slot(object)
    @_request
    def list_models(self, draft: object) -> None:
        """The models of the provider described by an ``LlmDraft``; answers with ``models_listed``."""
        llm = self._draft(draft)
        self._jobs.submit("list_models", lambda: self._settings.fetch_models(llm), self.models_listed.emit)

    @Slot()
    @_request
    def probe_local_servers(self) -> None:
        """Look for Ollama and LM Studio on this computer (background; answers ``local_servers_found``)."""
        self._jobs.submit("probe_local", self._settings.probe_local, self.local_servers_found.emit)

    @staticmethod
    def _draft(draft: object) -> LlmDraft:
        if not isinstance(draft, LlmDraft):
            raise TypeError(f"expected an LlmDraft, got {type(draft).__name__}")
        return draft

    # -- agents -------------------------------------------------------------------------------

    @Slot()
    @_request
    def load_agents(self) -> None:
        """The agents Agent mode offers: the built-in ones, then the installed packages' agents."""
        summaries = tuple(
            AgentSummary(
                id=entry.agent.id,
                name=entry.agent.metadata.name,
                title=entry.agent.metadata.title,
                icon=entry.agent.metadata.icon,
                description=entry.agent.metadata.description,
                menu=tuple(MenuEntry(item.trigger, item.description) for item in entry.agent.menu),
                source=entry.package_id or "builtin",
            )
            for entry in agent_catalog.catalog(self._store.data_dir)
        )
        self.agents_loaded.emit(summaries)

    # -- packages -----------------------------------------------------------------------------

    @Slot()
    @_request
    def load_packages(self) -> None:
        """The installed workflow packages (the built-in one is installed on first use)."""
        self._emit_packages()

    @Slot(str)
    @_request
    def import_package(self, path: str) -> None:
        """Install a ``.bmad`` zip or a package folder (in the background); answers ``package_imported``."""
        ops = self._package_ops()
        self._jobs.submit("import_package", lambda: ops.import_package(path), self._package_changed(self.package_imported, "package"))

    @Slot(str, bool)
    @_request
    def remove_package(self, package_id: str, confirmed: bool) -> None:
        """Uninstall a package; unless ``confirmed``, first name the runs that use it (``package_removal``)."""
        ops = self._package_ops()
        remove = self._package_changed(self.package_removal, "removed")
        self._jobs.submit("remove_package", lambda: ops.remove(package_id, confirmed=confirmed), remove)

    def _package_changed(self, signal: SignalInstance, changed_when: str) -> Callable[[object], None]:
        """Emit the answer; when the packages changed, the new listing and agents too (no restart needed)."""

        def done(answer: object) -> None:
            signal.emit(answer)
            if getattr(answer, changed_when):
                self._emit_packages()
                self.load_agents()

        return done

    def _package_ops(self) -> PackageOps:
        return PackageOps(self._store.data_dir)

    def _emit_packages(self) -> None:
        self.packages_loaded.emit(self._package_ops().listing())

    # -- the Run workspace -----------------------------------------------------------------------

    @Slot(str, str)
    @_request
    def load_run(self, project_id: str, conversation_id: str) -> None:
        """Read the conversation's active run (in the background); answers with ``run_loaded``."""
        project = self._projects.get(project_id)
        if project is None:
            self.run_loaded.emit(LoadedRun(project_id, conversation_id, None))
            return
        self._runs.request(project, conversation_id)

    # -- background jobs ----------------------------------------------------------------------

    @Slot(object)
    def _run_delivered(self, callback: object) -> None:
        if callable(callback):
            callback()

    def _job_failed(self, name: str, exc: BaseException) -> None:
        if isinstance(exc, CrewAgentError):
            log.info("%s failed: %s", name, exc)
            self.error.emit(name, str(exc))
            return
        raise exc  # a bug: let Qt report it loudly, as for a slot

    def close_background(self) -> None:
        """Stop the background jobs (searches, network checks); call after the thread stopped."""
        self._searches.stop()
        self._jobs.close()
        self._searches.close()


def _save_text(path: str, text: str) -> SavedFile:
    """In the background pool: a full disk or a read-only folder is an answer, not a crash."""
    try:
        atomic_write_bytes(Path(path), text.encode("utf-8"))
    except CrewAgentError as exc:
        return SavedFile(path, str(exc))
    return SavedFile(path)
