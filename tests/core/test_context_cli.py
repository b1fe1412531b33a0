"""``crewagent context`` prints what the next call would send, from the stored log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages


@pytest.fixture
def stored(isolated_dirs: dict[str, Path], tmp_path: Path) -> tuple[str, str]:
    from crewagent.core.store import RuntimeStore

    store = RuntimeStore(isolated_dirs["data"])
    project = store.open_project(tmp_path / "proj", create=True)
    meta = store.create_conversation(project.id, title="t")
    call = {"id": "call_1", "type": "function", "function": {"name": "fs.read", "arguments": "{}"}}
    for message in [
        ConversationMessage.new("user", "read it"),
        ConversationMessage.new("assistant", None, tool_calls=[call]),  # crashed before the result
        ConversationMessage.new("user", "x" * 3_000),
    ]:
        store.append_message(project.id, meta.id, message)
    return str(tmp_path / "proj"), meta.id


def test_context_json_prints_messages_and_debug(stored: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    project, conversation = stored
    code = main(["context", "--project", project, "--conversation", conversation, "--json", "--mode", "agent"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert validate_messages(out["messages"], name_pattern=DOTTED_FUNCTION_NAME) == []
    assert out["debug"]["mode"] == "agent" and out["debug"]["totalMessages"] == 3
    assert out["debug"]["excluded"]["unansweredToolCallIds"] == ["call_1"]
    assert out["messages"][-1]["content"] == "x" * 3_000


def test_context_plain_prints_the_array_and_fails_over_budget(
    stored: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    project, conversation = stored
    assert main(["context", "--project", project, "--conversation", conversation]) == 0
    captured = capsys.readouterr()
    assert isinstance(json.loads(captured.out), list) and "% of budget" in captured.err

    code = main(["context", "--project", project, "--conversation", conversation, "--max-chars", "50"])
    captured = capsys.readouterr()
    assert code == 1 and "CONTEXT_STILL_TOO_LARGE" in captured.err and json.loads(captured.out) == []


def test_context_unknown_conversation_is_a_usage_error(stored: tuple[str, str]) -> None:
    project, _ = stored
    assert main(["context", "--project", project, "--conversation", "conv_nope"]) == 2
