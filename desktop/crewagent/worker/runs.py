"""The Run workspace's reads: a conversation's active run as a snapshot with its graph laid out, off the GUI thread.

:class:`RunLoader` lives with the Worker (its calls come on the worker thread) and runs the reads
in the Worker's background pool: the state file, the audit log, and the grandalf layout of the
graph, which is computed once per package workflow and kept. Requests for a conversation whose
read is under way are folded into one more read after it, so a burst of state writes or file
events costs two reads, not one per event.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from crewagent.core.errors import CrewAgentError
from crewagent.core.packages import PackageStore
from crewagent.core.runs.layout import GraphLayout, layout_graph
from crewagent.core.runs.service import active_run
from crewagent.core.runs.snapshot import RunSnapshot, layout_edges, snapshot_of
from crewagent.core.store import ProjectInfo, RuntimeStore


@dataclass(frozen=True, slots=True)
class LoadedRun:
    """The answer to ``load_run``: the conversation's active run, or ``snapshot`` None when it has none."""

    project_id: str
    conversation_id: str
    snapshot: RunSnapshot | None
    #: The graph laid out (the same object for every snapshot of one package workflow).
    layout: GraphLayout | None = None
    #: Why the run could not be read at all ("" when it could, or when there is none).
    problem: str = ""
    #: ``time.monotonic()`` when the read began (0.0: not known). The panel re-applies the engine's
    #: progress that arrived after it: a read begun before a state write must not show the older state.
    read_at: float = 0.0


#: Submits ``job`` to the background pool; ``done(result)`` runs on the worker thread.
Submit = Callable[[str, Callable[[], "LoadedRun | BaseException"], Callable[["LoadedRun | BaseException"], None]], None]


class RunLoader:
    """Reads runs for the Run workspace (see the module docstring)."""

    def __init__(self, store: Callable[[], RuntimeStore], packages: Callable[[], PackageStore], submit: Submit, emit: Callable[[LoadedRun], None]):
        self._store = store
        self._packages = packages
        self._submit = submit
        self._emit = emit
        #: conversation id -> True when another read was asked for while one runs.
        self._busy: dict[str, bool] = {}
        self._layouts: dict[tuple[str, str, tuple[object, ...]], GraphLayout] = {}
        self._layouts_lock = threading.Lock()

    def request(self, project: ProjectInfo, conversation_id: str) -> None:
        """Read the conversation's run (on the worker thread; the answer comes through ``emit``)."""
        if conversation_id in self._busy:
            self._busy[conversation_id] = True
            return
        self._busy[conversation_id] = False

        def job() -> LoadedRun | BaseException:
            began = time.monotonic()
            try:
                return dataclasses.replace(self.read(project, conversation_id), read_at=began)
            except CrewAgentError as exc:  # the conversation was deleted meanwhile, a damaged index
                return LoadedRun(project.id, conversation_id, None, problem=str(exc))
            except Exception as exc:  # a bug: raised again on the worker thread, after the bookkeeping
                return exc

        def done(loaded: LoadedRun | BaseException) -> None:
            again = self._busy.pop(conversation_id, False)
            if isinstance(loaded, BaseException):
                raise loaded
            self._emit(loaded)
            if again:
                self.request(project, conversation_id)

        self._submit("load_run", job, done)

    def read(self, project: ProjectInfo, conversation_id: str) -> LoadedRun:
        """The conversation's run, read now (blocking)."""
        meta = self._store().get_conversation(project.id, conversation_id)
        run = active_run(project, meta)
        if run is None:
            return LoadedRun(project.id, conversation_id, None)
        snapshot = snapshot_of(project, run, self._packages())
        return LoadedRun(project.id, conversation_id, snapshot, self.layout(snapshot))

    def layout(self, snapshot: RunSnapshot) -> GraphLayout | None:
        """The laid-out graph of the snapshot's workflow (computed once per package workflow)."""
        if not snapshot.steps:
            return None
        edges = tuple(layout_edges(snapshot))
        key = (snapshot.package_id, snapshot.workflow_id, (tuple(s.node_id for s in snapshot.steps), edges))
        with self._layouts_lock:
            found = self._layouts.get(key)
        if found is None:
            found = layout_graph([s.node_id for s in snapshot.steps], edges, roots=[snapshot.entry_node_id])
            with self._layouts_lock:
                self._layouts[key] = found
        return found
