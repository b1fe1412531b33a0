"""The run engine over real HTTP: a scripted model drives a three-node workflow through the real tools.

Every request goes through the real adapter to the scripted server; the turn is set up by the
core entry point (core/turns.run_turn) exactly as ``crewagent run`` and the app set it up.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from crewagent.core.loop import LoopEvent, RunProgress, ToolCallFinished, TurnFinished
from crewagent.core.runs import RunIndex, RunMetadata, state_path
from crewagent.core.runs.service import read_run_state
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn
from tests.core.loop_helpers import assert_log_valid, assert_request_valid
from tests.core.run_helpers import install_notes, start_run
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls


def _turn(store: RuntimeStore, project: ProjectInfo, run: RunMetadata, server: ScriptedServer, message: str | None) -> list[LoopEvent]:
    async def main() -> list[LoopEvent]:
        events = []
        async for event in run_turn(
            store,
            project,
            run.conversationId,
            message,
            mode="run",
            settings=Settings(),
            config=server.config(),
            hooks=TurnHooks(approver=AutoApprover()),
        ):
            events.append(event)
        return events

    return asyncio.run(main())


def _patch(n: int, shown: str, update: Any) -> Any:
    return tool_calls(call(f"call_{n}", "fs_apply_patch", json.dumps({"path": shown, "updateFrontmatter": update})))


def _codes(events: list[LoopEvent]) -> list[str | None]:
    return [e.error_code for e in events if isinstance(e, ToolCallFinished) and e.name == "fs.apply_patch"]


def test_a_scripted_model_drives_the_workflow_to_completed(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    shown = run.state_alias
    scripted_llm.script(
        tool_calls(call("call_1", "fs_read", json.dumps({"path": shown}))),
        tool_calls(call("call_2", "fs_write", json.dumps({"path": "@project/artifacts/note.md", "content": "# Note\n"}))),
        _patch(3, shown, {"currentNodeId": "done"}),  # jumps over check: refused
        _patch(4, shown, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        _patch(5, shown, {"stepsCompleted": []}),  # shrinks: refused
        tool_calls(call("call_6", "fs_apply_patch", json.dumps({"path": shown, "updateFrontmatter": "currentNodeId: [broken"}))),
        _patch(7, shown, {"currentNodeId": "done", "stepsCompleted": ["write", "check"], "decisionLog": [{"from": "check", "to": "done", "label": "ok"}]}),
        _patch(8, shown, {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}}),
        text("The note is written and checked."),
    )

    events = _turn(store, project, run, scripted_llm, "start")

    end = events[-1]
    assert isinstance(end, TurnFinished) and end.reason == "completed", end
    assert _codes(events) == ["E_INVALID_TRANSITION", None, "E_INVALID_TRANSITION", "E_INVALID_FRONTMATTER", None, None]
    progress = [e for e in events if isinstance(e, RunProgress)]
    assert [(p.current_node_id, p.steps_completed, p.complete) for p in progress] == [
        ("check", ("write",), False),
        ("done", ("write", "check"), False),
        ("done", ("write", "check", "done"), True),
    ]
    # the state file, the artifact and the runs index
    state = read_run_state(project, run)
    assert state is not None and state.steps_completed == ("write", "check", "done") and state.current_node_id == "done"
    assert (project.root / "artifacts" / "note.md").read_text(encoding="utf-8") == "# Note\n"
    indexed = RunIndex(project.runtime_dir).get(run.runId)
    assert (indexed.phase, indexed.currentNodeId, indexed.stepsCompleted) == ("completed", "done", ["write", "check", "done"])
    # every message of the run is stamped; the log and every request are valid chains
    log = assert_log_valid(store, project.id, run.conversationId)
    assert len(log) == 18  # user + 8 (call, result) + final answer
    assert all((m.mode, m.runId, m.workflowId) == ("run", run.runId, "notes") for m in log)
    bodies = scripted_llm.bodies
    for body in bodies:
        assert_request_valid(body)
    # the prefix follows the Run layers: persona of the node's agent, banner, ..., RUN_DIRECTIVE, NODE_BRIEF, USER_INPUT
    first = bodies[0]["messages"]
    systems = [m["content"] for m in first if m["role"] == "system"]
    assert any("Wren" in s for s in systems) and not any("Cato" in s for s in systems)
    assert "MODE\n- active: run" in systems[-1]
    users = [m["content"] for m in first if m["role"] == "user"]
    assert users[0].startswith("RUN_DIRECTIVE\n- runType: bmad-micro\n- intent: start\n- workflow: notes")
    assert f"- state: {shown}" in users[0] and "- currentNodeId: write" in users[0]
    assert users[1].startswith("NODE_BRIEF\n- currentNodeId: write (type=step)\n- stepFile: @pkg/steps/write.md")
    assert "artifacts/note.md -> @project/artifacts/note.md" in users[1] and "check (label=next, default=true)" in users[1]
    assert users[2] == "USER_INPUT\n- forNodeId: write\nstart"
    # after the move to check, the persona is the checker's and the brief lists both edges
    at_check = bodies[4]["messages"]
    assert any("Cato" in m["content"] for m in at_check if m["role"] == "system")
    brief = next(m["content"] for m in at_check if m["role"] == "user" and m["content"].startswith("NODE_BRIEF"))
    assert "done (label=ok, default=true), write (label=redo, default=false)" in brief
    # after completion only RUN_DIRECTIVE with the post-run protocol goes out, no NODE_BRIEF
    last = bodies[-1]["messages"]
    blocks = [m["content"] for m in last if m["role"] == "user"]
    assert any(b.startswith("RUN_DIRECTIVE") and "Post-run protocol" in b and "currentNodeId" not in b.split("Post-run")[0] for b in blocks)
    assert not any(b.startswith("NODE_BRIEF") for b in blocks)


def test_a_refused_write_leaves_the_file_as_it_was_and_the_run_goes_on(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    shown, path = run.state_alias, state_path(project, run.runId)
    original = path.read_bytes()
    seen: list[bytes] = []

    def then_text(request: Any) -> Any:
        seen.append(path.read_bytes())
        return text("I need to know what to write.").reply

    from tests.fakes.scripted_server import Step

    scripted_llm.script(
        _patch(1, shown, {"currentNodeId": "done"}),
        _patch(2, shown, {"stepsCompleted": "write"}),
        tool_calls(call("call_3", "fs_write", json.dumps({"path": shown, "content": "---\ncurrentNodeId: [\n---\n"}))),
        Step("text after refusals", then_text),
    )
    events = _turn(store, project, run, scripted_llm, "start")

    assert _codes(events) == ["E_INVALID_TRANSITION", "E_SCHEMA_VALIDATION"]
    assert [e.error_code for e in events if isinstance(e, ToolCallFinished) and e.name == "fs.write"] == ["E_INVALID_FRONTMATTER"]
    assert seen == [original]  # nothing was written by any of the three
    end = events[-1]
    assert isinstance(end, TurnFinished) and end.reason == "waiting_user"
    assert RunIndex(project.runtime_dir).get(run.runId).phase == "waiting-user"

    # the next turn continues the same run from its state
    scripted_llm.script(
        _patch(4, shown, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        text("Moved on."),
    )
    events = _turn(store, project, run, scripted_llm, "write anything")
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "waiting_user"
    request = scripted_llm.bodies[-2]["messages"]
    directive = next(m["content"] for m in request if m["role"] == "user" and m["content"].startswith("RUN_DIRECTIVE"))
    assert "- intent: continue" in directive
    assert request[-1] == {"role": "user", "content": "USER_INPUT\n- forNodeId: write\nwrite anything"}
    assert read_run_state(project, run).current_node_id == "check"  # type: ignore[union-attr]
    assert_log_valid(store, project.id, run.conversationId)


def test_a_turn_that_keeps_the_phase_leaves_the_runs_index_as_it_was(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    # The index's progress is a copy of the state file's: a turn that moves the run on but ends
    # in the same phase does not replace the index for it; the next phase change refreshes it.
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    shown, index = run.state_alias, RunIndex(project.runtime_dir)
    scripted_llm.script(text("What should the note say?"))
    _turn(store, project, run, scripted_llm, "start")
    assert index.get(run.runId).phase == "waiting-user"
    written = index.path.stat()

    scripted_llm.script(_patch(1, shown, {"currentNodeId": "check", "stepsCompleted": ["write"]}), text("Written."))
    events = _turn(store, project, run, scripted_llm, "a short note")

    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "waiting_user"
    after = index.path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # not replaced
    assert read_run_state(project, run).current_node_id == "check"  # type: ignore[union-attr]
    assert not (index.folder / f"{run.runId}.running").exists()  # the turn ended

    scripted_llm.script(
        _patch(2, shown, {"currentNodeId": "done", "stepsCompleted": ["write", "check"]}),
        _patch(3, shown, {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}}),
        text("Complete."),
    )
    _turn(store, project, run, scripted_llm, "fine")
    final = index.get(run.runId)
    assert (final.phase, final.currentNodeId, final.stepsCompleted) == ("completed", "done", ["write", "check", "done"])


def test_runs_keep_their_package_version_and_a_conversation_holds_several(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    from crewagent.core.packages import PackageStore
    from crewagent.core.runs.service import active_run, find_workflow, load_driver

    old = install_notes(isolated_dirs["data"], tmp_path, version="1.0.0")
    first = start_run(store, project, old)
    new = install_notes(isolated_dirs["data"], tmp_path, version="1.1.0")
    packages = PackageStore(isolated_dirs["data"])
    assert find_workflow(packages, "notes:notes")[0].id == new.id  # a new run takes the newest version
    second = start_run(store, project, new, first.conversationId)

    meta = store.get_conversation(project.id, first.conversationId)
    assert [entry["runId"] for entry in meta.workflowRuns or []] == [first.runId, second.runId]
    assert active_run(project, meta) is not None and active_run(project, meta).runId == second.runId  # type: ignore[union-attr]
    assert load_driver(project, first, packages).package.root == old.root  # the first run stays on 1.0.0
    assert load_driver(project, second, packages).package.version == "1.1.0"
    state = read_run_state(project, first)
    assert state is not None and state.current_node_id == "" and state.steps_completed == ()
    text_of_state = state_path(project, first.runId).read_text(encoding="utf-8")
    assert f"runId: {first.runId}" in text_of_state and "activeAgentId: writer" in text_of_state
    assert f"workflowRef: {old.id}:notes" in text_of_state and "updatedAt:" in text_of_state
    assert (project.root / "artifacts").is_dir()


def test_the_same_refused_state_write_three_times_ends_the_turn_as_a_failed_run(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    before = state_path(project, run.runId).read_bytes()
    scripted_llm.script(*(_patch(n, run.state_alias, {"currentNodeId": "done"}) for n in (1, 2, 3)))

    events = _turn(store, project, run, scripted_llm, "start")

    end = events[-1]
    assert isinstance(end, TurnFinished) and end.reason == "error" and end.error is not None
    assert end.error["code"] == "ENGINE_LOOP_DETECTED"
    assert _codes(events) == ["E_INVALID_TRANSITION"] * 3
    assert state_path(project, run.runId).read_bytes() == before
    failed = RunIndex(project.runtime_dir).get(run.runId)
    assert failed.phase == "failed" and failed.lastError is not None and failed.lastError["code"] == "ENGINE_LOOP_DETECTED"
    log = assert_log_valid(store, project.id, run.conversationId)
    assert log[-1].partType == "error" and log[-1].runId == run.runId


def test_after_completion_a_state_change_needs_the_users_confirmation(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    shown = run.state_alias
    scripted_llm.script(
        _patch(1, shown, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        _patch(2, shown, {"currentNodeId": "done", "stepsCompleted": ["write", "check"]}),
        _patch(3, shown, {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}}),
        text("Complete."),
    )
    assert isinstance(end := _turn(store, project, run, scripted_llm, "start")[-1], TurnFinished) and end.reason == "completed"
    asked: list[dict[str, Any]] = []

    async def ask_user(widget: dict[str, Any]) -> dict[str, Any]:
        asked.append(widget)
        return {"type": "WIDGET_SUBMIT", "widgetType": "confirmation", "confirmed": True}

    confirm = {"type": "confirmation", "title": "Change the completed run?"}
    scripted_llm.script(
        _patch(4, shown, {"variables": {"note": "later"}}),  # refused: not confirmed yet
        tool_calls(call("call_5", "ui_ask_user", json.dumps(confirm))),
        _patch(6, shown, {"variables": {"note": "later"}}),  # allowed once
        _patch(7, shown, {"variables": {"note": "again"}}),  # refused again: the confirmation was one-shot
        text("Changed once."),
    )

    async def main() -> list[LoopEvent]:
        hooks = TurnHooks(approver=AutoApprover(), ask_user=ask_user)
        return [e async for e in run_turn(store, project, run.conversationId, "change a note", mode="run", settings=Settings(), config=scripted_llm.config(), hooks=hooks)]

    events = asyncio.run(main())
    assert _codes(events) == ["STATE_CHANGE_REQUIRES_CONFIRMATION", None, "STATE_CHANGE_REQUIRES_CONFIRMATION"]
    assert len(asked) == 1
    assert "note: later" in state_path(project, run.runId).read_text(encoding="utf-8")
    post_run = scripted_llm.bodies[4]["messages"]
    assert not any(m["role"] == "user" and m["content"].startswith("NODE_BRIEF") for m in post_run)
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "completed"


def test_progress_after_a_patch_is_the_state_it_wrote_and_after_a_text_edit_the_file_read_back(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer,
    monkeypatch: Any,
) -> None:
    # A frontmatter patch reports what it wrote (checked to read back the same): the engine takes
    # that instead of reading the file back; a replace/diff edit reports no frontmatter: read back.
    from crewagent.core.runs.engine import RunDriver

    reads: list[str] = []
    original = RunDriver.read_state

    def counting(self: RunDriver) -> Any:
        reads.append(self.run.runId)
        return original(self)

    monkeypatch.setattr(RunDriver, "read_state", counting)
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    shown = run.state_alias
    edit = {"path": shown, "replace": [{"old": "currentNodeId: check", "new": "currentNodeId: done"}]}
    scripted_llm.script(
        _patch(1, shown, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        tool_calls(call("call_2", "fs_apply_patch", json.dumps(edit))),
        text("Moved on."),
    )
    events = _turn(store, project, run, scripted_llm, "go")

    assert _codes(events) == [None, None]
    progress = [(p.current_node_id, p.steps_completed) for p in events if isinstance(p, RunProgress)]
    assert progress == [("check", ("write",)), ("done", ("write",))]
    assert len(reads) == 2  # the turn's start and the text edit, not the patch
    state = read_run_state(project, run)
    assert state is not None and (state.current_node_id, state.steps_completed) == ("done", ("write",))
