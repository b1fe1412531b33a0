"""Read a package source, check every file against the schemas and every reference, and build its values.

All problems are collected (file + JSON pointer each) and raised together; a package is only
built when there are none. The same code checks a package before it is installed and loads an
installed one, so what was installed is what is used.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from crewagent.core import texts
from crewagent.core.agents import Agent
from crewagent.core.packages.archive import PackageSource
from crewagent.core.packages.model import (
    GraphEdge,
    GraphNode,
    PackageDefinition,
    Workflow,
    WorkflowGraph,
    normalize_ref,
)
from crewagent.core.packages.problems import PackageError, Problem, pointer
from crewagent.core.packages.schemas import SchemaKind, check
from crewagent.core.tools import frontmatter

MANIFEST = "bmad.json"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
_UNSUPPORTED_CLASSIC = texts.PKG_CLASSIC


@dataclass
class _Reading:
    """The files of one source, parsed once, and the problems found so far."""

    source: PackageSource
    problems: list[Problem] = field(default_factory=list)
    json_cache: dict[str, Any] = field(default_factory=dict)
    md_cache: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def add(self, file: str, at: str, message: str) -> None:
        self.problems.append(Problem(file, at, message))

    def _text(self, name: str) -> str | None:
        try:
            return self.source.read(name).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(name, "", texts.PKG_NOT_UTF8.format(byte=exc.start))
            return None

    def json(self, name: str, kind: SchemaKind) -> Any:
        """The document, schema-checked (problems recorded); None when it could not be parsed."""
        if name in self.json_cache:
            return self.json_cache[name]
        value: Any = None
        text = self._text(name)
        if text is not None:
            try:
                value = json.loads(text)
            except ValueError as exc:
                self.add(name, "", texts.PKG_NOT_JSON.format(detail=exc))
            else:
                self.problems.extend(check(kind, value, name))
        self.json_cache[name] = value
        return value

    def frontmatter(self, name: str, kind: SchemaKind) -> dict[str, Any] | None:
        if name in self.md_cache:
            return self.md_cache[name]
        data: dict[str, Any] | None = None
        text = self._text(name)
        if text is not None:
            try:
                document = frontmatter.parse(text)
            except frontmatter.FrontmatterError as exc:
                self.add(name, "", exc.message)
            else:
                if not document.had_frontmatter:
                    self.add(name, "", texts.PKG_NO_FRONTMATTER)
                else:
                    data = frontmatter.jsonable(document.data)
                    self.problems.extend(check(kind, data, name))
        self.md_cache[name] = data
        return data

    def ref(self, value: Any, file: str, at: str, what: str) -> str | None:
        """A path named by ``file`` at ``at``, resolved and present in the package (else a problem)."""
        if not isinstance(value, str):
            return None  # the schema already said so
        path = normalize_ref(value)
        if path is None:
            self.add(file, at, texts.PKG_BAD_PATH.format(value=value))
        elif not self.source.has(path):
            self.add(file, at, texts.PKG_MISSING_FILE.format(what=what, value=value))
            return None
        return path


def load_definition(source: PackageSource) -> PackageDefinition:
    """Check everything in ``source``; the package's values, or PackageError with every problem."""
    reading = _Reading(source)
    if not source.has(MANIFEST):
        if any(posixpath.basename(name) == "workflow.yaml" for name in source.files()):
            raise PackageError.single("workflow.yaml", _UNSUPPORTED_CLASSIC, source=source.label)
        raise PackageError.single(MANIFEST, texts.PKG_NO_MANIFEST, source=source.label)
    manifest = reading.json(MANIFEST, SchemaKind.MANIFEST)
    if not isinstance(manifest, dict):
        raise PackageError(reading.problems, source=source.label)
    entry: dict[str, Any] = manifest["entry"] if isinstance(manifest.get("entry"), dict) else {}
    agents_file = reading.ref(entry.get("agents"), MANIFEST, pointer("entry", "agents"), texts.PKG_AGENTS_FILE)
    agents_doc = reading.json(agents_file, SchemaKind.AGENTS) if agents_file else None
    agent_ids = _agent_ids(reading, agents_file, agents_doc)

    declared = [(i, item) for i, item in enumerate(manifest.get("workflows") or []) if isinstance(item, dict)]
    slots: list[tuple[str, dict[str, Any]]] = [(pointer("workflows", i), item) for i, item in declared]
    entry_slot = (pointer("entry"), entry)
    workflows: list[Workflow] = []
    checked: set[tuple[str | None, str | None]] = set()
    default_id: str | None = None
    for at, item in ([*slots, entry_slot] if slots else [entry_slot]):
        is_entry = at == entry_slot[0]
        workflow_path = reading.ref(item.get("workflow"), MANIFEST, f"{at}/workflow", texts.PKG_WORKFLOW_FILE)
        graph_path = reading.ref(item.get("graph"), MANIFEST, f"{at}/graph", texts.PKG_GRAPH_FILE)
        pair = (workflow_path, graph_path)
        if is_entry and slots and pair in checked:
            continue  # entry names one of the listed workflows (the Builder's way)
        checked.add(pair)
        built = _workflow(reading, at, item, workflow_path, graph_path, agent_ids)
        if built is not None and not (is_entry and slots):
            workflows.append(built)
        if built is not None and is_entry:
            default_id = built.id
    if slots:
        entry_pair = (
            normalize_ref(entry.get("workflow", "")) if isinstance(entry.get("workflow"), str) else None,
            normalize_ref(entry.get("graph", "")) if isinstance(entry.get("graph"), str) else None,
        )
        default_id = next(
            (wf.id for wf in workflows if (wf.workflow_file, wf.graph_file) == entry_pair), default_id
        )
    _check_unique_workflow_ids(reading, slots)
    _check_transitions(reading, workflows)
    _check_orphan_steps(reading, workflows)
    definition_workflows = tuple(workflows)
    agents = _app_agents(reading, agents_file, agents_doc)
    if agents_file and isinstance(agents_doc, dict) and len(workflows) == (len(slots) or 1):
        # Only when every workflow loaded: otherwise an item naming a broken one would be reported twice.
        _check_menus(reading, agents_file, agents_doc, definition_workflows)
    if reading.problems:
        raise PackageError(_ordered(reading.problems), source=source.label)
    assert agents_file is not None and workflows
    return PackageDefinition(
        name=manifest["name"],
        version=manifest["version"],
        description=manifest.get("description", ""),
        author=manifest.get("author", ""),
        manifest=manifest,
        workflows=definition_workflows,
        default_workflow_id=default_id if default_id in {wf.id for wf in workflows} else workflows[0].id,
        agents_file=agents_file,
        agents=agents,
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _ordered(problems: Iterable[Problem]) -> list[Problem]:
    """Each problem once, in the order found (files in reading order, fields as in the file)."""
    return list(dict.fromkeys(problems))


def _agent_ids(reading: _Reading, agents_file: str | None, document: Any) -> set[str] | None:
    """The ids agents.json declares (duplicates reported); None when the file is unusable (no agent checks)."""
    if not agents_file or not isinstance(document, dict) or any(p.file == agents_file for p in reading.problems):
        return None  # agents.json itself is broken: checking references against it would only add noise
    ids: set[str] = set()
    for index, agent in enumerate(document["agents"]):
        agent_id = agent.get("id") if isinstance(agent, dict) else None
        if not isinstance(agent_id, str):
            continue
        if agent_id in ids:
            reading.add(agents_file, pointer("agents", index, "id"), texts.PKG_AGENT_TWICE.format(value=agent_id))
        ids.add(agent_id)
    return ids


def _check_agent(reading: _Reading, agent_ids: set[str] | None, value: Any, file: str, at: str) -> None:
    if agent_ids is not None and isinstance(value, str) and value and value not in agent_ids:
        reading.add(file, at, texts.PKG_AGENT_UNKNOWN.format(value=value))


def _workflow(
    reading: _Reading,
    at: str,
    item: dict[str, Any],
    workflow_path: str | None,
    graph_path: str | None,
    agent_ids: set[str] | None,
) -> Workflow | None:
    state = reading.frontmatter(workflow_path, SchemaKind.WORKFLOW) if workflow_path else None
    graph = _graph(reading, graph_path, agent_ids) if graph_path else None
    if graph is not None and state is not None and workflow_path:
        current = state.get("currentNodeId")
        if isinstance(current, str) and current and current not in graph:
            reading.add(workflow_path, pointer("currentNodeId"), texts.PKG_NOT_A_NODE.format(value=current, graph=graph_path))
        for index, done in enumerate(_list(state.get("stepsCompleted"))):
            if isinstance(done, str) and done not in graph:
                reading.add(workflow_path, pointer("stepsCompleted", index), texts.PKG_NOT_A_NODE.format(value=done, graph=graph_path))
    if state is None or graph is None or workflow_path is None or graph_path is None:
        return None
    workflow_id = item.get("id")
    if not isinstance(workflow_id, str):
        # A single-workflow package without workflows[]: its id is the template's workflowType.
        kind = state.get("workflowType")
        workflow_id = kind if isinstance(kind, str) and _ID.fullmatch(kind) else "main"
    return Workflow(
        id=workflow_id,
        display_name=item.get("displayName") or workflow_id,
        description=item.get("description", ""),
        tags=tuple(item.get("tags") or ()),
        workflow_file=workflow_path,
        graph_file=graph_path,
        graph=graph,
        state_template=state,
    )


def _graph(reading: _Reading, graph_path: str, agent_ids: set[str] | None) -> WorkflowGraph | None:
    document = reading.json(graph_path, SchemaKind.GRAPH)
    if not isinstance(document, dict):
        return None
    ok = not any(problem.file == graph_path for problem in reading.problems)
    raw_nodes = _list(document.get("nodes"))
    raw_edges = _list(document.get("edges"))
    graph_dir = posixpath.dirname(graph_path)
    nodes: list[GraphNode] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_nodes):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            continue
        node_id = raw["id"]
        if node_id in seen:
            reading.add(graph_path, pointer("nodes", index, "id"), texts.PKG_NODE_TWICE.format(value=node_id))
            ok = False
        seen.add(node_id)
        _check_agent(reading, agent_ids, raw.get("agentId"), graph_path, pointer("nodes", index, "agentId"))
        step_file = _step_file(reading, raw.get("file"), graph_path, graph_dir, pointer("nodes", index, "file"))
        if step_file is None:
            ok = False
            continue
        step = reading.frontmatter(step_file, SchemaKind.STEP)
        if step is not None:
            _check_step(reading, step_file, step, raw, agent_ids)
        nodes.append(
            GraphNode(
                id=node_id,
                type=raw.get("type", "step"),
                file=step_file,
                title=raw.get("title", ""),
                description=raw.get("description", ""),
                agent_id=raw.get("agentId") or None,
                inputs=tuple(raw.get("inputs") or ()),
                outputs=tuple(raw.get("outputs") or ()),
            )
        )
    entry = document.get("entryNodeId")
    if isinstance(entry, str) and entry not in seen:
        reading.add(graph_path, pointer("entryNodeId"), texts.PKG_ENTRY_UNKNOWN.format(value=entry))
        ok = False
    edges: list[GraphEdge] = []
    defaults: set[str] = set()
    for index, raw in enumerate(raw_edges):
        if not isinstance(raw, dict):
            continue
        for end in ("from", "to"):
            value = raw.get(end)
            if isinstance(value, str) and value not in seen:
                reading.add(graph_path, pointer("edges", index, end), texts.PKG_EDGE_UNKNOWN.format(end=end, value=value))
                ok = False
        source = raw.get("from")
        if raw.get("isDefault") is True and isinstance(source, str):
            if source in defaults:
                reading.add(graph_path, pointer("edges", index, "isDefault"), texts.PKG_TWO_DEFAULTS.format(value=source))
                ok = False
            defaults.add(source)
        if isinstance(source, str) and isinstance(raw.get("to"), str) and isinstance(raw.get("label"), str):
            edges.append(
                GraphEdge(source, raw["to"], raw["label"], raw.get("isDefault") is True, raw.get("conditionText", ""))
            )
    if not ok or not isinstance(entry, str):
        return None
    return WorkflowGraph(entry_node_id=entry, nodes=tuple(nodes), edges=tuple(edges))


