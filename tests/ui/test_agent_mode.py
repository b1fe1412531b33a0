"""Agent mode through the real window and worker: the chosen agent is saved, its persona reaches the
model in Agent mode only, and the agent's menu answers empty input, numbers and triggers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from crewagent.core.agents import builtin_agents, find_agent
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker.turn_values import AgentMenu, AgentMenuEntry
from tests.fakes.scripted_server import ScriptedServer, text
from tests.ui.conftest import open_project
from tests.ui.test_conversation import approvals, host, make_window, say  # noqa: F401  (fixtures and helpers)

REVIEWER_ROLE = "Senior code reviewer"  # from the code reviewer's persona in resources/agents/agents.json


def system_of(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "system")


def current(main: MainWindow, field: str) -> Any:
    """A field of the selected conversation's summary (None while there is none)."""
    summary = main.project_view.current_summary()
    return getattr(summary, field) if summary is not None else None


def open_agent_conversation(qtbot: Any, main: MainWindow, folder: Path) -> None:
    open_project(qtbot, main, folder)
    main.project_view.request_new_conversation("agent")
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and conversation.mode == "agent")
    selector = conversation.header.agent_selector
    # The built-in agents, then the agents of the built-in package (installed on first launch).
    qtbot.waitUntil(lambda: all(selector.findData(agent.id) >= 0 for agent in builtin_agents()))
    qtbot.waitUntil(lambda: selector.count() > len(builtin_agents()))


def pick_agent(qtbot: Any, main: MainWindow, agent_id: str) -> None:
    selector = main.project_view.conversation.header.agent_selector
    index = selector.findData(agent_id)
    selector.setCurrentIndex(index)
    selector.activated.emit(index)  # what a click in the list sends
    qtbot.waitUntil(lambda: current(main, "agent_id") == agent_id)


def test_the_chosen_agent_is_saved_and_its_persona_reaches_the_model_in_agent_mode_only(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, store: Any, make_window: Callable[[], MainWindow]  # noqa: F811
) -> None:
    scripted_llm.script(text("Reviewing."), text("Just chatting."))
    main = make_window()
    open_agent_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    assert conversation.agent_id == "assistant"  # no choice yet: the first agent
    pick_agent(qtbot, main, "code-reviewer")

    say(qtbot, main, "look at parser.py")
    reviewer = find_agent(builtin_agents(), "code-reviewer")
    assert reviewer is not None
    agent_system = system_of(scripted_llm.bodies[0])
    assert REVIEWER_ROLE in agent_system and reviewer.persona.identity in agent_system
    assert "- active: agent" in agent_system

    qtbot.mouseClick(conversation.header.switcher.buttons["chat"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: current(main, "active_type") == "chat")
    say(qtbot, main, "and now just chat")
    chat_system = system_of(scripted_llm.bodies[1])
    assert "- active: chat" in chat_system and REVIEWER_ROLE not in chat_system

    cid = conversation.conversation_id
    users = [m for m in store.load_messages(project.id, cid).messages if m.role == "user"]
    assert [(m.text, m.agentId) for m in users] == [("look at parser.py", "code-reviewer"), ("and now just chat", None)]
    assistants = [m for m in store.load_messages(project.id, cid).messages if m.role == "assistant"]
    assert [m.agentId for m in assistants] == ["code-reviewer", None]

    # Reopened in a new window, the conversation still has its agent.
    main.close()
    again = make_window()
    reopened = again.project_view.conversation
    qtbot.waitUntil(lambda: reopened.conversation_id == cid and reopened.loaded)
    qtbot.waitUntil(lambda: reopened.agent_id == "code-reviewer")


def test_the_agent_menu_answers_empty_input_and_a_picked_item_sends_its_prompt(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]  # noqa: F811
) -> None:
    scripted_llm.script(text("Here is the summary."), text("Hello to you."))
    main = make_window()
    open_agent_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    panel = conversation.agent_menu
    ada = builtin_agents()[0]

    # Enter on an empty line: the menu, and no model call.
    conversation.composer.input.clear()
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.isVisible())
    assert panel.list.count() == len(ada.menu) and "*summarize" in panel.list.item(1).text()
    assert not conversation.busy and scripted_llm.bodies == []

    # Picking the second item runs its prompt as the message, with the persona.
    panel.list.itemClicked.emit(panel.list.item(1))
    qtbot.waitUntil(lambda: conversation.busy)
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    assert not panel.isVisible()
    summarize = ada.prompt("summarize-project")
    assert summarize is not None
    assert scripted_llm.bodies[0]["messages"][-1] == {"role": "user", "content": summarize.content}
    assert ada.persona.role in system_of(scripted_llm.bodies[0])

    # "help" is the show-menu item; an ordinary sentence is chat with the persona.
    say(qtbot, main, "help", wait=False)
    qtbot.waitUntil(lambda: panel.isVisible() and not conversation.busy)
    say(qtbot, main, "hello there")
    assert scripted_llm.bodies[1]["messages"][-1] == {"role": "user", "content": "hello there"}


def test_an_item_that_cannot_run_says_why(qtbot: Any) -> None:
    from crewagent.ui.agent_menu_panel import AgentMenuPanel

    panel = AgentMenuPanel()
    qtbot.addWidget(panel)
    panel.show_menu(AgentMenu("conv", "pm", "Pat", "needs_package", (AgentMenuEntry(3, "*plan", "Plan a sprint", "exec"),), "plan"))
    assert panel.isVisible() and panel.note.isVisible() and panel.list.isHidden()
    assert "not a workflow" in panel.note.text() and "*plan" in panel.title.text()
    panel.show_menu(AgentMenu("conv", "pm", "Pat", "menu", (AgentMenuEntry(1, "*brief", "Write a brief", "workflow"),), ""))
    assert "Run mode" in panel.list.item(0).toolTip()
    panel.show_menu(AgentMenu("conv", "pm", "Pat", "ambiguous", (AgentMenuEntry(1, "*review", "r", "prompt"),
                                                                AgentMenuEntry(2, "*report", "r", "prompt")), "re"))
    assert panel.list.count() == 2 and "Which one?" in panel.title.text() and panel.note.isHidden()
    with qtbot.waitSignal(panel.item_chosen) as chosen:
        panel.list.itemClicked.emit(panel.list.item(1))
    assert chosen.args == [2]
