"""What the Run workspace shows of a run, as immutable values read from disk (blocking; no Qt).

A :class:`RunSnapshot` is built from the run's index entry, its package's graph, its state file
and its audit log:

- the steps in graph order (breadth-first from the entry node, edges in file order, then the
  nodes no edge reaches, in file order), each ``completed``, ``current`` or ``pending``;
- the decision log, the graph's nodes and edges, the artifacts (the state's ``artifacts[]`` and
  every node's declared outputs) and the tool calls of the audit log.

Nothing here raises for a damaged file: a state that is not YAML gives ``problem`` and the steps
as the index last saw them; a damaged audit line is skipped.
"""

from __future__ import annotations

import json
import posixpath
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from crewagent.core import paths
from crewagent.core.packages import InstalledPackage, PackageError, PackageNotFound, PackageStore
from crewagent.core.packages.model import Workflow, WorkflowGraph
from crewagent.core.runs.create import state_path
from crewagent.core.runs.index import RunMetadata
from crewagent.core.runs.state import RunState, parse_state
from crewagent.core.store import ProjectInfo
from crewagent.core.tools.audit import audit_path, read_audit
from crewagent.core.tools.results import ToolFailure

StepStatus = Literal["completed", "current", "pending"]
#: Characters of a tool call's arguments in the table (the details show them all).
SHORT_ARGS_CHARS = 80
#: The newest tool calls a snapshot keeps (a run's audit can grow without bound).
MAX_TOOL_CALLS = 5000


@dataclass(frozen=True, slots=True)
class StepView:
    """One node of the workflow, as the Progress tab lists it."""

    node_id: str
    title: str
    type: str
    agent_id: str
    status: StepStatus
    #: The node's step file, absolute ("" when the package is gone).
    step_file: str = ""
    description: str = ""
    #: The agent's display name in the package ("" when the package has no such agent).
    agent_name: str = ""


@dataclass(frozen=True, slots=True)
class EdgeView:
    source: str
    target: str
    label: str
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """A ``decisionLog`` entry: the run left ``source`` for ``target`` by the edge ``label``."""

    source: str
    target: str
    label: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ArtifactView:
    """A file the run wrote or declared: its path as written (``artifacts/brief.md``), where it is."""

    path: str
    #: Absolute path in the project ("" when the path leaves the project).
    absolute: str
    #: ``state`` (in ``artifacts[]``) or the id of the node that declares it as an output.
    source: str
    exists: bool


