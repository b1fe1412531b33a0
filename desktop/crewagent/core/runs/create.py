"""create_run: a new run of a package's workflow in a conversation (its state file, index entry and meta)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from crewagent.core import paths, texts
from crewagent.core.errors import RunSetupError
from crewagent.core.messages import utc_now_iso
from crewagent.core.runs.index import RunIndex, RunMetadata
from crewagent.core.runs.types import PackageLike, WorkflowLike
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.tools import frontmatter

STATE_NAME = "workflow.md"
__all__ = ["RunSetupError", "create_run", "new_run_id", "run_agent_id", "state_path"]


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex[:16]}"


def state_path(project: ProjectInfo, run_id: str) -> Path:
    """Where a run's state lives on disk (``@state/runs/<runId>/workflow.md``)."""
    return paths.run_state_dir(paths.state_dir(project.runtime_dir), run_id) / STATE_NAME


def run_agent_id(package: PackageLike, workflow: WorkflowLike, wanted: str | None) -> str | None:
    """The run's agent: the one asked for if the package has it, else the entry node's, else the first."""
    ids = [agent.id for agent in package.agents]
    wanted = wanted.rsplit(":", 1)[-1] if wanted else None  # a catalog id is <packageId>:<agentId>
    if wanted and wanted in ids:
        return wanted
    entry = workflow.graph.node(workflow.graph.entry_node_id)
    if entry is not None and entry.agent_id in ids:
        return entry.agent_id
    return ids[0] if ids else None


def create_run(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    package: PackageLike,
    workflow_id: str,
    *,
    agent_id: str | None = None,
) -> RunMetadata:
    """Start a run of ``workflow_id``: copy its workflow.md into @state with a fresh state, record it.

    The state file is written first (atomically), then the runs index, then the conversation's
    meta: a crash in between leaves at most an unused state file behind.
    """
    workflow = package.workflow(workflow_id)
    if workflow is None:
        raise RunSetupError(texts.NO_SUCH_WORKFLOW.format(package=package.id, workflow=workflow_id))
    meta = store.get_conversation(project.id, conversation_id)  # raises ConversationNotFound
    template = package.root.joinpath(*workflow.workflow_file.split("/"))
    try:
        document = frontmatter.parse(template.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RunSetupError(f"{template} cannot be read: {exc}") from exc
    run_id = new_run_id()
    now = utc_now_iso()
    agent = run_agent_id(package, workflow, agent_id or meta.agentId)
    ref = f"{package.id}:{workflow.id}"
    variables = dict(document.data.get("variables") or {}) if isinstance(document.data.get("variables"), dict) else {}
    variables.pop("workflowStatus", None)
    state: dict[str, Any] = {
        **document.data,
        "currentNodeId": "",
        "stepsCompleted": [],
        "variables": variables,
        "decisionLog": [],
        "artifacts": [],
        "runId": run_id,
        "activeAgentId": agent or "",
        "workflowRef": ref,
        "updatedAt": now,
    }
    target = state_path(project, run_id)
    atomic_write_bytes(target, frontmatter.render(document, state).encode("utf-8"))
    project.artifacts_dir.mkdir(parents=True, exist_ok=True)
    run = RunMetadata(
        runId=run_id,
        conversationId=conversation_id,
        packageId=package.id,
        packageName=package.name,
        packageVersion=package.version,
        workflowId=workflow.id,
        workflowRef=ref,
        activeAgentId=agent,
        phase="idle",
        createdAt=now,
        updatedAt=now,
    )
    RunIndex(project.runtime_dir).add(run)
    entry = {"runId": run_id, "packageId": package.id, "workflowId": workflow.id, "createdAt": now}
    store.update_conversation(
        project.id,
        conversation_id,
        workflowRuns=[*(meta.workflowRuns or []), entry],
        activeRunId=run_id,
        workflowId=workflow.id,
        packageId=package.id,
    )
    return run
