"""Run mode in the app's worker: a package agent's workflow menu item starts a run in the same conversation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.runs import RunIndex
from crewagent.core.runs.service import read_run_state
from crewagent.worker import WorkerThread
from tests.core.loop_helpers import assert_log_valid
from tests.core.run_helpers import install_notes
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_worker


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


def test_a_workflow_menu_item_starts_the_run_in_the_same_conversation(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, entry_type="agent", agentId=f"{package.id}:writer")
    client, recorder = TurnClient(host.worker), TurnRecorder(host.worker.turns)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))

    def patch(n: int, update: dict[str, Any]) -> Any:
        def reply(request: Any) -> Any:
            run_id = RunIndex(project.runtime_dir).list()[-1].runId
            args = json.dumps({"path": f"@state/runs/{run_id}/workflow.md", "updateFrontmatter": update})
            step = tool_calls(call(f"call_{n}", "fs_apply_patch", args))
            return step.reply

        from tests.fakes.scripted_server import Step

        return Step(f"patch {n}", reply)

    scripted_llm.script(
        patch(1, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        patch(2, {"currentNodeId": "done", "stepsCompleted": ["write", "check"]}),
        patch(3, {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}}),
        text("Done."),
    )
    client.send.emit(project.id, meta.id, "*note", "agent")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=20_000)
    client.answer_approval.emit(recorder.of("approval_requested")[0][0].request_id, "allow_conversation")
    qtbot.waitUntil(recorder.finished, timeout=30_000)

    assert recorder.of("error") == []
    assert recorder.of("turn_started") == [(meta.id, "run")]
    assert recorder.of("turn_finished")[0][:2] == (meta.id, "completed")
    (run,) = RunIndex(project.runtime_dir).list()
    assert (run.conversationId, run.phase, run.activeAgentId) == (meta.id, "completed", "writer")
    assert read_run_state(project, run).steps_completed == ("write", "check", "done")  # type: ignore[union-attr]
    assert store.get_conversation(project.id, meta.id).activeType == "run"
    first = scripted_llm.bodies[0]["messages"]
    assert any("Wren" in m["content"] for m in first if m["role"] == "system")  # the package agent's persona
    assert any(m["role"] == "user" and m["content"].startswith("RUN_DIRECTIVE") for m in first)
    log = assert_log_valid(store, project.id, meta.id)
    assert all((m.mode, m.runId) == ("run", run.runId) for m in log)


def test_package_agents_join_the_agent_list(qtbot: Any, host: WorkerThread, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    with wait_signal(qtbot, host.worker.agents_loaded) as loaded:
        from PySide6.QtCore import QMetaObject, Qt

        QMetaObject.invokeMethod(host.worker, "load_agents", Qt.ConnectionType.QueuedConnection)
    summaries = loaded.args[0]
    by_id = {s.id: s for s in summaries}
    assert f"{package.id}:writer" in by_id and by_id[f"{package.id}:writer"].source == package.id
    assert any(s.source == "builtin" for s in summaries)


def test_a_fresh_data_folder_gets_the_built_in_package_in_the_app(qtbot: Any, host: WorkerThread, isolated_dirs: dict[str, Path]) -> None:
    """The app, like the command line, has the Project brief package on first launch."""
    from PySide6.QtCore import QMetaObject, Qt

    from crewagent.core.packages import PackageStore

    with wait_signal(qtbot, host.worker.agents_loaded) as loaded:
        QMetaObject.invokeMethod(host.worker, "load_agents", Qt.ConnectionType.QueuedConnection)
    (package,) = PackageStore(isolated_dirs["data"]).list()
    assert "project-brief" in [w.id for w in package.workflows]
    assert {s.id for s in loaded.args[0] if s.source == package.id} == {f"{package.id}:{a.id}" for a in package.agents}


def test_load_packages_lists_the_installed_packages_with_their_workflows(
    qtbot: Any, host: WorkerThread, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    from PySide6.QtCore import QMetaObject, Qt

    package = install_notes(isolated_dirs["data"], tmp_path)
    broken = isolated_dirs["data"] / "packages" / "broken-1.0.0"
    broken.mkdir()
    (broken / "bmad.json").write_text("{not json", encoding="utf-8")
    with wait_signal(qtbot, host.worker.packages_loaded) as loaded:
        QMetaObject.invokeMethod(host.worker, "load_packages", Qt.ConnectionType.QueuedConnection)
    listing = loaded.args[0]
    ids = [p.id for p in listing.packages]
    assert package.id in ids and any(w.id == "project-brief" for _, w in listing.workflows())
    (error,) = listing.broken
    assert [problem.file for problem in error.problems] == ["bmad.json"] and "broken-1.0.0" in error.source


def test_global_commands_come_before_the_mode(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    from crewagent.core.runs import create_run

    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, entry_type="run", activeType="run")
    run = create_run(store, project, meta.id, package, "notes")
    client, recorder = TurnClient(host.worker), TurnRecorder(host.worker.turns)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))

    with wait_signal(qtbot, host.worker.turns.command_done) as done:
        client.send.emit(project.id, meta.id, "*pause", "run")
    assert done.args[:2] == [meta.id, "pause"] and "paused" in done.args[2]
    assert RunIndex(project.runtime_dir).get(run.runId).paused is True  # type: ignore[attr-defined]
    with wait_signal(qtbot, host.worker.turns.command_done) as done:
        client.send.emit(project.id, meta.id, "/dismiss", "run")
    assert "Left Run mode" in done.args[2]
    assert store.get_conversation(project.id, meta.id).activeType == "agent"
    assert recorder.of("turn_started") == [] and recorder.of("error") == []
    assert store.load_messages(project.id, meta.id).messages == []  # nothing was sent to the model
