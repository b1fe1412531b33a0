"""``crewagent run`` / ``crewagent runs`` / ``crewagent chat --mode run``, and chat -> agent -> run in one conversation."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from crewagent.cli import main
from crewagent.core.llm.demo import DemoResponder, demo_config
from crewagent.core.llm.local_server import LocalServer
from crewagent.core.loop import LoopEvent, TurnFinished
from crewagent.core.packages import PackageStore, ensure_builtin_packages
from crewagent.core.runs import RunIndex, create_run
from crewagent.core.settings import Settings
from crewagent.core.store import RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn
from tests.cli.test_chat_cli import _log
from tests.core.loop_helpers import assert_log_valid
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote


def _cli(zygote: Zygote, data: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m crewagent <argv>`` as a real process, forked from the warmed-up zygote (tests/fakes/zygote.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return zygote.run([*argv[:1], "--data-dir", str(data), *argv[1:]], env=env, timeout=180)


@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_the_built_in_package_runs_to_completed_on_the_demo_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crewagent_zygote: Zygote
) -> None:
    """The issue's "Done when": a fresh data folder, no key, one command (a real process; the
    listings after it run in this process)."""
    data, folder = tmp_path / "fresh-data", tmp_path / "my project"
    proc = _cli(crewagent_zygote, data, "run", "--project", str(folder), "--workflow", "project-brief", "--provider", "demo", "--yes")

    assert proc.returncode == 0, proc.stderr
    assert "[demo] The workflow is complete" in proc.stdout
    conversation_id = proc.stderr.splitlines()[0].strip()
    brief = (folder / "artifacts" / "brief.md").read_text(encoding="utf-8")
    assert brief.startswith("# Example project: project brief") and "## Goals" in brief
    code, listed, err = _main(capsys, "runs", "--data-dir", str(data), "--project", str(folder), "--json")
    assert code == 0, err
    (row,) = json.loads(listed)
    assert (row["phase"], row["currentNodeId"], row["workflowId"]) == ("completed", "end", "project-brief")
    assert row["stepsCompleted"] == ["gather-goals", "draft-brief", "review", "end"]
    assert row["conversationId"] == conversation_id and row["packageId"] == "project-brief-1.0.0"
    log = _log(data, folder, conversation_id)
    assert all((m.mode, m.runId, m.workflowId) == ("run", row["runId"], "project-brief") for m in log)
    asked = [m for m in log if m.toolName == "ui.ask_user"]
    assert len(asked) == 2 and all(json.loads(m.text)["ok"] for m in asked)  # --yes answered with the defaults
    code, table, err = _main(capsys, "runs", "--data-dir", str(data), "--project", str(folder))
    assert code == 0, err
    assert row["runId"] in table and "completed" in table


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, folder = tmp_path / "data", tmp_path / "p"
    code, _out, err = _main(capsys, "run", "--data-dir", str(data), "--project", str(folder), "--workflow", "nope", "--provider", "demo")
    assert code == 2 and "No workflow 'nope'" in err and "project-brief-1.0.0:project-brief" in err
    code, _out, err = _main(capsys, "run", "--data-dir", str(data), "--project", str(folder), "--provider", "demo")
    assert code == 2 and "has a run to continue" in err and "Traceback" not in err
    code, _out, err = _main(capsys, "chat", "--data-dir", str(data), "--project", str(folder), "--mode", "run", "--provider", "demo", "hi")
    assert code == 2 and "no workflow run" in err
    store = RuntimeStore(data)
    project = store.open_project(folder)
    assert RunIndex(project.runtime_dir).list() == []
    assert store.list_conversations(project.id) == []  # the refused `chat --mode run` created nothing
    chat = store.create_conversation(project.id, entry_type="chat")
    code, _out, err = _main(
        capsys, "chat", "--data-dir", str(data), "--project", str(folder), "--conversation", chat.id, "--mode", "run", "--provider", "demo", "hi"
    )
    assert code == 2 and "no workflow run" in err
    assert RuntimeStore(data).get_conversation(project.id, chat.id).activeType == "chat"  # ... nor switched the conversation's mode
    code, out, _err = _main(capsys, "runs", "--data-dir", str(data), "--project", str(folder))
    assert code == 0 and "No runs" in out


def test_chat_mode_run_continues_the_active_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_llm: LocalServer) -> None:
    data, folder = tmp_path / "data", tmp_path / "p"
    store = RuntimeStore(data)
    project = store.open_project(folder, create=True)
    ensure_builtin_packages(data)
    package = PackageStore(data).get("project-brief-1.0.0")
    meta = store.create_conversation(project.id, entry_type="run")
    run = create_run(store, project, meta.id, package, "project-brief")
    os.environ.update({"OPENAI_BASE_URL": demo_llm.base_url, "OPENAI_API_KEY": "sk-x", "CREWAGENT_MODEL": "demo"})
    try:
        argv = ["chat", "--data-dir", str(data), "--project", str(folder), "--conversation", meta.id, "--mode", "run"]
        code, out, err = _main(capsys, *argv, "--provider", "openai-compatible", "--yes", "My goal: ship it")
    finally:
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CREWAGENT_MODEL"):
            os.environ.pop(key, None)
    assert code == 0, err
    assert "The workflow is complete" in out
    assert RunIndex(project.runtime_dir).get(run.runId).phase == "completed"
    # ask_user answered with defaults: the user's own text was not needed, the brief has the defaults
    assert "Example project" in (folder / "artifacts" / "brief.md").read_text(encoding="utf-8")


def _turn(store: RuntimeStore, project: Any, cid: str, text: str, mode: Any, config: Any) -> list[LoopEvent]:
    async def go() -> list[LoopEvent]:
        hooks = TurnHooks(approver=AutoApprover())
        return [e async for e in run_turn(store, project, cid, text, mode=mode, settings=Settings(), config=config, hooks=hooks)]

    return asyncio.run(go())


def test_chat_then_agent_then_run_in_one_conversation(tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    """The seed's integration test: the history stays, each request's prefix matches its mode, the run completes."""
    bodies: list[Any] = []

    class Recording(DemoResponder):
        def chat_completion(self, request: Any) -> Any:
            bodies.append(request.body)
            return super().chat_completion(request)

    store = RuntimeStore(isolated_dirs["data"])
    folder = tmp_path / "p"
    project = store.open_project(folder, create=True)
    (folder / "README.md").write_text("# hi\n", encoding="utf-8")
    meta = store.create_conversation(project.id)
    with LocalServer(Recording(chunk_delay=0.0)) as server:
        config = demo_config(server.base_url)
        assert isinstance(_turn(store, project, meta.id, "list the files", "chat", config)[-1], TurnFinished)
        chat_requests = len(bodies)
        store.update_conversation(project.id, meta.id, activeType="agent")
        _turn(store, project, meta.id, "hello there", "agent", config)
        agent_requests = len(bodies)
        ensure_builtin_packages(isolated_dirs["data"])
        package = PackageStore(isolated_dirs["data"]).get("project-brief-1.0.0")
        run = create_run(store, project, meta.id, package, "project-brief")
        store.update_conversation(project.id, meta.id, activeType="run")
        events = _turn(store, project, meta.id, "start", "run", config)
    end = events[-1]
    assert isinstance(end, TurnFinished) and end.reason == "completed", end

    def systems(body: Any) -> str:
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    for body in bodies[:chat_requests]:
        assert "- active: chat" in systems(body) and "PERSONA" not in systems(body)
    for body in bodies[chat_requests:agent_requests]:
        assert "- active: agent" in systems(body) and "PERSONA" in systems(body)
    for body in bodies[agent_requests:]:
        assert "- active: run" in systems(body)
        assert "Mira" in systems(body) or "Theo" in systems(body)  # the package agent of the node
        contents = [m.get("content") or "" for m in body["messages"]]
        assert "list the files" in contents and "hello there" in contents  # the history stayed
        assert any(c.startswith("RUN_DIRECTIVE") for c in contents)
    log = assert_log_valid(store, project.id, meta.id)
    assert [m.mode for m in log if m.role == "user"] == ["chat", "agent", "run"]
    assert all(m.runId == run.runId for m in log if m.mode == "run")
    assert RunIndex(project.runtime_dir).get(run.runId).phase == "completed"


def test_context_shows_the_next_run_request_without_touching_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from crewagent.core.runs.engine import running_marker

    data, folder = tmp_path / "data", tmp_path / "p"
    store = RuntimeStore(data)
    project = store.open_project(folder, create=True)
    ensure_builtin_packages(data)
    meta = store.create_conversation(project.id, entry_type="run", activeType="run")
    run = create_run(store, project, meta.id, PackageStore(data).get("project-brief-1.0.0"), "project-brief")
    from crewagent.core.messages import ConversationMessage

    store.append_message(project.id, meta.id, ConversationMessage.new("user", "start", mode="run", runId=run.runId))
    code, out, _err = _main(capsys, "context", "--data-dir", str(data), "--project", str(folder), "--conversation", meta.id)
    assert code == 0
    messages = json.loads(out)
    systems = "\n".join(m["content"] for m in messages if m["role"] == "system")
    assert "- active: run" in systems and "Mira" in systems  # the entry node's agent (analyst)
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0].startswith("RUN_DIRECTIVE") and "- currentNodeId: gather-goals" in users[0]
    assert users[1].startswith("NODE_BRIEF") and users[2] == "USER_INPUT\n- forNodeId: gather-goals\nstart"
    assert not running_marker(project, run.runId).exists()
    assert RunIndex(project.runtime_dir).get(run.runId).phase == "idle"


def test_without_yes_and_without_a_terminal_the_run_waits_instead_of_looping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_llm: LocalServer
) -> None:
    data, folder = tmp_path / "data", tmp_path / "p"
    os.environ.update({"OPENAI_BASE_URL": demo_llm.base_url, "OPENAI_API_KEY": "sk-x", "CREWAGENT_MODEL": "demo"})
    try:
        argv = ["run", "--data-dir", str(data), "--project", str(folder), "--workflow", "project-brief"]
        code, out, err = _main(capsys, *argv, "--provider", "openai-compatible")
    finally:
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CREWAGENT_MODEL"):
            os.environ.pop(key, None)
    assert code == 0, err
    assert "was refused" in out and "the run waits for your input" in err
    store = RuntimeStore(data)
    project = store.open_project(folder)
    (run,) = RunIndex(project.runtime_dir).list()
    assert run.phase == "waiting-user" and run.stepsCompleted == []
