"""The Workflow header's requests to the TurnWorker: list a conversation's runs, start a run, resume one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal

from crewagent.core.loop import RunProgress
from crewagent.core.runs import RunIndex
from crewagent.core.runs.conversation import begin_run
from crewagent.worker import Worker, WorkerThread
from crewagent.worker.turn_values import TurnRequest
from crewagent.worker.values import ConversationRuns
from tests.core.loop_helpers import assert_log_valid
from tests.core.run_helpers import install_notes
from tests.fakes.scripted_server import ScriptedServer, Step, call, text, tool_calls
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_worker


class RunClient(QObject):
    load_runs = Signal(str, str)
    start_run = Signal(str, str, str, str)
    resume_run = Signal(str, str, str)

    def __init__(self, worker: Worker):
        super().__init__()
        for name in ("load_runs", "start_run", "resume_run"):
            getattr(self, name).connect(getattr(worker.turns, name), Qt.ConnectionType.QueuedConnection)


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


def patch(project: Any, n: int, update: dict[str, Any]) -> Step:
    """A model answer that patches the newest run's state (its id is known only once it started)."""

    def reply(request: Any) -> Any:
        run_id = RunIndex(project.runtime_dir).list()[-1].runId
        args = json.dumps({"path": f"@state/runs/{run_id}/workflow.md", "updateFrontmatter": update})
        return tool_calls(call(f"call_{n}", "fs_apply_patch", args)).reply

    return Step(f"patch {n}", reply)


def whole_run(project: Any) -> list[Step]:
    return [
        patch(project, 1, {"currentNodeId": "check", "stepsCompleted": ["write"]}),
        patch(project, 2, {"currentNodeId": "done", "stepsCompleted": ["write", "check"]}),
        patch(project, 3, {"stepsCompleted": ["write", "check", "done"], "variables": {"workflowStatus": "complete"}}),
        text("Done."),
    ]


def collect(turns: Any, signal: str) -> list[tuple[Any, ...]]:
    got: list[tuple[Any, ...]] = []
    getattr(turns, signal).connect(lambda *args: got.append(args))
    return got


def test_start_run_switches_to_run_mode_lists_the_run_and_reports_progress_until_complete(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, entry_type="run")
    client, runs, recorder = TurnClient(host.worker), RunClient(host.worker), TurnRecorder(host.worker.turns)
    listed, progress = collect(host.worker.turns, "runs_loaded"), collect(host.worker.turns, "run_progress")
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    scripted_llm.script(*whole_run(project))

    runs.start_run.emit(project.id, meta.id, package.id, "notes")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=20_000)
    client.answer_approval.emit(recorder.of("approval_requested")[0][0].request_id, "allow_conversation")
    qtbot.waitUntil(recorder.finished, timeout=30_000)

    assert recorder.of("error") == []
    (run,) = RunIndex(project.runtime_dir).list()
    first: ConversationRuns = listed[0][0]
    assert (first.conversation_id, first.active_run_id, [r.run_id for r in first.runs]) == (meta.id, run.runId, [run.runId])
    summary = recorder.of("conversation_changed")[0][1]
    assert (summary.active_type, summary.active_run_id, summary.run_count) == ("run", run.runId, 1)
    assert recorder.of("turn_started") == [(meta.id, "run")]
    assert recorder.of("turn_finished")[0][:2] == (meta.id, "completed")
    steps = [event.steps_completed for cid, event in progress if isinstance(event, RunProgress) and cid == meta.id]
    assert steps == [("write",), ("write", "check"), ("write", "check", "done")]
    assert progress[-1][1].complete
    users = [m.text for m in store.load_messages(project.id, meta.id).messages if m.role == "user"]
    assert users == ["start"]
    assert_log_valid(store, project.id, meta.id)

    runs.load_runs.emit(project.id, meta.id)
    qtbot.waitUntil(lambda: len(listed) >= 2)
    (done,) = listed[-1][0].runs
    assert (done.phase, done.steps_completed, done.workflow_name) == ("completed", ("write", "check", "done"), "Notes")


def test_resume_run_continues_an_older_run_and_refuses_a_completed_one(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, entry_type="agent")
    older = begin_run(store, project, meta.id, package, "notes")
    newer = begin_run(store, project, meta.id, package, "notes")
    RunIndex(project.runtime_dir).update(newer.runId, phase="completed")
    store.update_conversation(project.id, meta.id, activeType="agent")
    client, runs, recorder = TurnClient(host.worker), RunClient(host.worker), TurnRecorder(host.worker.turns)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))

    with wait_signal(qtbot, host.worker.turns.error) as refused:
        runs.resume_run.emit(project.id, meta.id, newer.runId)
    assert refused.args[0].request is TurnRequest.RESUME_RUN and "complete" in refused.args[0].message
    assert refused.args[0].conversation_id == meta.id and refused.args[0].request.starts_turn

    scripted_llm.script(text("Where were we? Waiting for you."))
    runs.resume_run.emit(project.id, meta.id, older.runId)
    qtbot.waitUntil(recorder.finished, timeout=30_000)
    assert recorder.of("turn_finished")[0][:2] == (meta.id, "waiting_user")
    after = store.get_conversation(project.id, meta.id)
    assert (after.activeRunId, after.activeType) == (older.runId, "run")
    log = store.load_messages(project.id, meta.id).messages
    assert [m.text for m in log if m.role == "user"] == ["continue"]
    assert all(m.runId == older.runId for m in log)
    assert RunIndex(project.runtime_dir).get(older.runId).phase == "waiting-user"


def test_import_package_reports_every_problem_and_try_workflow_needs_the_example(
    qtbot: Any, host: WorkerThread, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    from PySide6.QtCore import QMetaObject, Q_ARG

    from crewagent.core.packages import PackageStore, example_package_id

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bmad.json").write_text('{"schemaVersion": "1.1"}', encoding="utf-8")
    with wait_signal(qtbot, host.worker.package_imported, timeout=20_000) as failed:
        QMetaObject.invokeMethod(host.worker, "import_package", Qt.ConnectionType.QueuedConnection, Q_ARG(str, str(broken)))
    answer = failed.args[0]
    assert answer.package is None and answer.problems and {problem.file for problem in answer.problems} >= {"bmad.json"}

    client = TurnClient(host.worker)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    with wait_signal(qtbot, host.worker.conversation_created) as created:
        QMetaObject.invokeMethod(host.worker, "try_workflow", Qt.ConnectionType.QueuedConnection, Q_ARG(str, project.id))
    summary = created.args[1]
    assert (summary.entry_type, summary.package_id, summary.workflow_id) == ("run", example_package_id(isolated_dirs["data"]), "project-brief")

    PackageStore(isolated_dirs["data"]).remove(summary.package_id)  # the user removed the example: it stays removed
    with wait_signal(qtbot, host.worker.error) as refused:
        QMetaObject.invokeMethod(host.worker, "try_workflow", Qt.ConnectionType.QueuedConnection, Q_ARG(str, project.id))
    assert refused.args[0] == "try_workflow" and "example workflow package was removed" in refused.args[1]
