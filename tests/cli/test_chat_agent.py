"""crewagent chat carries the conversation's agent persona in Agent mode and none in Chat mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewagent.cli import main
from tests.fakes.scripted_server import API_KEY, ScriptedServer, text


@pytest.fixture
def provider(scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("CREWAGENT_MODEL", "scripted-model")
    return scripted_llm


def _system_prefix(server: ScriptedServer, index: int) -> str:
    messages = server.requests[index].body["messages"]
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


def test_agent_mode_sends_the_persona_and_chat_mode_does_not(
    provider: ScriptedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider.script(text("As your reviewer: looks fine."), text("Plain answer."))
    common = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p"), "--provider", "openai-compatible"]

    assert main(["chat", *common, "--new", "--mode", "agent", "Review my change"]) == 0
    conversation_id = capsys.readouterr().err.splitlines()[0]
    assert main(["chat", *common, "--conversation", conversation_id, "--mode", "chat", "Just chat"]) == 0

    agent_prefix, chat_prefix = _system_prefix(provider, 0), _system_prefix(provider, 1)
    assert "General-purpose assistant for the user's project" in agent_prefix
    assert "active: agent" in agent_prefix
    assert "General-purpose assistant" not in chat_prefix
    assert "active: chat" in chat_prefix