def _step_file(reading: _Reading, value: Any, graph_path: str, graph_dir: str, at: str) -> str | None:
    """A node's file: relative to the package root (the Builder's way), else to the graph's folder."""
    if not isinstance(value, str):
        return None
    path = normalize_ref(value)
    if path is None:
        reading.add(graph_path, at, texts.PKG_BAD_PATH.format(value=value))
        return None
    if reading.source.has(path):
        return path
    beside = normalize_ref(posixpath.join(graph_dir, path)) if graph_dir else None
    if beside is not None and reading.source.has(beside):
        return beside
    reading.add(graph_path, at, texts.PKG_STEP_MISSING.format(value=value))
    return None


def _check_step(
    reading: _Reading, step_file: str, step: dict[str, Any], node: dict[str, Any], agent_ids: set[str] | None
) -> None:
    node_id = node.get("id")
    if isinstance(step.get("nodeId"), str) and step["nodeId"] != node_id:
        reading.add(step_file, pointer("nodeId"), texts.PKG_STEP_NODE.format(value=step["nodeId"], node=node_id))
    if isinstance(step.get("type"), str) and isinstance(node.get("type"), str) and step["type"] != node["type"]:
        reading.add(step_file, pointer("type"), texts.PKG_STEP_TYPE.format(value=step["type"], type=node["type"]))
    _check_agent(reading, agent_ids, step.get("agentId"), step_file, pointer("agentId"))


