"""``crewagent run`` and ``crewagent runs``: workflow runs from the command line (no Qt here).

``run`` starts a run of ``[PKG:]WORKFLOW`` or continues the conversation's active run, then runs
one Run-mode turn through the same core entry point as ``crewagent chat`` and the app. Without
``--conversation`` it continues the most recent conversation whose run of that workflow is not
complete (so a ``crewagent run`` killed halfway is finished by the next one), else it starts a
new conversation. Exit 0 when the turn ends completed or waiting for the user, 1 on a failure,
2 on bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from crewagent.cli_chat import headless_routed, terminal_provider
from crewagent.cli_output import listing_done
from crewagent.core.messages import ConversationMeta
from crewagent.core.packages import PackageStore, ensure_builtin_packages
from crewagent.core.runs import RunIndex, RunMetadata, RunSetupError
from crewagent.core.runs.conversation import CONTINUE_TEXT, START_TEXT, begin_run, live_phase
from crewagent.core.routing import route_input
from crewagent.core.runs.service import active_run, find_workflow, read_run_state
from crewagent.core.settings import SettingsStore
from crewagent.core.store import ProjectInfo, RuntimeStore

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def cmd_run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    data_dir = getattr(args, "data_dir", None)
    store = RuntimeStore(data_dir)
    settings = SettingsStore().load()
    if args.message is not None and not args.message.strip():
        raise ValueError("MESSAGE is empty; leave it out to start or continue the run.")
    ensure_builtin_packages(store.data_dir)
    packages = PackageStore(store.data_dir)
    wanted = find_workflow(packages, args.workflow) if args.workflow else None  # RunSetupError: exit 2
    project = store.open_project(args.project, create=True)
    # The provider first: a run that cannot reach a model creates no conversation and no run.
    async with terminal_provider(args, settings) as config:
        meta = _conversation(store, project, args, wanted)
        run = active_run(project, meta)
        started = False
        if wanted is not None and (run is None or not _same_workflow(run, *wanted) or run.phase == "completed"):
            package, workflow_id = wanted
            run = begin_run(store, project, meta.id, package, workflow_id, agent_id=args.agent)
            started = True
        if run is None:
            raise RunSetupError("This conversation has no workflow run; give --workflow [PKG:]WORKFLOW to start one.")
        if not started and meta.activeType != "run":
            store.update_conversation(project.id, meta.id, activeType="run")
        print(meta.id, file=sys.stderr)
        print(f"run {run.runId} ({run.packageId}:{run.workflowId}){' started' if started else ''}", file=sys.stderr, flush=True)
        text = args.message or (START_TEXT if started else CONTINUE_TEXT)
        routed = await asyncio.to_thread(route_input, store, project, meta.id, text, "run")  # /pause, /resume ...
        return await headless_routed(args, store, settings, project, meta.id, routed, config)


def _same_workflow(run: RunMetadata, package: Any, workflow_id: str) -> bool:
    return run.workflowId == workflow_id and run.packageName == package.name


def _conversation(
    store: RuntimeStore, project: ProjectInfo, args: argparse.Namespace, wanted: tuple[Any, str] | None
) -> ConversationMeta:
    if args.conversation:
        return store.get_conversation(project.id, args.conversation)
    if not args.new:
        runs = {run.runId: run for run in RunIndex(project.runtime_dir).list()}
        for meta in store.list_conversations(project.id):  # most recent first
            run = runs.get(meta.activeRunId or "")
            if run is None or run.phase == "completed":
                continue
            if wanted is None or _same_workflow(run, *wanted):
                return meta
        if wanted is None:
            raise RunSetupError("No conversation of this project has a run to continue; give --workflow to start one.")
    if wanted is None:
        raise RunSetupError("--new starts a run: give --workflow [PKG:]WORKFLOW.")
    package, workflow_id = wanted
    title = f"Run: {package.definition.workflow(workflow_id).display_name or workflow_id}"
    return store.create_conversation(project.id, title=title, entry_type="run")


def cmd_runs(args: argparse.Namespace) -> int:
    store = RuntimeStore(getattr(args, "data_dir", None))
    project = store.open_project(args.project, create=True)
    rows = [_row(store, project, run) for run in RunIndex(project.runtime_dir).list()]
    if listing_done(bool(getattr(args, "json", False)), rows, f"No runs in {project.root}."):
        return EXIT_OK
    print(f"{'RUN':<22} {'WORKFLOW':<32} {'PHASE':<13} {'NODE':<16} STEPS COMPLETED")
    for row in rows:
        workflow = f"{row['packageId']}:{row['workflowId']}"
        steps = ", ".join(row["stepsCompleted"]) or "-"
        print(f"{row['runId']:<22} {workflow:<32} {row['phase']:<13} {row['currentNodeId'] or '-':<16} {steps}")
    return EXIT_OK


def _row(store: RuntimeStore, project: ProjectInfo, run: RunMetadata) -> dict[str, Any]:
    """A run as listed: progress from its state file (the truth), the phase as it is now
    (core.runs.conversation.live_phase: a run whose turn died is ``idle`` and ``interrupted``)."""
    row = run.model_dump(mode="json")
    state = read_run_state(project, run)
    if state is not None:
        row["currentNodeId"] = state.current_node_id
        row["stepsCompleted"] = list(state.steps_completed)
    phase, interrupted = live_phase(store, project, run)
    if run.phase == "running" or (phase, interrupted) != (run.phase, False):  # a turn runs, or died
        row["phase"], row["interrupted"] = phase, interrupted
    return row
