"""After an Edit, every command reads the branch the window shows (issue 18 item 12)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from crewagent.cli import main
from crewagent.core.messages import ConversationMessage


def test_context_export_validate_and_chat_agree_on_the_current_branch(
    capsys: pytest.CaptureFixture[str], store: Any, project: Any, conversation: Any
) -> None:
    pid, cid, root = project.id, conversation.id, str(project.root)
    asked = store.append_message(pid, cid, ConversationMessage.new("user", "2+2?"))
    store.append_message(pid, cid, ConversationMessage.new("assistant", "Four."))
    store.append_message(pid, cid, ConversationMessage.new("user", "5+5?", replaces=asked.id))

    assert main(["context", "--project", root, "--conversation", cid, "--json"]) == 0
    context = json.loads(capsys.readouterr().out)
    assert [m["content"] for m in context["messages"] if m["role"] != "system"] == ["5+5?"]
    assert len(context["debug"]["excluded"]["supersededMessageIds"]) == 2

    assert main(["export", "--project", root, "--conversation", cid, "--format", "openai"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"role": "user", "content": "5+5?"}]
    assert main(["export", "--project", root, "--conversation", cid, "--format", "markdown"]) == 0
    assert "2+2?" not in capsys.readouterr().out
    assert main(["export", "--project", root, "--conversation", cid, "--format", "jsonl"]) == 0
    raw = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["content"] for line in raw] == ["2+2?", "Four.", "5+5?"] and raw[-1]["replaces"] == asked.id

    assert main(["validate", str(store.log_path(pid, cid)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"valid": True, "messageCount": 1}

    # A turn from the command line goes on from the current branch.
    assert main(["chat", "--project", root, "--conversation", cid, "--provider", "demo", "thanks"]) == 0
    capsys.readouterr()
    assert main(["context", "--project", root, "--conversation", cid, "--json"]) == 0
    users = [m["content"] for m in json.loads(capsys.readouterr().out)["messages"] if m["role"] == "user"]
    assert users == ["5+5?", "thanks"]