def _check_transitions(reading: _Reading, workflows: Iterable[Workflow]) -> None:
    for workflow in workflows:
        for node in workflow.graph.nodes:
            step = reading.md_cache.get(node.file) or {}
            for index, transition in enumerate(_list(step.get("transitions"))):
                target = transition.get("to") if isinstance(transition, dict) else None
                if isinstance(target, str) and target not in workflow.graph:
                    reading.add(node.file, pointer("transitions", index, "to"), texts.PKG_NOT_A_NODE.format(value=target, graph=workflow.graph_file))


def _check_orphan_steps(reading: _Reading, workflows: list[Workflow]) -> None:
    """Every ``.md`` in a graph's ``steps/`` folder is the file of a node (graph nodes ↔ step files)."""
    used = {node.file for wf in workflows for node in wf.graph.nodes}
    folders = {posixpath.join(posixpath.dirname(wf.graph_file), "steps") + "/" for wf in workflows}
    for name in reading.source.files():
        if name.endswith(".md") and name not in used and any(name.startswith(folder) for folder in folders):
            reading.add(name, "", texts.PKG_STRAY_STEP)


def _check_unique_workflow_ids(reading: _Reading, slots: list[tuple[str, dict[str, Any]]]) -> None:
    seen: set[str] = set()
    for at, item in slots:
        workflow_id = item.get("id")
        if isinstance(workflow_id, str):
            if workflow_id in seen:
                reading.add(MANIFEST, f"{at}/id", texts.PKG_WORKFLOW_TWICE.format(value=workflow_id))
            seen.add(workflow_id)