@dataclass(frozen=True, slots=True)
class ToolCallView:
    """One audit line of the run."""

    ts: str
    tool: str
    call_id: str
    #: The arguments as compact JSON (already truncated by the audit).
    arguments: str
    ok: bool
    error_code: str
    duration_ms: float
    approval: str = ""

    @property
    def short_arguments(self) -> str:
        text = self.arguments
        return text if len(text) <= SHORT_ARGS_CHARS else text[: SHORT_ARGS_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    run_id: str
    conversation_id: str
    package_id: str
    package_name: str
    package_version: str
    workflow_id: str
    workflow_name: str
    phase: str
    current_node_id: str
    complete: bool
    steps: tuple[StepView, ...]
    edges: tuple[EdgeView, ...]
    decisions: tuple[Decision, ...]
    artifacts: tuple[ArtifactView, ...]
    tool_calls: tuple[ToolCallView, ...]
    state_file: str
    audit_file: str
    entry_node_id: str = ""
    #: Why part of the run could not be read (package gone, damaged state), "" when all is well.
    problem: str = ""

    def step(self, node_id: str) -> StepView | None:
        return next((step for step in self.steps if step.node_id == node_id), None)


# -- building a snapshot ---------------------------------------------------------------------------


def graph_order(graph: WorkflowGraph) -> list[str]:
    """Node ids breadth-first from the entry node (edges in file order), then the unreached ones."""
    order: dict[str, None] = {}
    queue = deque([graph.entry_node_id] if graph.entry_node_id in graph else [])
    while queue:
        node_id = queue.popleft()
        if node_id in order:
            continue
        order[node_id] = None
        queue.extend(target for target in graph.successors(node_id) if target not in order and target in graph)
    for node in graph.nodes:
        order.setdefault(node.id, None)
    return list(order)


def step_statuses(graph: WorkflowGraph, state: RunState) -> dict[str, StepStatus]:
    """``current`` for the node the run is on (none once complete), ``completed`` for the done ones."""
    current = "" if state.is_complete(graph) else state.effective_node(graph)
    return _statuses([node.id for node in graph.nodes], current, state.steps_completed)


def _statuses(node_ids: Iterable[str], current: str, completed: Iterable[str]) -> dict[str, StepStatus]:
    done = set(completed)
    return {node_id: "current" if node_id == current else "completed" if node_id in done else "pending" for node_id in node_ids}


def with_progress(snapshot: RunSnapshot, current_node_id: str, steps_completed: Sequence[str], complete: bool) -> RunSnapshot:
    """The snapshot after a state write the engine reported (``RunProgress``), without reading the disk."""
    current = "" if complete else (current_node_id or snapshot.entry_node_id)
    statuses = _statuses([step.node_id for step in snapshot.steps], current, steps_completed)
    steps = tuple(replace(step, status=statuses[step.node_id]) for step in snapshot.steps)
    return replace(snapshot, steps=steps, current_node_id=current_node_id, complete=complete)


def build_snapshot(
    project: ProjectInfo,
    run: RunMetadata,
    package: InstalledPackage | None,
    *,
    state_text: str | None = None,
    problem: str = "",
) -> RunSnapshot:
    """The snapshot of ``run`` (reads the state file unless ``state_text`` is given, and the audit)."""
    state_file = state_path(project, run.runId)
    audit_file = audit_path(paths.state_dir(project.runtime_dir), run_id=run.runId)
    state = RunState(run.currentNodeId, tuple(run.stepsCompleted))
    if state_text is None:
        try:
            state_text = state_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem = problem or f"The run's state file cannot be read: {exc}"
    if state_text is not None:
        try:
            state = parse_state(state_text)
        except ToolFailure as exc:
            problem = problem or f"The run's state file is damaged: {exc.message}"
    workflow = package.workflow(run.workflowId) if package is not None else None
    if package is not None and workflow is None:
        problem = problem or f"The package {package.id} no longer has the workflow {run.workflowId!r}."
    steps: tuple[StepView, ...] = ()
    edges: tuple[EdgeView, ...] = ()
    complete = False
    entry = ""
    if workflow is not None and package is not None:
        graph = workflow.graph
        complete = state.is_complete(graph)
        statuses = step_statuses(graph, state)
        steps = tuple(_step(package, graph, node_id, statuses[node_id]) for node_id in graph_order(graph))
        edges = tuple(EdgeView(e.source, e.target, e.label, e.is_default) for e in graph.edges)
        entry = graph.entry_node_id
    return RunSnapshot(
        run_id=run.runId,
        conversation_id=run.conversationId,
        package_id=run.packageId,
        package_name=run.packageName or (package.name if package else ""),
        package_version=run.packageVersion or (package.version if package else ""),
        workflow_id=run.workflowId,
        workflow_name=(workflow.display_name or workflow.id) if workflow is not None else run.workflowId,
        phase=run.phase,
        current_node_id=state.current_node_id,
        complete=complete,
        steps=steps,
        edges=edges,
        decisions=decisions_of(state.data.get("decisionLog")),
        artifacts=artifacts_of(project.root, state.data.get("artifacts"), workflow),
        tool_calls=tool_calls_of(read_audit(audit_file)),
        state_file=str(state_file),
        audit_file=str(audit_file),
        entry_node_id=entry,
        problem=problem,
    )


def _step(package: InstalledPackage, graph: WorkflowGraph, node_id: str, status: StepStatus) -> StepView:
    node = graph.node(node_id)
    assert node is not None  # graph_order lists the graph's nodes only
    return StepView(
        node_id=node.id,
        title=node.title or node.id,
        type=node.type,
        agent_id=node.agent_id or "",
        status=status,
        step_file=str(package.path(node.file)),
        description=node.description,
        agent_name=agent.metadata.name if (agent := package.definition.agent(node.agent_id or "")) is not None else "",
    )


def decisions_of(value: Any) -> tuple[Decision, ...]:
    """The well-formed entries of a ``decisionLog`` (the model writes it: anything else is skipped)."""
    if not isinstance(value, list):
        return ()
    return tuple(
        Decision(str(entry["from"]), str(entry["to"]), str(entry.get("label", "")), str(entry.get("reason") or ""))
        for entry in value
        if isinstance(entry, Mapping) and isinstance(entry.get("from"), str) and isinstance(entry.get("to"), str)
    )


def artifacts_of(root: Path, declared: Any, workflow: Workflow | None) -> tuple[ArtifactView, ...]:
    """``artifacts[]`` of the state, then every node's outputs not listed there (each path once)."""
    entries: dict[str, str] = {}
    for item in declared if isinstance(declared, list) else []:
        if isinstance(item, str) and item.strip():
            entries.setdefault(_relative(item), "state")
    if workflow is not None:
        for node in workflow.graph.nodes:
            for output in node.outputs:
                entries.setdefault(_relative(output), node.id)
    artifacts = []
    for relative, source in entries.items():
        absolute = _inside(root, relative)
        artifacts.append(ArtifactView(relative, str(absolute) if absolute else "", source, bool(absolute and absolute.is_file())))
    return tuple(artifacts)


def _relative(path: str) -> str:
    text = path.strip().replace("\\", "/")
    for prefix in ("@project/", "./"):
        while text.startswith(prefix):
            text = text[len(prefix) :]
    return text


def _inside(root: Path, relative: str) -> Path | None:
    """The file in the project, or None when the path leaves it (absolute, ``..``)."""
    normal = posixpath.normpath(relative) if relative else ""
    if not normal or normal.startswith(("/", "../")) or normal == ".." or ":" in normal.split("/")[0]:
        return None
    return root.joinpath(*normal.split("/"))


def tool_calls_of(records: Iterable[Mapping[str, Any]], limit: int = MAX_TOOL_CALLS) -> tuple[ToolCallView, ...]:
    """Audit records as table rows (the newest ``limit``); a record without a tool name is skipped."""
    rows = []
    for record in records:
        tool = record.get("tool")
        if not isinstance(tool, str) or not tool:
            continue
        duration = record.get("durationMs")
        rows.append(
            ToolCallView(
                ts=str(record.get("ts") or ""),
                tool=tool,
                call_id=str(record.get("callId") or ""),
                arguments=json.dumps(record.get("args", {}), ensure_ascii=False, separators=(",", ":"), default=str),
                ok=record.get("ok") is True,
                error_code=str(record.get("errorCode") or ""),
                duration_ms=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else 0.0,
                approval=str(record.get("approval") or ""),
            )
        )
    return tuple(rows[-limit:])


# -- a conversation's run --------------------------------------------------------------------------


def snapshot_of(project: ProjectInfo, run: RunMetadata, packages: PackageStore) -> RunSnapshot:
    """The snapshot of ``run`` with the package version it started with (blocking)."""
    try:
        package: InstalledPackage | None = packages.get(run.packageId)
        problem = ""
    except (PackageNotFound, PackageError) as exc:
        package = None
        problem = f"The package {run.packageId} is not installed ({exc})."
    return build_snapshot(project, run, package, problem=problem)


def layout_edges(snapshot: RunSnapshot) -> Sequence[tuple[str, str, str, bool]]:
    """The snapshot's edges in the shape :func:`crewagent.core.runs.layout.layout_graph` takes."""
    return [(e.source, e.target, e.label, e.is_default) for e in snapshot.edges]
