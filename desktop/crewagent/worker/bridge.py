"""The Worker: owns the RuntimeStore off the GUI thread, takes requests as slots, answers with signals."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar, cast

from PySide6.QtCore import QObject, QThread, Signal, Slot

from crewagent.core.errors import CrewAgentError
from crewagent.core.messages import MODES, Mode
from crewagent.core.store import RuntimeStore
from crewagent.worker.turns import ProviderFactory, TurnWorker
from crewagent.worker.values import ConversationSummary, ProjectRef, RecentProjectEntry

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


class Worker(QObject):
    """The UI's only way to the store (and, later, to the tool loop).

    Lives in its own QThread (see :func:`crewagent.worker.host.start_worker`). The UI connects its
    request signals to the slots below; Qt queues the calls onto the worker thread, so the GUI
    thread never touches disk. Results come back as signals carrying immutable values
    (:mod:`crewagent.worker.values`); the UI never receives a store object.

    Every result signal says what changed, not who asked: a window that did not send the request
    (or a second view later) can react to it in the same way.

    Requests (slots): ``load_recent_projects()``, ``create_project(root, name)``,
    ``open_project(root)``, ``forget_project(project_id)``, ``load_conversations(project_id)``,
    ``create_conversation(project_id, entry_type)``.
    """

    #: The recent-projects list, most recent first: ``tuple[RecentProjectEntry, ...]``.
    #: Emitted after ``load_recent_projects`` and after every request that changes the list.
    recent_projects_changed = Signal(object)

    #: A project was opened or created: the ``ProjectRef``. ``conversations_loaded`` follows.
    project_opened = Signal(object)

    #: ``(project_id, tuple[ConversationSummary, ...])``: a project's conversations, most recently
    #: active first.
    conversations_loaded = Signal(str, object)

    #: ``(project_id, ConversationSummary)``: a conversation was created in that project.
    conversation_created = Signal(str, object)

    #: ``(request, message)``: a request failed for a reason the user can act on (a folder that
    #: is not a project, a damaged project file, a full disk). ``request`` is the slot's name;
    #: ``message`` is a complete sentence meant for the user. Nothing was changed.
    error = Signal(str, str)

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
        #: Conversation turns (a child: it moves to the worker thread with this object and
        #: shares its store). ``provider_factory`` replaces the settings' provider in tests.
        self.turns = TurnWorker(lambda: self._store, self, provider_factory=provider_factory)

    @property
    def _store(self) -> RuntimeStore:
        # Created on first use, which is on the worker thread: even resolving the data folder
        # happens there.
        if self._store_instance is None:
            self._store_instance = RuntimeStore(self._data_dir)
        return self._store_instance

    def _check_thread(self, request: str) -> None:
        if QThread.currentThread() is not self.thread():
            raise RuntimeError(
                f"Worker.{request} was called directly from another thread; "
                "connect a signal to it so that Qt queues the call onto the worker thread."
            )

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
        self._opened(ProjectRef.from_info(info))

    @Slot(str)
    @_request
    def open_project(self, root: str) -> None:
        """Open an existing project folder; a folder without ``.crewagent.json`` is an error."""
        info = self._store.open_project(root)
        self.turns.add_project(info)
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
        """Start a conversation of type ``chat``, ``agent`` or ``run`` (its title comes later)."""
        if entry_type not in MODES:
            raise ValueError(f"Unknown conversation type {entry_type!r}; expected one of {MODES}")
        meta = self._store.create_conversation(project_id, entry_type=cast(Mode, entry_type))
        self.conversation_created.emit(project_id, ConversationSummary.from_meta(meta))

    def _emit_conversations(self, project_id: str) -> None:
        metas = self._store.list_conversations(project_id)
        self.conversations_loaded.emit(project_id, tuple(ConversationSummary.from_meta(meta) for meta in metas))
