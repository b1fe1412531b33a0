"""Runs on top of the installed packages: find a workflow, a conversation's active run, its driver."""

from __future__ import annotations

from typing import Any

from crewagent.core import texts
from crewagent.core.messages import ConversationMeta
from crewagent.core.packages import InstalledPackage, PackageNotFound, PackageStore
from crewagent.core.packages.schemas import SchemaKind, check
from crewagent.core.runs.create import RunSetupError, state_path
from crewagent.core.runs.engine import RunDriver, prepare_run
from crewagent.core.runs.index import RunIndex, RunMetadata, RunNotFound
from crewagent.core.runs.state import RunState, parse_state
from crewagent.core.store import ProjectInfo
from crewagent.core.tools.results import ToolFailure


def state_schema(data: dict[str, Any]) -> list[str]:
    """The workflow-frontmatter schema's problems with a state (``pointer: message``), [] when valid."""
    return [f"{problem.pointer or '/'}: {problem.message}" for problem in check(SchemaKind.WORKFLOW, data, "workflow.md")]


def find_workflow(packages: PackageStore, spec: str) -> tuple[InstalledPackage, str]:
    """``[PKG:]WF`` -> the package and workflow id; PKG is a package id or name (the newest version wins).

    Without PKG the workflow id is looked up in every package (a package's name also names its
    default workflow). Raises RunSetupError with what exists when nothing matches.
    """
    spec = spec.strip()
    wanted_package, _, workflow_id = spec.rpartition(":")
    installed = packages.list()
    if wanted_package:
        candidates = [p for p in installed if p.id == wanted_package] or [p for p in installed if p.name == wanted_package]
        if not candidates:
            raise RunSetupError(f"No installed package {wanted_package!r}; see `crewagent packages list`.")
    else:
        candidates = installed
    for package in sorted(candidates, key=lambda p: _version_key(p.version), reverse=True):
        if package.workflow(workflow_id) is not None:
            return package, workflow_id
        if package.name == workflow_id or package.id == workflow_id:
            return package, package.definition.default_workflow_id
    known = ", ".join(f"{p.id}:{w.id}" for p in candidates for w in p.workflows) or "none"
    raise RunSetupError(f"No workflow {spec!r} in the installed packages (known: {known}).")


def _version_key(version: str) -> tuple[Any, ...]:
    core = version.split("+")[0].split("-")[0]
    return tuple(int(part) if part.isdigit() else 0 for part in core.split("."))


def active_run(project: ProjectInfo, meta: ConversationMeta) -> RunMetadata | None:
    """The run a Run-mode turn of this conversation continues (the latest started in it), if any."""
    if not meta.activeRunId:
        return None
    try:
        return RunIndex(project.runtime_dir).get(meta.activeRunId)
    except RunNotFound:
        return None


def load_driver(project: ProjectInfo, run: RunMetadata, packages: PackageStore, *, start: bool = True) -> RunDriver:
    """The driver of a turn of ``run``, with the package version the run started with (blocking).

    ``start=False`` builds it only to look at the next request (the turn is not marked running).
    """
    try:
        package = packages.get(run.packageId)
    except PackageNotFound as exc:
        raise RunSetupError(
            texts.RUN_PACKAGE_GONE.format(run=run.runId, package=run.packageId)
        ) from exc
    try:
        return prepare_run(project, run, package, schema=state_schema, start=start)
    except ToolFailure as exc:
        raise RunSetupError(texts.RUN_PROBLEM.format(run=run.runId, detail=exc.message)) from exc


def read_run_state(project: ProjectInfo, run: RunMetadata) -> RunState | None:
    """The run's state as its file says now (None when the file is missing or damaged)."""
    try:
        return parse_state(state_path(project, run.runId).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ToolFailure):
        return None
