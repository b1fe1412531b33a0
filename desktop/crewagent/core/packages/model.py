"""A loaded workflow package as immutable values: manifest, workflows with their graphs, agents."""

from __future__ import annotations

import copy
import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from crewagent.core.agents import Agent

NodeType = Literal["step", "decision", "merge", "end", "subworkflow"]

#: Package ids are folder names under ``<data>/packages``: lower-case, portable on every OS.
PACKAGE_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._+-]{0,95}")
_UNSAFE = re.compile(r"[^a-z0-9._+-]+")


def package_id(name: str, version: str) -> str:
    """The folder name of ``name`` at ``version``: ``<slug>-<version>``, plus a short hash when the slug lost
    information (upper case, spaces, other scripts), so two different names never share a folder, even on
    a case-insensitive disk."""
    slug = _UNSAFE.sub("-", name.lower()).strip("-._+")[:60] or "package"
    safe_version = _UNSAFE.sub("-", version.lower()).strip("-._+")[:30] or "0"
    candidate = f"{slug}-{safe_version}"
    if slug != name or safe_version != version:
        digest = hashlib.sha256(f"{name}\0{version}".encode()).hexdigest()[:8]
        candidate = f"{candidate}-{digest}"
    return candidate


@dataclass(frozen=True)
class GraphNode:
    id: str
    type: NodeType
    #: The step file, relative to the package root (POSIX), whichever way the graph spelled it.
    file: str
    title: str = ""
    description: str = ""
    agent_id: str | None = None
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    label: str
    is_default: bool = False
    condition_text: str = ""


@dataclass(frozen=True)
class WorkflowGraph:
    """``workflow.graph.json``: the source of truth for transitions."""

    entry_node_id: str
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    _by_id: dict[str, GraphNode] = field(init=False, repr=False, compare=False)
    _out: dict[str, tuple[GraphEdge, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        out: dict[str, list[GraphEdge]] = {}
        for edge in self.edges:
            out.setdefault(edge.source, []).append(edge)
        object.__setattr__(self, "_by_id", {node.id: node for node in self.nodes})
        object.__setattr__(self, "_out", {key: tuple(value) for key, value in out.items()})

    def node(self, node_id: str) -> GraphNode | None:
        return self._by_id.get(node_id)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._by_id

    def outgoing(self, node_id: str) -> tuple[GraphEdge, ...]:
        """The edges leaving ``node_id``, in file order."""
        return self._out.get(node_id, ())

    def successors(self, node_id: str) -> tuple[str, ...]:
        """The ids a run may move to from ``node_id`` (file order, each once)."""
        return tuple(dict.fromkeys(edge.target for edge in self.outgoing(node_id)))

    def default_edge(self, node_id: str) -> GraphEdge | None:
        return next((edge for edge in self.outgoing(node_id) if edge.is_default), None)

    @property
    def end_node_ids(self) -> tuple[str, ...]:
        return tuple(node.id for node in self.nodes if node.type == "end")


@dataclass(frozen=True)
class Workflow:
    """One workflow of a package; every path is relative to the package root (POSIX)."""

    id: str
    display_name: str
    description: str
    tags: tuple[str, ...]
    #: The ``workflow.md`` template whose frontmatter becomes the run state.
    workflow_file: str
    graph_file: str
    graph: WorkflowGraph
    #: The template's frontmatter, as parsed (schema-valid). Shared: use ``new_state()`` to change it.
    state_template: dict[str, Any] = field(repr=False)

    def new_state(self) -> dict[str, Any]:
        """A private deep copy of the template's frontmatter, the start of a run's state."""
        return copy.deepcopy(self.state_template)

    def step_file(self, node_id: str) -> str:
        """The package-relative step file of ``node_id`` (KeyError for an unknown node)."""
        node = self.graph.node(node_id)
        if node is None:
            raise KeyError(node_id)
        return node.file


@dataclass(frozen=True)
class PackageDefinition:
    """Everything a valid package declares, independent of where it is stored."""

    name: str
    version: str
    description: str
    author: str
    manifest: dict[str, Any]
    workflows: tuple[Workflow, ...]
    #: The id of the workflow ``entry`` points at (the first one when it matches none).
    default_workflow_id: str
    agents_file: str
    agents: tuple[Agent, ...]

    @property
    def package_id(self) -> str:
        return package_id(self.name, self.version)

    def workflow(self, workflow_id: str) -> Workflow | None:
        return next((wf for wf in self.workflows if wf.id == workflow_id), None)

    def resolve_workflow_ref(self, ref: str) -> Workflow | None:
        """A menu item's ``workflow`` (or ``exec``) value: a workflow id, or the path of its ``workflow.md``
        (``@pkg/`` or ``./`` prefixes allowed)."""
        found = self.workflow(ref)
        if found is not None:
            return found
        path = normalize_ref(ref)
        return next((wf for wf in self.workflows if wf.workflow_file == path), None)

    def agent(self, agent_id: str) -> Agent | None:
        return next((agent for agent in self.agents if agent.id == agent_id), None)


def normalize_ref(ref: str) -> str | None:
    """A package-relative POSIX path from a reference, or None when it leaves the package."""
    text = ref.strip()
    for prefix in ("@pkg/", "./"):
        while text.startswith(prefix):
            text = text[len(prefix) :]
    if not text or "\\" in text or "\0" in text or text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        return None
    normal = posixpath.normpath(text)
    if normal == "." or normal == ".." or normal.startswith("../"):
        return None
    return normal


@dataclass(frozen=True)
class InstalledPackage:
    """A package installed under ``<data>/packages/<id>/`` (mounted read-only as ``@pkg``)."""

    id: str
    root: Path
    definition: PackageDefinition

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def version(self) -> str:
        return self.definition.version

    @property
    def workflows(self) -> tuple[Workflow, ...]:
        return self.definition.workflows

    @property
    def agents(self) -> tuple[Agent, ...]:
        return self.definition.agents

    def workflow(self, workflow_id: str) -> Workflow | None:
        return self.definition.workflow(workflow_id)

    def path(self, relative: str) -> Path:
        """The absolute path of a package-relative POSIX path."""
        return self.root.joinpath(*relative.split("/"))

    def step_path(self, workflow_id: str, node_id: str) -> Path:
        workflow = self.definition.workflow(workflow_id)
        if workflow is None:
            raise KeyError(workflow_id)
        return self.path(workflow.step_file(node_id))
