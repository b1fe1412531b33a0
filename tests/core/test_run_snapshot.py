"""The Run workspace's snapshot of a run, read from real files (no Qt): steps, decisions, artifacts, tool calls, layout."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core import paths
from crewagent.core.packages import PackageStore
from crewagent.core.runs.create import state_path
from crewagent.core.runs.layout import layout_graph
from crewagent.core.runs.snapshot import build_snapshot, graph_order, snapshot_of, tool_calls_of
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.tools import frontmatter
from crewagent.core.tools.audit import AuditLog, audit_path
from tests.core.run_helpers import install_notes, start_run
from tests.examples import examples


def _patch_state(project: Any, run_id: str, **changes: Any) -> None:
    path = state_path(project, run_id)
    document = frontmatter.parse(path.read_text(encoding="utf-8"))
    atomic_write_bytes(path, frontmatter.render(document, {**document.data, **changes}).encode("utf-8"))


def test_a_new_run_is_on_its_entry_node_with_every_other_step_pending(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    assert [(s.node_id, s.status, s.agent_id) for s in snap.steps] == [
        ("write", "current", "writer"), ("check", "pending", "checker"), ("done", "pending", "")
    ]
    assert [s.agent_name for s in snap.steps] == ["Wren", "Cato", ""]
    assert snap.steps[0].title == "Write" and Path(snap.steps[0].step_file).read_text(encoding="utf-8").startswith("---")
    assert [(e.source, e.target, e.label) for e in snap.edges] == [("write", "check", "next"), ("check", "done", "ok"), ("check", "write", "redo")]
    assert (snap.phase, snap.complete, snap.problem, snap.tool_calls, snap.decisions) == ("idle", False, "", (), ())
    (artifact,) = snap.artifacts  # the write node declares artifacts/note.md
    assert (artifact.path, artifact.source, artifact.exists) == ("artifacts/note.md", "write", False)
    assert artifact.absolute == str(project.root / "artifacts" / "note.md")


def test_progress_decisions_and_written_artifacts_come_from_the_state_file(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    (project.root / "artifacts" / "note.md").write_text("# Note\n", encoding="utf-8")
    _patch_state(
        project, run.runId, currentNodeId="write", stepsCompleted=["write", "check"],
        decisionLog=[{"from": "check", "to": "write", "label": "redo", "reason": "too short"}, "not an entry", {"to": "x"}],
        artifacts=["@project/artifacts/note.md", "../outside.md", "artifacts/extra.md"],
    )
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    # back on "write" after a redo: current wins over completed
    assert [(s.node_id, s.status) for s in snap.steps] == [("write", "current"), ("check", "completed"), ("done", "pending")]
    assert [(d.source, d.target, d.label, d.reason) for d in snap.decisions] == [("check", "write", "redo", "too short")]
    assert [(a.path, a.source, a.exists, bool(a.absolute)) for a in snap.artifacts] == [
        ("artifacts/note.md", "state", True, True), ("../outside.md", "state", False, False), ("artifacts/extra.md", "state", False, True)
    ]

    _patch_state(project, run.runId, currentNodeId="done", stepsCompleted=["write", "check", "write", "check", "done"])
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    assert snap.complete and {s.status for s in snap.steps} == {"completed"}


def test_a_damaged_state_or_a_missing_package_is_a_problem_not_a_crash(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    state_path(project, run.runId).write_text("---\n: [unclosed\n---\n", encoding="utf-8")
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    assert "damaged" in snap.problem and [s.status for s in snap.steps] == ["current", "pending", "pending"]

    PackageStore(isolated_dirs["data"]).remove(package.id)
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    assert package.id in snap.problem and snap.steps == () and snap.workflow_id == "notes"


def test_tool_calls_come_from_the_run_audit_and_damaged_lines_are_skipped(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    path = audit_path(paths.state_dir(project.runtime_dir), run_id=run.runId)
    audit = AuditLog(path)
    audit.record(tool="fs.read", args={"path": "@state/x" + "y" * 200}, result={"ok": True}, duration_ms=1.5, call_id="c1", run_id=run.runId)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"tool": "torn", "ok": tr\n[1, 2]\n{"no tool": 1}\n')
    audit.record(tool="fs.write", args={"path": "@project/a"}, result={"ok": False, "error": {"code": "E_WRITE_LIMIT"}},
                 duration_ms=2, call_id="c2", run_id=run.runId, approval="allow_once")
    snap = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    first, second = snap.tool_calls
    assert (first.tool, first.ok, first.error_code, first.duration_ms, first.call_id) == ("fs.read", True, "", 1.5, "c1")
    assert len(first.short_arguments) == 80 and first.short_arguments.endswith("…")
    assert json.loads(first.arguments)["path"].startswith("@state/x")
    assert (second.tool, second.ok, second.error_code, second.approval) == ("fs.write", False, "E_WRITE_LIMIT", "allow_once")
    assert snap.audit_file == str(path)


@given(st.lists(st.one_of(st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))),
                          st.integers(), st.text(max_size=5)), max_size=20))
def test_any_audit_records_give_rows_without_raising(records: list[Any]) -> None:
    rows = tool_calls_of(r for r in records if isinstance(r, dict))
    assert all(row.tool for row in rows)


def test_graph_order_is_breadth_first_from_the_entry_then_the_unreached_nodes() -> None:
    from crewagent.core.packages.model import GraphEdge, GraphNode, WorkflowGraph

    nodes = tuple(GraphNode(n, "step", f"steps/{n}.md") for n in ("orphan", "b", "a", "start", "c"))
    edges = (GraphEdge("start", "b", "x"), GraphEdge("start", "a", "y"), GraphEdge("a", "c", "z"), GraphEdge("c", "start", "back"))
    assert graph_order(WorkflowGraph("start", nodes, edges)) == ["start", "b", "a", "c", "orphan"]


def test_the_state_text_given_is_used_instead_of_the_file(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    text = '---\nschemaVersion: "1.1"\nworkflowType: notes\ncurrentNodeId: check\nstepsCompleted: [write]\n---\n'
    snap = build_snapshot(project, run, package, state_text=text)
    assert [s.status for s in snap.steps] == ["completed", "current", "pending"]


# -- layout ---------------------------------------------------------------------------------------


def _chain(n: int) -> tuple[list[str], list[tuple[str, str, str, bool]]]:
    ids = [f"n{i}" for i in range(n)]
    edges = [(ids[i - 1], ids[i], "next", True) for i in range(1, n)]
    edges += [(ids[i], ids[i - 2], "revise", False) for i in range(4, n, 5)]
    return ids, edges


def test_layout_puts_each_node_in_its_layer_without_overlaps_and_edges_run_source_to_target() -> None:
    ids, edges = _chain(12)
    layout = layout_graph(ids, [*edges, ("n3", "n3", "again", False), ("n1", "ghost", "x", False)], roots=["n0"])
    boxes = {box.id: box for box in layout.nodes}
    assert list(boxes) == ids
    assert boxes["n0"].y < boxes["n1"].y < boxes["n5"].y  # layered top-down from the root
    for a in layout.nodes:
        for b in layout.nodes:
            if a.id < b.id:
                overlap = a.x < b.x + b.width and b.x < a.x + a.width and a.y < b.y + b.height and b.y < a.y + a.height
                assert not overlap, (a, b)
    for path in layout.edges:
        if path.source == path.target:
            assert path.points == ()
            continue
        source, target = boxes[path.source].center, boxes[path.target].center
        start, end = path.points[0], path.points[-1]
        assert abs(start[0] - source[0]) + abs(start[1] - source[1]) < abs(end[0] - source[0]) + abs(end[1] - source[1])
        assert abs(end[0] - target[0]) <= boxes[path.target].width / 2 + 0.01 and abs(end[1] - target[1]) <= boxes[path.target].height / 2 + 0.01
    assert {(p.source, p.target) for p in layout.edges} == {(s, t) for s, t, _l, _d in edges} | {("n3", "n3")}
    assert layout.width >= max(b.x + b.width for b in layout.nodes) - 0.01


def test_disconnected_parts_are_placed_side_by_side() -> None:
    layout = layout_graph(["a", "b", "x", "y"], [("a", "b", "", True), ("x", "y", "", True)], roots=["a"])
    boxes = {box.id: box for box in layout.nodes}
    assert max(boxes["a"].x, boxes["b"].x) + 168 <= min(boxes["x"].x, boxes["y"].x)


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 25), st.lists(st.tuples(st.integers(0, 24), st.integers(0, 24)), max_size=40))
def test_any_graph_lays_out_with_every_node_placed(n: int, pairs: list[tuple[int, int]]) -> None:
    ids = [f"v{i}" for i in range(n)]
    edges = [(f"v{a}", f"v{b}", "e", False) for a, b in pairs if a < n and b < n]
    layout = layout_graph(ids, edges, roots=ids[:1])
    assert [box.id for box in layout.nodes] == ids
    assert all(path.points or path.source == path.target for path in layout.edges)


def test_a_200_node_workflow_lays_out_quickly() -> None:
    ids, edges = _chain(200)
    started = time.perf_counter()
    layout = layout_graph(ids, edges, roots=["n0"])
    assert len(layout.nodes) == 200
    assert time.perf_counter() - started < 5.0  # generous: the benchmark measures it (docs/benchmarks.md)


def test_a_reported_progress_updates_the_steps_as_a_re_read_would(store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    from crewagent.core.runs.snapshot import with_progress

    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    before = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
    for current, done, complete in (("check", ["write"], False), ("write", ["write", "check"], False), ("done", ["write", "check", "done"], True)):
        _patch_state(project, run.runId, currentNodeId=current, stepsCompleted=done)
        reread = snapshot_of(project, run, PackageStore(isolated_dirs["data"]))
        assert with_progress(before, current, done, complete).steps == reread.steps
