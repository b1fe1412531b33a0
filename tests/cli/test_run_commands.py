"""Global commands (/menu /pause /stop /resume /dismiss, or with a leading *) come before any mode's routing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.commands import apply_command, global_command
from crewagent.core.llm.local_server import LocalServer
from crewagent.core.packages import PackageStore, ensure_builtin_packages
from crewagent.core.runs import RunIndex, create_run
from crewagent.core.store import RuntimeStore
from tests.core.loop_helpers import assert_log_valid


@pytest.mark.parametrize(
    ("text", "expected"),
    [("/pause", "pause"), ("*Resume ", "resume"), ("  /STOP", "stop"), ("*menu", "menu"), ("/dismiss", "dismiss"),
     ("/pause now", None), ("pause", None), ("/", None), ("*note", None), ("/help", None)],
)
def test_what_counts_as_a_global_command(text: str, expected: str | None) -> None:
    assert global_command(text) == expected


def test_pause_dismiss_and_resume_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_llm: LocalServer) -> None:
    data, folder = tmp_path / "data", tmp_path / "p"
    store = RuntimeStore(data)
    project = store.open_project(folder, create=True)
    ensure_builtin_packages(data)
    meta = store.create_conversation(project.id, entry_type="run", activeType="run")
    run = create_run(store, project, meta.id, PackageStore(data).get("project-brief-1.0.0"), "project-brief")
    index = RunIndex(project.runtime_dir)

    outcome = apply_command(store, project, meta.id, "pause")
    assert outcome.then == "stop" and "paused" in outcome.message
    assert index.get(run.runId).phase == "idle" and index.get(run.runId).paused is True  # type: ignore[attr-defined]

    code = main(["run", "--data-dir", str(data), "--project", str(folder), "--conversation", meta.id, "/dismiss"])
    assert code == 0 and "Left Run mode" in capsys.readouterr().out
    assert store.get_conversation(project.id, meta.id).activeType == "agent"
    assert apply_command(store, project, meta.id, "menu").then == "menu"

    os.environ.update({"OPENAI_BASE_URL": demo_llm.base_url, "OPENAI_API_KEY": "sk-x", "CREWAGENT_MODEL": "demo"})
    try:
        argv = ["chat", "--data-dir", str(data), "--project", str(folder), "--conversation", meta.id]
        code = main([*argv, "--provider", "openai-compatible", "--yes", "*resume"])
    finally:
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CREWAGENT_MODEL"):
            os.environ.pop(key, None)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Resuming run" in captured.err and "The workflow is complete" in captured.out
    resumed = index.get(run.runId)
    assert resumed.phase == "completed" and resumed.paused is False  # type: ignore[attr-defined]
    assert store.get_conversation(project.id, meta.id).activeType == "run"
    log = assert_log_valid(store, project.id, meta.id)
    assert log[0].role == "user" and log[0].text == "continue"  # the command itself never reaches the model
    assert apply_command(store, project, meta.id, "resume").message.endswith("nothing to resume.")


def test_an_agent_menu_workflow_item_starts_the_run_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_llm: LocalServer
) -> None:
    data, folder = tmp_path / "data", tmp_path / "p"
    store = RuntimeStore(data)
    project = store.open_project(folder, create=True)
    ensure_builtin_packages(data)
    meta = store.create_conversation(project.id, entry_type="agent", agentId="project-brief-1.0.0:analyst")
    argv = ["chat", "--data-dir", str(data), "--project", str(folder), "--conversation", meta.id, "--mode", "agent"]
    assert main([*argv, "*menu"]) == 0
    assert "1. *brief  Write a project brief (workflow)" in capsys.readouterr().out
    os.environ.update({"OPENAI_BASE_URL": demo_llm.base_url, "OPENAI_API_KEY": "sk-x", "CREWAGENT_MODEL": "demo"})
    try:
        code = main([*argv, "--provider", "openai-compatible", "--yes", "*brief"])
    finally:
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CREWAGENT_MODEL"):
            os.environ.pop(key, None)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Started run" in captured.err and "The workflow is complete" in captured.out
    (run,) = RunIndex(project.runtime_dir).list()
    assert (run.conversationId, run.phase, run.activeAgentId) == (meta.id, "completed", "analyst")
    assert store.get_conversation(project.id, meta.id).activeType == "run"
