"""State writes of a run: the checks (YAML, schema, graph transitions, stepsCompleted) and the guard in the real tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core.loop.factory import tool_context
from crewagent.core.packages import GraphEdge, GraphNode, WorkflowGraph
from crewagent.core.runs import StateGuard, check_write, state_path
from crewagent.core.runs.service import state_schema
from crewagent.core.settings import Settings
from crewagent.core.tools import AutoApprover, default_registry
from crewagent.core.tools.frontmatter import merge
from tests.core.run_helpers import GRAPH, install_notes, start_run
from tests.examples import examples
from tests.strategies import keyed

NODES = {n["id"]: n for n in GRAPH["nodes"]}
WORKFLOW_GRAPH = WorkflowGraph(
    GRAPH["entryNodeId"],
    tuple(GraphNode(n["id"], n["type"], n["file"], agent_id=n.get("agentId")) for n in GRAPH["nodes"]),
    tuple(GraphEdge(e["from"], e["to"], e["label"], e.get("isDefault", False)) for e in GRAPH["edges"]),
)
BASE = {"schemaVersion": "1.1", "workflowType": "notes", "currentNodeId": "", "stepsCompleted": [], "variables": {}}


def code(result: dict[str, Any] | None) -> str | None:
    return None if result is None else result["error"]["code"]


def test_a_run_moves_along_the_edges_and_marks_each_step_once() -> None:
    at_write = {**BASE, "currentNodeId": "check", "stepsCompleted": ["write"]}
    assert check_write(WORKFLOW_GRAPH, BASE, at_write, schema=state_schema) is None
    assert check_write(WORKFLOW_GRAPH, at_write, {**at_write, "currentNodeId": "done", "stepsCompleted": ["write", "check"]}) is None
    # the decision's other edge goes back, and the step may be completed again on the next visit
    back = {**at_write, "currentNodeId": "write", "stepsCompleted": ["write", "check"]}
    assert check_write(WORKFLOW_GRAPH, at_write, back) is None
    assert check_write(WORKFLOW_GRAPH, back, {**back, "currentNodeId": "check", "stepsCompleted": ["write", "check", "write"]}) is None
    # at the end: mark the end node done without moving
    end = {**at_write, "currentNodeId": "done", "stepsCompleted": ["write", "check"]}
    assert check_write(WORKFLOW_GRAPH, end, {**end, "stepsCompleted": ["write", "check", "done"]}) is None


def test_a_jump_past_a_node_is_refused_with_the_allowed_nodes() -> None:
    refused = check_write(WORKFLOW_GRAPH, BASE, {**BASE, "currentNodeId": "done"})
    assert code(refused) == "E_INVALID_TRANSITION"
    assert refused is not None and refused["error"]["allowedNext"] == ["write", "check"]
    assert "Allowed next nodes: write, check" in refused["error"]["message"]


def test_steps_completed_never_shrinks_nor_repeats_the_step_just_done() -> None:
    at_check = {**BASE, "currentNodeId": "check", "stepsCompleted": ["write"]}
    assert code(check_write(WORKFLOW_GRAPH, at_check, {**at_check, "stepsCompleted": []})) == "E_INVALID_TRANSITION"
    assert code(check_write(WORKFLOW_GRAPH, at_check, {**at_check, "stepsCompleted": ["write", "write"]})) == "E_INVALID_TRANSITION"
    assert code(check_write(WORKFLOW_GRAPH, at_check, {**at_check, "stepsCompleted": ["write", "done"]})) == "E_INVALID_TRANSITION"


def test_broken_yaml_and_schema_violations_are_refused() -> None:
    assert code(check_write(WORKFLOW_GRAPH, BASE, None)) == "E_INVALID_FRONTMATTER"
    refused = check_write(WORKFLOW_GRAPH, BASE, {**BASE, "stepsCompleted": "write"}, schema=state_schema)
    assert code(refused) == "E_SCHEMA_VALIDATION"
    assert refused is not None and "/stepsCompleted" in refused["error"]["message"]


# -- the property -------------------------------------------------------------------------------

node_ids = st.sampled_from(["", "write", "check", "done", "nowhere"])
# Any subset of the three keys (the order of a patch's keys changes nothing: both state keys are
# already in the state, where merge() keeps their place, and "append" is read on its own).
patches = keyed(
    {},
    {
        "currentNodeId": node_ids,
        "stepsCompleted": st.lists(st.sampled_from(["write", "check", "done", "x"]), max_size=5),
        "append": st.lists(st.sampled_from(["write", "check", "done"]), min_size=1, max_size=2),
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(patches, max_size=25))
def test_any_sequence_of_patches_leaves_a_path_in_the_graph(sequence: list[dict[str, Any]]) -> None:
    """For any patches: the accepted states walk the graph's edges, and stepsCompleted only grows."""
    state: dict[str, Any] = dict(BASE)
    accepted = [state]
    for patch in sequence:
        update = {k: v for k, v in patch.items() if k != "append"}
        if "append" in patch:
            update["stepsCompleted"] = [*state["stepsCompleted"], *patch["append"]]
        new = merge(state, update)
        if check_write(WORKFLOW_GRAPH, state, new, schema=state_schema) is None:
            state = new
            accepted.append(state)
    for before, after in zip(accepted, accepted[1:]):
        here, there = before["currentNodeId"] or WORKFLOW_GRAPH.entry_node_id, after["currentNodeId"]
        moved = there != before["currentNodeId"]
        if moved:
            allowed = set(WORKFLOW_GRAPH.successors(here)) | ({here} if not before["currentNodeId"] else set())
            assert there in allowed, (before, after)
        assert after["stepsCompleted"][: len(before["stepsCompleted"])] == before["stepsCompleted"]
        for step in after["stepsCompleted"][len(before["stepsCompleted"]) :]:
            assert step in (here, there)


