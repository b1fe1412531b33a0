"""The run engine: the conversation's ToolLoop, given a run's context, guard and progress reporting.

There is no second loop. A :class:`RunDriver` is handed to the session in ``TurnSettings.run``:

- before every model call the session asks it for the persona and the :class:`RunContext` (the
  effective agent is the node's ``agentId``, else the run's agent, so the persona follows the
  node); the builder then sends history → ``RUN_DIRECTIVE`` → ``NODE_BRIEF`` → ``USER_INPUT``;
- it watches the loop's events: after every successful write of the state file it takes the
  state as written (a frontmatter patch reports it; any other write is read back) and yields a
  :class:`RunProgress`; a confirmed ``ui.ask_user`` confirmation after
  completion allows one state write;
- it maps the end of the turn: the model stopped calling tools → ``completed`` if the workflow is
  complete, else ``waiting_user``; and persists the run's phase.

Each turn starts from the state file on disk, never from memory alone, so a run resumes after
any crash from its log and its state file.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crewagent.core import paths
from crewagent.core.agents import Agent, agent_persona
from crewagent.core.context.prompts import Intent, RunContext, Transition
from crewagent.core.loop.events import LoopEvent, RunProgress, ToolCallFinished, TurnFinished
from crewagent.core.runs.create import state_path
from crewagent.core.runs.guard import StateGuard
from crewagent.core.runs.index import RunIndex, RunMetadata, RunPhase
from crewagent.core.runs.state import RunState, SchemaCheck, parse_state
from crewagent.core.runs.types import PackageLike, WorkflowLike
from crewagent.core.store import ProjectInfo
from crewagent.core.tools import frontmatter
from crewagent.core.tools.results import ToolFailure

log = logging.getLogger(__name__)

STATE_WRITERS = frozenset({"fs.apply_patch", "fs.write"})
#: The index entry's fields whose change makes the end of a turn rewrite the runs index.
STATUS_FIELDS = ("phase", "lastError", "paused")


class RunStateUnreadable(ToolFailure):
    """The run's state file is missing or damaged (reported as the turn's error)."""


@dataclass
class RunDriver:
    """One turn's view of a run (build one per turn with :func:`prepare_run`)."""

    project: ProjectInfo
    run: RunMetadata
    package: PackageLike
    workflow: WorkflowLike
    guard: StateGuard
    intent: Intent = "continue"
    state: RunState = field(default_factory=lambda: RunState("", ()))
    _personas: dict[str, str] = field(default_factory=dict)

    # -- reading the state ----------------------------------------------------------------

    @property
    def state_file(self) -> Path:
        return state_path(self.project, self.run.runId)

    def read_state(self) -> RunState:
        """Re-parse the state file (blocking)."""
        try:
            text = self.state_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise RunStateUnreadable("ENOENT", f"The state of run {self.run.runId} cannot be read: {exc}") from exc
        self.state = parse_state(text)
        return self.state

    @property
    def complete(self) -> bool:
        return self.state.is_complete(self.workflow.graph)

    # -- the context of the next call ---------------------------------------------------------

    def effective_agent(self) -> Agent | None:
        graph = self.workflow.graph
        node = graph.node(self.state.effective_node(graph))
        ids = [node.agent_id if node is not None else None, _str(self.state.data.get("activeAgentId")), self.run.activeAgentId]
        for agent_id in ids:
            found = next((a for a in self.package.agents if agent_id and a.id == agent_id), None)
            if found is not None:
                return found
        return self.package.agents[0] if self.package.agents else None

    def context(self) -> tuple[str | None, RunContext]:
        """The persona and the run blocks of the next model call, from the state as last read."""
        graph = self.workflow.graph
        agent = self.effective_agent()
        persona = None
        if agent is not None:
            persona = self._personas.get(agent.id)
            if persona is None:
                persona = self._personas[agent.id] = agent_persona(agent)
        node_id = self.state.effective_node(graph)
        node = graph.node(node_id)
        completed = self.complete
        outputs = node.outputs if node is not None else ()
        context = RunContext(
            run_id=self.run.runId,
            workflow_id=self.workflow.id,
            graph_path=self.workflow.graph_file,
            effective_agent_id=agent.id if agent is not None else "",
            current_node_id=None if completed else node_id,
            node_type=node.type if node is not None else "step",
            step_file=node.file if node is not None else None,
            intent=self.intent,
            outputs_map={output: f"@project/{output}" for output in outputs},
            allowed_next=tuple(Transition(e.target, e.label, e.is_default) for e in graph.outgoing(node_id)),
            completed=completed,
        )
        return persona, context

    # -- watching the loop --------------------------------------------------------------------

    async def drive(self, events: AsyncIterator[LoopEvent]) -> AsyncIterator[LoopEvent]:
        """The loop's events, with progress after state writes and the run's end of turn.

        While the turn runs, a marker file says so (``runs/<runId>.running``, made by
        :func:`prepare_run`: cheaper than rewriting the index, and left behind by a turn that
        died, so the next one resumes); the index gets the phase the turn ended in, once.
        """
        finished = False
        try:
            async for event in events:
                if isinstance(event, ToolCallFinished) and event.ok:
                    yield event
                    if self._wrote_state(event):
                        progress = await self._progress(event)
                        if progress is not None:
                            yield progress
                    elif self._confirmed(event):
                        self.guard.confirm_once()
                    continue
                if isinstance(event, TurnFinished):
                    finished = True
                    yield await self._finish(event)
                    continue
                yield event
        finally:
            if not finished:  # cancelled or closed early: the turn did not end here
                await self._set_phase("idle")

    def _wrote_state(self, event: ToolCallFinished) -> bool:
        return event.name in STATE_WRITERS and event.result.get("path") == self.guard.shown_path

    @staticmethod
    def _confirmed(event: ToolCallFinished) -> bool:
        if event.name != "ui.ask_user" or event.result.get("widgetType") != "confirmation":
            return False
        response = event.result.get("response")
        return isinstance(response, Mapping) and response.get("confirmed") is True

    async def _progress(self, event: ToolCallFinished) -> RunProgress | None:
        written = event.result.get("frontmatter")
        if event.name == "fs.apply_patch" and isinstance(written, dict):
            # A frontmatter patch reports the frontmatter it wrote: written by this process, under
            # the file's lock, atomically and fsync'd, after checking that the text reads back as
            # exactly this. Reading the file back would give the same state, one thread hop later.
            # It is JSON (the tool's result): jsonable copies it whole, several times faster than
            # copy.deepcopy, and shares nothing with the result the log keeps.
            state = self.state = RunState.of(frontmatter.jsonable(written))
        else:
            try:
                state = await asyncio.to_thread(self.read_state)
            except ToolFailure as exc:
                log.warning("run %s: state unreadable after a write: %s", self.run.runId, exc)
                return None
        # The runs index gets the progress at the end of the turn: the state file is the truth,
        # and `crewagent runs` reads it, so a write here would only cost time.
        return RunProgress(self.run.runId, state.current_node_id, state.steps_completed, self.complete)

    async def _finish(self, event: TurnFinished) -> TurnFinished:
        if event.reason == "completed":
            # Every write of the state goes through fs.write / fs.apply_patch and was re-read
            # after it (RunProgress): the state in memory is the file's.
            if self.complete:
                await self._set_phase("completed")
                return event
            await self._set_phase("waiting-user")
            return TurnFinished("waiting_user")
        if event.reason == "error":
            await self._set_phase("failed", event.error)
        elif event.reason == "stopped":
            await self._set_phase("idle")
        else:
            await self._set_phase("waiting-user")
        return event

    async def _set_phase(self, phase: RunPhase, error: Mapping[str, Any] | None = None) -> None:
        changes: dict[str, Any] = {
            "phase": phase,
            "lastError": dict(error) if error else None,
            "currentNodeId": self.state.current_node_id,
            "stepsCompleted": list(self.state.steps_completed),
        }
        if phase != "idle":
            changes["paused"] = False  # a turn of the run that ran on ends a /pause
        self.run = await asyncio.to_thread(self._end_turn, changes)

    def _end_turn(self, changes: dict[str, Any]) -> RunMetadata:
        # The index is rewritten only when the run's status changes (phase, error, /pause): the
        # progress in it is a copy, refreshed along with the status, while the state file is the
        # truth that every reader re-reads (`crewagent runs`, the Run workspace). A turn that only
        # moved the run on does not pay an atomic replace of the index for that copy (about 3 ms
        # on a busy disk even unsynced: ext4 starts writing a file renamed over another).
        if _status_changes(self.run, changes):
            self.run = self._index().update(self.run.runId, **changes)
        running_marker(self.project, self.run.runId).unlink(missing_ok=True)
        return self.run

    def _index(self) -> RunIndex:
        return RunIndex(self.project.runtime_dir)


