"""The demo delegates offline: ``crewagent chat --provider demo "delegate: ..."`` runs an explore child."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.store import RuntimeStore
from tests.core.loop_helpers import assert_log_valid, result_of, shape
from tests.fakes.subagent_helpers import only_sidechain, sidechain_valid


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    project = tmp_path / "demo project"
    project.mkdir()
    (project / "README.md").write_text("# Hello\nA tiny project about subagents.\n", encoding="utf-8")
    (project / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    return project


def _chat(capsys: pytest.CaptureFixture[str], data: Path, project: Path, message: str) -> tuple[int, str, str]:
    code = main(["chat", "--data-dir", str(data), "--project", str(project), "--provider", "demo", message])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("message", ["delegate: summarise the README", "用子代理 总结 README"])
def test_the_demo_delegates_to_an_explore_child_that_reads_the_readme(
    message: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    code, out, err = _chat(capsys, data, folder, message)

    assert code == 0, err
    conversation_id = err.splitlines()[0].strip()
    store = RuntimeStore(data)
    pid = store.open_project(folder).id
    log = assert_log_valid(store, pid, conversation_id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant"]
    assert log[1].tool_calls[0].function.name == "task"
    link = log[2].to_log_dict()
    meta = only_sidechain(store, pid, conversation_id)
    assert link["subagentSessionId"] == meta.sessionId and link["subagentType"] == "explore" == meta.type
    assert link["subagentStatus"] == "completed" and meta.status == "completed"
    child = sidechain_valid(store, pid, conversation_id, meta.sessionId)
    assert shape(child) == ["user", "assistant+calls", "tool", "assistant+calls", "tool", "assistant"]
    assert [m.tool_calls[0].function.name for m in child if m.tool_calls] == ["fs.list", "fs.read"]
    assert "# Hello" in result_of(log[2])["answer"]
    assert f"subagent {meta.sessionId} (explore) answered" in out
    assert f"🤖 subagent {meta.sessionId} (explore) running" in err and "completed" in err


def test_the_demo_can_delegate_in_the_background_and_the_next_turn_sees_the_notice(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    code, out, err = _chat(capsys, data, folder, "delegate in the background: summarise the README")
    assert code == 0, err
    assert "working in the background" in out and "waiting for 1 background subagent" in err
    conversation_id = err.splitlines()[0].strip()
    store = RuntimeStore(data)
    pid = store.open_project(folder).id
    log = assert_log_valid(store, pid, conversation_id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant", "user"]
    assert log[-1].text.startswith("SUBAGENT_NOTICE") and log[-1].to_log_dict()["subagentStatus"] == "completed"

    code, out, err = _chat(capsys, data, folder, "list the files")
    assert code == 0, err
    log = assert_log_valid(store, pid, conversation_id)
    assert shape(log)[4:] == ["user", "user", "assistant+calls", "tool", "assistant"]
