"""The runs of one conversation: start one in Run mode, pick one to resume, list them with their live phase.

One place for what ``crewagent run``, an agent's workflow menu item and the app's Workflow header
all do: a run is started with :func:`begin_run` (its state, its index entry, the conversation in
Run mode) and its first turn is sent :data:`START_TEXT`; a run that is not complete is made the
conversation's active run with :func:`select_run` and continued with :data:`CONTINUE_TEXT`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crewagent.core import texts
from crewagent.core.errors import RunSetupError
from crewagent.core.packages import PackageError, PackageNotFound, PackageStore
from crewagent.core.runs.create import create_run
from crewagent.core.runs.engine import running_marker
from crewagent.core.runs.index import RunIndex, RunMetadata, RunNotFound, RunPhase
from crewagent.core.runs.service import read_run_state
from crewagent.core.runs.types import PackageLike
from crewagent.core.store import ProjectInfo, RuntimeStore

#: The user message of a run's first turn, and of a turn that continues it (the model reads it as USER_INPUT).
START_TEXT, CONTINUE_TEXT = "start", "continue"


@dataclass(frozen=True, slots=True)
class RunOverview:
    """A run as a listing shows it: progress from its state file, the phase as it is now.

    ``package_installed`` is False when the package version the run started with is gone (it
    cannot go on until that package is imported again); ``interrupted`` when its last turn died.
    """

    run_id: str
    conversation_id: str
    package_id: str
    package_name: str
    package_version: str
    workflow_id: str
    workflow_name: str
    phase: RunPhase
    created_at: str
    current_node_id: str = ""
    steps_completed: tuple[str, ...] = ()
    package_installed: bool = True
    interrupted: bool = False

    @property
    def completed(self) -> bool:
        return self.phase == "completed"


def begin_run(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    package: PackageLike,
    workflow_id: str,
    *,
    agent_id: str | None = None,
) -> RunMetadata:
    """Start a run of ``workflow_id`` in the conversation and switch it to Run mode (blocking).

    A conversation still under its placeholder title is named after the workflow (its first user
    message is only "start"). Its first turn is the caller's, with :data:`START_TEXT` (or the
    user's own message).
    """
    run = create_run(store, project, conversation_id, package, workflow_id, agent_id=agent_id)
    changes: dict[str, Any] = {"activeType": "run"}
    if store.get_conversation(project.id, conversation_id).autoTitle:
        workflow = package.workflow(workflow_id)
        changes["title"] = f"Run: {(workflow.display_name if workflow is not None else '') or workflow_id}"
    store.update_conversation(project.id, conversation_id, **changes)
    return run


def select_run(store: RuntimeStore, project: ProjectInfo, conversation_id: str, run_id: str, packages: PackageStore) -> RunMetadata:
    """Make ``run_id`` the conversation's active run, in Run mode, to continue it (blocking).

    Raises RunSetupError, changing nothing, when the run is not this conversation's, is complete,
    or needs a package that is no longer installed.
    """
    try:
        run = RunIndex(project.runtime_dir).get(run_id)
    except RunNotFound as exc:
        raise RunSetupError(str(exc)) from exc
    if run.conversationId != conversation_id:
        raise RunSetupError(texts.RUN_OTHER_CONVERSATION.format(run=run_id))
    if run.phase == "completed":
        raise RunSetupError(texts.RUN_COMPLETE.format(run=run_id))
    if run.packageId not in packages.ids():
        raise RunSetupError(
            texts.RUN_PACKAGE_GONE.format(run=run_id, package=_package_label(run))
        )
    store.update_conversation(
        project.id, conversation_id, activeRunId=run.runId, workflowId=run.workflowId, packageId=run.packageId, activeType="run"
    )
    return run


def live_phase(store: RuntimeStore, project: ProjectInfo, run: RunMetadata) -> tuple[RunPhase, bool]:
    """The run's phase as it is now, and whether its last turn died (``interrupted``).

    A turn of the run leaves a marker while it runs: with the conversation's turn held by a
    process the run is ``running``; without, the turn died and the run is ``idle`` (the next turn
    resumes it).
    """
    if running_marker(project, run.runId).exists() or run.phase == "running":
        alive = store.is_turn_running(project.id, run.conversationId)
        return ("running" if alive else "idle"), not alive
    return run.phase, False


def conversation_runs(store: RuntimeStore, project: ProjectInfo, conversation_id: str, packages: PackageStore) -> tuple[RunOverview, ...]:
    """The runs started in the conversation, oldest first (blocking: reads the index and each state)."""
    runs = [run for run in RunIndex(project.runtime_dir).list() if run.conversationId == conversation_id]
    installed = set(packages.ids())
    return tuple(_overview(store, project, run, packages, run.packageId in installed) for run in runs)


def _overview(store: RuntimeStore, project: ProjectInfo, run: RunMetadata, packages: PackageStore, installed: bool) -> RunOverview:
    phase, interrupted = live_phase(store, project, run)
    state = read_run_state(project, run)
    workflow_name = run.workflowId
    if installed:
        try:
            workflow = packages.get(run.packageId).workflow(run.workflowId)
        except (PackageError, PackageNotFound):
            installed = False  # broken or removed meanwhile: the run cannot go on either
        else:
            workflow_name = (workflow.display_name if workflow is not None else "") or run.workflowId
    return RunOverview(
        run_id=run.runId,
        conversation_id=run.conversationId,
        package_id=run.packageId,
        package_name=run.packageName or run.packageId,
        package_version=run.packageVersion,
        workflow_id=run.workflowId,
        workflow_name=workflow_name,
        phase=phase,
        created_at=run.createdAt,
        current_node_id=state.current_node_id if state is not None else run.currentNodeId,
        steps_completed=state.steps_completed if state is not None else tuple(run.stepsCompleted),
        package_installed=installed,
        interrupted=interrupted,
    )


def _package_label(run: RunMetadata) -> str:
    return f"{run.packageName} {run.packageVersion}".strip() or run.packageId