# -- the guard in the real tools -----------------------------------------------------------------


def _call(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(default_registry().execute(name, json.dumps(args), ctx, call_id="c1"))


@pytest.fixture
def guarded(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> tuple[Any, Path, str]:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    workflow = package.workflow("notes")
    assert workflow is not None
    guard = StateGuard(run.runId, workflow.graph, schema=state_schema)
    ctx = tool_context(
        project,
        Settings(),
        conversation_id=run.conversationId,
        approver=AutoApprover(),
        run_id=run.runId,
        pkg_dir=package.root,
        frontmatter_guard=guard,
    )
    return ctx, state_path(project, run.runId), guard.shown_path


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("fs.apply_patch", {"updateFrontmatter": {"currentNodeId": "done"}}, "E_INVALID_TRANSITION"),
        ("fs.apply_patch", {"updateFrontmatter": {"stepsCompleted": "write"}}, "E_SCHEMA_VALIDATION"),
        ("fs.apply_patch", {"updateFrontmatter": "currentNodeId: [unclosed"}, "E_INVALID_FRONTMATTER"),
        ("fs.write", {"content": "---\ncurrentNodeId: [unclosed\n---\nbody\n"}, "E_INVALID_FRONTMATTER"),
        ("fs.write", {"content": "no frontmatter at all\n"}, "E_SCHEMA_VALIDATION"),
        ("fs.apply_patch", {"replace": [{"old": "currentNodeId: ''", "new": "currentNodeId: done"}]}, "E_INVALID_TRANSITION"),
        ("fs.apply_patch", {"diff": "@@ -1,1 +1,1 @@\n----\n+oops\n"}, "E_SCHEMA_VALIDATION"),
        (
            "fs.write",
            {"content": '---\nschemaVersion: "1.1"\nworkflowType: notes\ncurrentNodeId: done\nstepsCompleted: []\n---\n'},
            "E_INVALID_TRANSITION",
        ),
    ],
)
def test_a_refused_state_write_writes_nothing(guarded: tuple[Any, Path, str], tool: str, args: dict[str, Any], expected: str) -> None:
    ctx, path, shown = guarded
    before = path.read_bytes()
    result = _call(ctx, tool, {"path": shown, **args})
    assert result["ok"] is False and result["error"]["code"] == expected, result
    assert path.read_bytes() == before


def test_the_pkg_mount_is_read_only_and_other_files_pass_the_guard(guarded: tuple[Any, Path, str]) -> None:
    ctx, path, shown = guarded
    assert _call(ctx, "fs.read", {"path": "@pkg/steps/write.md"})["ok"] is True
    assert _call(ctx, "fs.write", {"path": "@pkg/steps/write.md", "content": "x"})["error"]["code"] == "E_SANDBOX_VIOLATION"
    # an ordinary Markdown file with broken frontmatter is none of the guard's business
    assert _call(ctx, "fs.write", {"path": "@project/notes.md", "content": "---\na: [\n---\n"})["ok"] is True
    ok = _call(ctx, "fs.apply_patch", {"path": shown, "updateFrontmatter": {"currentNodeId": "check", "stepsCompleted": ["write"]}})
    assert ok["ok"] is True and "currentNodeId: check" in path.read_text(encoding="utf-8")


def test_a_completed_run_changes_state_only_after_a_confirmation(guarded: tuple[Any, Path, str]) -> None:
    ctx, path, shown = guarded
    for update in (
        {"currentNodeId": "check", "stepsCompleted": ["write"]},
        {"currentNodeId": "done", "stepsCompleted": ["write", "check"]},
        {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}},
    ):
        assert _call(ctx, "fs.apply_patch", {"path": shown, "updateFrontmatter": update})["ok"] is True
    later = {"path": shown, "updateFrontmatter": {"variables": {"note": "changed"}}}
    before = path.read_bytes()
    assert _call(ctx, "fs.apply_patch", later)["error"]["code"] == "STATE_CHANGE_REQUIRES_CONFIRMATION"
    assert path.read_bytes() == before
    ctx.frontmatter_guard.confirm_once()
    assert _call(ctx, "fs.apply_patch", later)["ok"] is True
    again = {"path": shown, "updateFrontmatter": {"variables": {"note": "again"}}}
    assert _call(ctx, "fs.apply_patch", again)["error"]["code"] == "STATE_CHANGE_REQUIRES_CONFIRMATION"  # one-shot
