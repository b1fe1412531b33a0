"""Package validation: one broken package per kind of error, each reported with its exact file and JSON pointer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.packages import PackageError, PackageStore
from tests.core.package_helpers import Files, builder_package, clone, flat_package, md, write_folder, write_zip

Mutation = Callable[[Files], None]


def _graph(files: Files) -> dict[str, Any]:
    return files["workflow.graph.json"]  # type: ignore[no-any-return]


def _front(files: Files, name: str) -> dict[str, Any]:
    return files[name]["frontmatter"]  # type: ignore[no-any-return]


def _set(path: list[str | int], value: Any, name: str = "bmad.json") -> Mutation:
    def apply(files: Files) -> None:
        target = files[name]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return apply


def _delete(path: list[str | int], name: str) -> Mutation:
    def apply(files: Files) -> None:
        target = files[name]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return apply


def _raw(name: str, text: str) -> Mutation:
    def apply(files: Files) -> None:
        files[name] = text

    return apply


def _two_defaults(files: Files) -> None:
    _graph(files)["edges"][-1]["isDefault"] = True  # decide -> step-1 as well as decide -> end


def _duplicate_node(files: Files) -> None:
    _graph(files)["nodes"].append({"id": "step-1", "type": "step", "file": "steps/step-1.md"})


def _duplicate_agent(files: Files) -> None:
    files["agents.json"]["agents"][1]["id"] = "analyst"
    _graph(files)["nodes"][1]["agentId"] = "analyst"
    _front(files, "steps/decide.md")["agentId"] = "analyst"


def _orphan_step(files: Files) -> None:
    files["steps/extra.md"] = md({"schemaVersion": "1.1", "nodeId": "extra", "type": "step"})


def _several(files: Files) -> None:
    _graph(files)["edges"][0]["to"] = "nowhere"
    _front(files, "steps/step-1.md")["nodeId"] = "step-one"
    del files["agents.json"]["agents"][0]["persona"]["role"]


def _builder_duplicate_workflow(files: Files) -> None:
    files["bmad.json"]["workflows"][1]["id"] = "7"


def _builder_graph_missing(files: Files) -> None:
    files["bmad.json"]["workflows"][1]["graph"] = "workflows/12/missing.graph.json"


def _builder_bad_node_file(files: Files) -> None:
    files["workflows/7/workflow.graph.json"]["nodes"][0]["file"] = "../outside.md"


def _classic(files: Files) -> None:
    files.clear()
    files["workflow.yaml"] = "name: classic\ninstructions: instructions.md\n"
    files["instructions.md"] = "# do things\n"


def _no_manifest(files: Files) -> None:
    del files["bmad.json"]


FLAT_CASES: list[tuple[str, Mutation, set[tuple[str, str]]]] = [
    ("manifest misses name", _delete(["name"], "bmad.json"), {("bmad.json", "/name")}),
    ("manifest bad version", _set(["version"], "1.0"), {("bmad.json", "/version")}),
    ("manifest version with a trailing newline", _set(["version"], "1.0.0\n"), {("bmad.json", "/version")}),
    ("manifest unknown field", _set(["extra"], 1), {("bmad.json", "/extra")}),
    ("manifest not JSON", _raw("bmad.json", "{not json"), {("bmad.json", "")}),
    ("manifest misses bmad.json", _no_manifest, {("bmad.json", "")}),
    ("entry graph is missing", _set(["entry", "graph"], "nope.json"), {("bmad.json", "/entry/graph")}),
    ("entry agents leaves the package", _set(["entry", "agents"], "../agents.json"), {("bmad.json", "/entry/agents")}),
    ("node without a file", _delete(["nodes", 0, "file"], "workflow.graph.json"), {("workflow.graph.json", "/nodes/0/file")}),
    ("entry node unknown", _set(["entryNodeId"], "ghost", "workflow.graph.json"), {("workflow.graph.json", "/entryNodeId")}),
    ("edge to an unknown node", _set(["edges", 1, "to"], "ghost", "workflow.graph.json"), {("workflow.graph.json", "/edges/1/to")}),
    ("edge from an unknown node", _set(["edges", 0, "from"], "ghost", "workflow.graph.json"), {("workflow.graph.json", "/edges/0/from")}),
    ("two default edges", _two_defaults, {("workflow.graph.json", "/edges/2/isDefault")}),
    ("duplicate node id", _duplicate_node, {("workflow.graph.json", "/nodes/3/id")}),
    ("node file missing", _set(["nodes", 0, "file"], "steps/nope.md", "workflow.graph.json"), {("workflow.graph.json", "/nodes/0/file")}),
    ("node file escapes", _set(["nodes", 2, "file"], "../end.md", "workflow.graph.json"), {("workflow.graph.json", "/nodes/2/file")}),
    ("node agent unknown", _set(["nodes", 0, "agentId"], "ghost", "workflow.graph.json"), {("workflow.graph.json", "/nodes/0/agentId")}),
    # The renamed node no longer matches its step file nor the edge into it: each consequence is named.
    ("node id pattern", _set(["nodes", 2, "id"], "end node", "workflow.graph.json"), {("workflow.graph.json", "/nodes/2/id"), ("steps/end.md", "/nodeId"), ("workflow.graph.json", "/edges/1/to")}),
    ("step nodeId differs", lambda f: _front(f, "steps/step-1.md").update(nodeId="step-one"), {("steps/step-1.md", "/nodeId")}),
    ("step type differs", lambda f: _front(f, "steps/decide.md").update(type="step"), {("steps/decide.md", "/type")}),
    ("step misses schemaVersion", lambda f: _front(f, "steps/step-1.md").pop("schemaVersion"), {("steps/step-1.md", "/schemaVersion")}),
    ("step type not in the enum", lambda f: _front(f, "steps/end.md").update(type="finish"), {("steps/end.md", "/type")}),
    ("step without frontmatter", _raw("steps/end.md", "# End\n\nNo frontmatter here.\n"), {("steps/end.md", "")}),
    ("step with broken YAML", _raw("steps/end.md", "---\nnodeId: [end\n---\nbody\n"), {("steps/end.md", "")}),
    ("step agent unknown", lambda f: _front(f, "steps/step-1.md").update(agentId="ghost"), {("steps/step-1.md", "/agentId")}),
    ("step transition to an unknown node", lambda f: _front(f, "steps/step-1.md").update(transitions=[{"to": "ghost", "label": "next"}]), {("steps/step-1.md", "/transitions/0/to")}),
    ("step transition misses label", lambda f: _front(f, "steps/step-1.md").update(transitions=[{"to": "decide"}]), {("steps/step-1.md", "/transitions/0/label")}),
    ("step file not a node", _orphan_step, {("steps/extra.md", "")}),
    ("step not UTF-8", _raw("steps/end.md", "x"), set()),  # replaced below with bytes
    ("state misses stepsCompleted", lambda f: _front(f, "workflow.md").pop("stepsCompleted"), {("workflow.md", "/stepsCompleted")}),
    ("state current node unknown", lambda f: _front(f, "workflow.md").update(currentNodeId="ghost"), {("workflow.md", "/currentNodeId")}),
    ("state completed node unknown", lambda f: _front(f, "workflow.md").update(stepsCompleted=["step-1", "ghost"]), {("workflow.md", "/stepsCompleted/1")}),
    ("agents duplicate id", _duplicate_agent, {("agents.json", "/agents/1/id")}),
    ("agent persona misses role", _delete(["agents", 0, "persona", "role"], "agents.json"), {("agents.json", "/agents/0/persona/role")}),
    ("agent principles empty list", _set(["agents", 0, "persona", "principles"], [], "agents.json"), {("agents.json", "/agents/0/persona/principles")}),
    ("agents empty", _set(["agents"], [], "agents.json"), {("agents.json", "/agents")}),
    ("menu workflow unknown", _set(["agents", 0, "menu", 0, "workflow"], "ghost-flow", "agents.json"), {("agents.json", "/agents/0/menu/0/workflow")}),
    ("menu exec names an unknown workflow.md", _set(["agents", 0, "menu", 0], {"trigger": "x", "description": "d", "exec": "flows/workflow.md"}, "agents.json"), {("agents.json", "/agents/0/menu/0/exec")}),
    ("several at once", _several, {("workflow.graph.json", "/edges/0/to"), ("steps/step-1.md", "/nodeId"), ("agents.json", "/agents/0/persona/role")}),
    ("classic workflow.yaml", _classic, {("workflow.yaml", "")}),
]
FLAT_CASES = [case for case in FLAT_CASES if case[0] != "step not UTF-8"]

BUILDER_CASES: list[tuple[str, Mutation, set[tuple[str, str]]]] = [
    ("duplicate workflow id", _builder_duplicate_workflow, {("bmad.json", "/workflows/1/id"), ("agents.json", "/agents/0/menu/0/workflow")}),
    ("workflow graph missing", _builder_graph_missing, {("bmad.json", "/workflows/1/graph")}),
    ("node file leaves the package", _builder_bad_node_file, {("workflows/7/workflow.graph.json", "/nodes/0/file")}),
    ("workflow id pattern", _set(["workflows", 0, "id"], "7 seven"), {("bmad.json", "/workflows/0/id")}),
    ("createdAt wrong type", _set(["createdAt"], 20250101), {("bmad.json", "/createdAt")}),
]


def _problems(files: Files, tmp_path: Path, *, as_zip: bool) -> PackageError:
    source = write_zip(files, tmp_path / "p.bmad") if as_zip else write_folder(files, tmp_path / "p")
    data = tmp_path / "data"
    with pytest.raises(PackageError) as caught:
        PackageStore(data).import_package(source)
    assert not (data / "packages").exists() or not any(p for p in (data / "packages").iterdir() if p.name != ".lock")
    return caught.value


@pytest.mark.parametrize(("name", "mutate", "expected"), FLAT_CASES, ids=[case[0] for case in FLAT_CASES])
def test_flat_package_errors_name_the_file_and_the_pointer(
    name: str, mutate: Mutation, expected: set[tuple[str, str]], tmp_path: Path
) -> None:
    files = clone(flat_package(steps=1))
    mutate(files)
    error = _problems(files, tmp_path, as_zip=False)
    assert {(p.file, p.pointer) for p in error.problems} == expected, [str(p) for p in error.problems]


@pytest.mark.parametrize(("name", "mutate", "expected"), BUILDER_CASES, ids=[case[0] for case in BUILDER_CASES])
def test_builder_package_errors_name_the_file_and_the_pointer(
    name: str, mutate: Mutation, expected: set[tuple[str, str]], tmp_path: Path
) -> None:
    files = clone(builder_package())
    mutate(files)
    error = _problems(files, tmp_path, as_zip=True)
    assert {(p.file, p.pointer) for p in error.problems} == expected, [str(p) for p in error.problems]


def test_a_classic_package_is_refused_as_not_supported(tmp_path: Path) -> None:
    files = clone(flat_package())
    _classic(files)
    error = _problems(files, tmp_path, as_zip=True)
    assert "workflow.yaml" in str(error) and "not supported" in str(error)


def test_a_step_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    files = clone(flat_package())
    files["steps/end.md"] = b"---\nnodeId: end\n---\n\xff\xfe"
    error = _problems(files, tmp_path, as_zip=False)
    assert [(p.file, p.pointer) for p in error.problems] == [("steps/end.md", "")]
    assert "UTF-8" in error.problems[0].message


def test_a_missing_required_field_is_pointed_at_and_named(tmp_path: Path) -> None:
    files = clone(flat_package())
    del files["bmad.json"]["entry"]["graph"]
    error = _problems(files, tmp_path, as_zip=False)
    assert [str(p) for p in error.problems] == ["bmad.json#/entry/graph: the required property 'graph' is missing"]
