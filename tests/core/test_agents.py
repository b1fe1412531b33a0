"""Built-in agents load and validate; a bad agents.json names the file and the field; personas render."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.agents import AgentsFileError, agent_persona, builtin_agents, find_agent, load_agents, parse_agents
from crewagent.core.context.prompts import system_prefix


def _agent(**overrides: Any) -> dict[str, Any]:
    agent: dict[str, Any] = {
        "id": "helper",
        "metadata": {"name": "Helper", "title": "Helps", "icon": "🙂"},
        "persona": {"role": "r", "identity": "i", "communication_style": "c", "principles": "be kind"},
        "menu": [{"trigger": "*go", "description": "Go", "action": "show-menu"}],
    }
    agent.update(overrides)
    return agent


def test_builtin_agents_include_a_general_assistant_and_a_code_reviewer() -> None:
    agents = builtin_agents()
    ids = [agent.id for agent in agents]
    assert ids[:2] == ["assistant", "code-reviewer"]
    reviewer = find_agent(agents, "code-reviewer")
    assert reviewer is not None and reviewer.metadata.title == "Code Reviewer" and reviewer.metadata.icon
    assert [item.command for item in reviewer.menu] == ["help", "review", "report"]
    # every "#prompt" action of the shipped menus resolves
    for agent in agents:
        for item in agent.menu:
            if item.action and item.action.startswith("#"):
                assert agent.prompt(item.action[1:]) is not None
    assert reviewer.tool_policy() == {"fs": {"enabled": True, "maxWriteBytes": 200000}}


def test_the_persona_goes_into_the_agent_system_prefix_but_not_into_chat() -> None:
    reviewer = find_agent(builtin_agents(), "code-reviewer")
    assert reviewer is not None
    persona = agent_persona(reviewer)
    assert persona.startswith("PERSONA\n- name: Rex (Code Reviewer)")
    assert "- role: Senior code reviewer" in persona and "CRITICAL_ACTIONS" in persona
    assert "  - Read the code under review and its tests before commenting." in persona

    agent_prefix = [m["content"] for m in system_prefix("agent", persona=persona)]
    chat_prefix = [m["content"] for m in system_prefix("chat", persona=persona)]
    assert persona in agent_prefix and persona not in chat_prefix


def test_system_prompt_replaces_the_rendered_persona() -> None:
    (agent,) = parse_agents({"schemaVersion": 1, "agents": [_agent(systemPrompt="  You are terse.  ")]})
    assert agent_persona(agent) == "You are terse."


def test_unknown_fields_are_kept() -> None:
    (agent,) = parse_agents({"schemaVersion": "1.1", "agents": [_agent(futureField={"x": 1})]})
    assert agent.model_dump()["futureField"] == {"x": 1}


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"schemaVersion": 1, "agents": []}, "agents"),
        ({"schemaVersion": 1, "agents": [_agent(id="bad id!")]}, "agents.0.id"),
        ({"schemaVersion": 1, "agents": [_agent(persona={"role": "r"})]}, "agents.0.persona.identity"),
        ({"schemaVersion": 1, "agents": [_agent(), _agent()]}, "duplicate agent id 'helper'"),
        ({"schemaVersion": 1, "agents": [_agent(menu=[{"trigger": "*x", "description": "d"}])]}, "exactly one of"),
        (
            {"schemaVersion": 1, "agents": [_agent(menu=[{"trigger": "*x", "description": "d", "action": "#nope"}])]},
            "unknown prompt '#nope'",
        ),
    ],
)
def test_invalid_documents_name_the_field(document: dict[str, Any], where: str) -> None:
    with pytest.raises(AgentsFileError, match="pkg/agents.json") as raised:
        parse_agents(document, source="pkg/agents.json")
    assert where in str(raised.value)


def test_load_agents_reports_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(AgentsFileError, match="cannot be read"):
        load_agents(tmp_path / "missing.json")
    broken = tmp_path / "agents.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(AgentsFileError, match="not valid JSON"):
        load_agents(broken)
    broken.write_text(json.dumps({"schemaVersion": 1, "agents": [_agent()]}), encoding="utf-8")
    assert [agent.id for agent in load_agents(broken)] == ["helper"]