def _check_menus(reading: _Reading, agents_file: str, document: dict[str, Any], workflows: tuple[Workflow, ...]) -> None:
    """A menu item's ``workflow`` (and an ``exec`` naming a ``workflow.md``) must be a workflow of the package."""
    by_id = {wf.id for wf in workflows}
    by_file = {wf.workflow_file for wf in workflows}
    for a, agent in enumerate(_list(document.get("agents"))):
        if not isinstance(agent, dict):
            continue
        for m, item in enumerate(_list(agent.get("menu"))):
            if not isinstance(item, dict):
                continue
            for key in ("workflow", "exec"):
                value = item.get(key)
                if not isinstance(value, str) or (key == "exec" and not value.endswith("workflow.md")):
                    continue
                if value not in by_id and normalize_ref(value) not in by_file:
                    reading.add(agents_file, pointer("agents", a, "menu", m, key), texts.PKG_NOT_A_WORKFLOW.format(value=value))


def _app_agents(reading: _Reading, agents_file: str | None, document: Any) -> tuple[Agent, ...]:
    """The agents as the app's values (core.agents), from a schema-valid file.

    The app's model is stricter than the schema in what it can route, so the values leave out what it
    could not use: a menu item without a trigger, or without exactly one of workflow/exec/action, or
    with a trigger or a ``#prompt`` action already taken or unknown, and a second prompt with the same
    id. The installed file itself is unchanged.
    """
    if not agents_file or not isinstance(document, dict) or any(p.file == agents_file for p in reading.problems):
        return ()
    agents: list[Agent] = []
    for index, raw in enumerate(_list(document.get("agents"))):
        usable = dict(raw)
        prompts = []
        prompt_ids: set[str] = set()
        for prompt in _list(raw.get("prompts")):
            if prompt["id"] not in prompt_ids:
                prompt_ids.add(prompt["id"])
                prompts.append(prompt)
        triggers: set[str] = set()
        menu = []
        for item in _list(raw.get("menu")):
            targets = [key for key in ("workflow", "exec", "action") if item.get(key)]
            trigger = str(item.get("trigger") or "").lstrip("*").strip().lower()
            action = item.get("action")
            unknown_prompt = isinstance(action, str) and action.startswith("#") and action[1:] not in prompt_ids
            if len(targets) == 1 and trigger and trigger not in triggers and not unknown_prompt:
                triggers.add(trigger)
                menu.append(item)
        usable["prompts"] = prompts
        usable["menu"] = menu
        try:
            agents.append(Agent.model_validate(usable))
        except ValidationError as exc:  # a schema-valid agent the model refuses: a gap to close, reported
            for error in exc.errors():
                reading.add(agents_file, pointer("agents", index, *error["loc"]), texts.PKG_AGENT_UNUSABLE.format(detail=error["msg"]))
    return tuple(agents)