def prepare_run(
    project: ProjectInfo,
    run: RunMetadata,
    package: PackageLike,
    *,
    schema: SchemaCheck | None = None,
    start: bool = True,
) -> RunDriver:
    """The driver of one turn of ``run``, about to start (blocking: reads the state, marks the turn running).

    ``start=False``: only to look (``crewagent context``), the turn is not marked running.
    """
    workflow = package.workflow(run.workflowId)
    if workflow is None:
        raise RunStateUnreadable("ENOENT", f"The package {package.id} no longer has the workflow {run.workflowId!r}.")
    guard = StateGuard(run.runId, workflow.graph, schema=schema)
    driver = RunDriver(project, run, package, workflow, guard)
    state = driver.read_state()
    marker = running_marker(project, run.runId)
    # The turn begins: the marker is made (removed when it ends; see RunDriver.drive). Making it
    # says at once whether it was there, left by a turn that died.
    died = _make_marker(marker) if start else marker.exists()
    if run.phase in ("running", "failed") or died:
        driver.intent = "resume"  # the last turn died or failed
    elif not state.current_node_id and not state.steps_completed and run.phase == "idle":
        driver.intent = "start"
    return driver


def _make_marker(marker: Path) -> bool:
    """Create ``marker``; True when it existed already."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        try:
            fd = os.open(marker, flags, 0o644)
        except FileNotFoundError:  # no runs folder yet
            marker.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(marker, flags, 0o644)
    except FileExistsError:
        return True
    os.close(fd)
    return False


def running_marker(project: ProjectInfo, run_id: str) -> Path:
    """Exists while a turn of the run runs, and after a turn that died (``runs/<runId>.running``)."""
    return paths.runs_dir(project.runtime_dir) / f"{run_id}.running"


def _status_changes(run: RunMetadata, changes: Mapping[str, Any]) -> bool:
    """Whether ``changes`` change the run's phase, error or pause (a run never paused has no ``paused``: False)."""
    current = run.model_dump()
    for key in STATUS_FIELDS:
        if key not in changes:
            continue
        old, new = current.get(key), changes[key]
        if key == "paused":
            old, new = bool(old), bool(new)
        if old != new:
            return True
    return False


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
