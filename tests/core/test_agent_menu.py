"""Agent-mode input routing through an agent's menu: the rules of PACKAGE-FORMAT.md, as a table."""

from __future__ import annotations

import pytest

from crewagent.core.agent_menu import AskWhich, Chat, NeedsPackage, Picked, SendPrompt, ShowMenu, item_kind, resolve, route
from crewagent.core.agents import Agent, MenuItem, builtin_agents, effective_agent, parse_agents

MENU = (
    MenuItem(trigger="*help", description="Show this menu", action="show-menu"),
    MenuItem(trigger="*review", description="Review a file", action="#review-file"),
    MenuItem(trigger="*report", description="Write the report", action="#review-report"),
    MenuItem(trigger="*plan-sprint", description="Plan a sprint", workflow="sprint-planning"),
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ShowMenu()),
        ("   ", ShowMenu()),
        ("1", Picked(0, MENU[0])),
        ("4", Picked(3, MENU[3])),
        (" 2 ", Picked(1, MENU[1])),
        ("0", ShowMenu(query="0")),  # numbers are 1-based
        ("9", ShowMenu(query="9")),  # out of range: show what there is
        ("*review", Picked(1, MENU[1])),
        ("review", Picked(1, MENU[1])),  # the leading * is optional
        ("REVIEW", Picked(1, MENU[1])),  # case-insensitive
        ("**Report", Picked(2, MENU[2])),
        ("rev", Picked(1, MENU[1])),  # a unique prefix
        ("sprint", Picked(3, MENU[3])),  # a unique part
        ("reveiw", Picked(1, MENU[1])),  # a near miss
        ("re", AskWhich("re", (1, 2))),  # several: ask which
        ("*re", AskWhich("*re", (1, 2))),
        ("r", Chat("r")),  # too short to guess from
        ("review my parser please", Chat("review my parser please")),  # a sentence is chat
        ("what is in this project?", Chat("what is in this project?")),
        ("hello", Chat("hello")),
    ],
)
def test_routing_table(text: str, expected: object) -> None:
    assert route(text, MENU) == expected


def test_an_empty_menu_routes_everything_but_empty_input_to_chat() -> None:
    assert route("", ()) == ShowMenu()
    assert route("1", ()) == ShowMenu(query="1")
    assert route("help", ()) == Chat("help")


def test_an_exact_trigger_wins_over_fuzzy_matches() -> None:
    menu = (MenuItem(trigger="*re", description="x", action="do re"), MenuItem(trigger="*review", description="y", action="do review"))
    assert route("re", menu) == Picked(0, menu[0])


def _agent() -> Agent:
    (agent,) = parse_agents(
        {
            "schemaVersion": "1.1",
            "agents": [
                {
                    "id": "pm",
                    "metadata": {"name": "Pat", "title": "PM"},
                    "persona": {"role": "r", "identity": "i", "communication_style": "c", "principles": "p"},
                    "prompts": [{"id": "brief", "content": "Write the project brief."}],
                    "menu": [
                        {"trigger": "*help", "description": "Menu", "action": "show-menu"},
                        {"trigger": "*brief", "description": "Brief", "action": "#brief"},
                        {"trigger": "*todo", "description": "Todos", "action": "List the open todos."},
                        {"trigger": "*plan", "description": "Plan", "workflow": "planning"},
                        {"trigger": "*build", "description": "Build", "exec": "scripts/build.md"},
                    ],
                }
            ],
        }
    )
    return agent


@pytest.mark.parametrize(
    ("text", "kind"),
    [("", ShowMenu), ("help", ShowMenu), ("1", ShowMenu), ("brief", SendPrompt), ("todo", SendPrompt),
     ("plan", NeedsPackage), ("5", NeedsPackage), ("hello there", Chat), ("b", Chat)],
)
def test_what_a_picked_item_does(text: str, kind: type) -> None:
    assert isinstance(resolve(_agent(), text), kind)


def test_a_prompt_item_sends_the_prompt_and_an_inline_action_sends_its_text() -> None:
    agent = _agent()
    assert resolve(agent, "*brief") == SendPrompt("Write the project brief.", agent.menu[1])
    assert resolve(agent, "3") == SendPrompt("List the open todos.", agent.menu[2])
    assert resolve(agent, "plan") == NeedsPackage("workflow", "planning", agent.menu[3])
    assert resolve(agent, "build") == NeedsPackage("exec", "scripts/build.md", agent.menu[4])
    assert [item_kind(item) for item in agent.menu] == ["menu", "prompt", "prompt", "workflow", "exec"]


def test_every_builtin_agent_has_a_menu_that_routes() -> None:
    for agent in builtin_agents():
        assert isinstance(resolve(agent, ""), ShowMenu)
        for number in range(1, len(agent.menu) + 1):
            assert not isinstance(resolve(agent, str(number)), (Chat, AskWhich))


def test_the_effective_agent_is_the_chosen_one_else_the_first() -> None:
    agents = builtin_agents()
    assert effective_agent(agents, "code-reviewer") is agents[1]
    assert effective_agent(agents, None) is agents[0]
    assert effective_agent(agents, "gone") is agents[0]
    assert effective_agent((), "x") is None
