"""Where the user's input goes, in every mode: one routing for the app and the command line.

In order (PACKAGE-FORMAT.md, issue 16): a global command (``/menu /pause /stop /resume
/dismiss``, or with ``*``) is applied first, whatever the mode; in Agent mode the input then goes
through the agent's menu (core.agent_menu), where a workflow item starts its run in this
conversation; everything else is a turn in the conversation's mode (in Run mode the builder
wraps it as ``USER_INPUT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from crewagent.core import agent_catalog, agent_menu
from crewagent.core.agents import Agent, builtin_agents, effective_agent
from crewagent.core.commands import GlobalCommand, apply_command, global_command
from crewagent.core.messages import Mode
from crewagent.core.store import ProjectInfo, RuntimeStore


@dataclass(frozen=True, slots=True)
class RunTurn:
    """Run a turn with ``text`` as the user message, in ``mode`` (the conversation is in it now)."""

    text: str
    mode: Mode
    #: What routing did first, for the user ("Resuming run ...", "Started run ...").
    note: str = ""


@dataclass(frozen=True, slots=True)
class ShowAgentMenu:
    """Answer with the agent's menu instead of a turn: all of it, the ambiguous items, or one that needs a package."""

    agent: Agent
    reason: Literal["menu", "ambiguous", "needs_package"]
    #: 0-based indexes of the menu items to show.
    items: tuple[int, ...]
    query: str = ""


@dataclass(frozen=True, slots=True)
class CommandDone:
    """A global command was applied and needs no turn; ``message`` says what happened."""

    command: GlobalCommand
    message: str


Routed = RunTurn | ShowAgentMenu | CommandDone


def route_input(store: RuntimeStore, project: ProjectInfo, conversation_id: str, text: str, mode: Mode) -> Routed:
    """Route ``text`` typed in ``mode`` (blocking: may read packages, start a run, update the conversation)."""
    command = global_command(text)
    if command is not None:
        applied = apply_command(store, project, conversation_id, command)
        if applied.then == "turn":
            return RunTurn(applied.text, "run", applied.message)
        if applied.then == "menu":
            return route_input(store, project, conversation_id, "", "agent")
        return CommandDone(command, applied.message)
    if mode != "agent":
        return RunTurn(text, mode)
    meta = store.get_conversation(project.id, conversation_id)
    entry = agent_catalog.find(store.data_dir, meta.agentId)
    agent = entry.agent if entry is not None else effective_agent(builtin_agents(), None)
    if agent is None:  # no agents at all: Agent mode is chat with no persona
        return RunTurn(text, "agent")
    outcome = agent_menu.resolve(agent, text)
    if isinstance(outcome, agent_menu.Chat | agent_menu.SendPrompt):
        return RunTurn(outcome.text, "agent")
    if isinstance(outcome, agent_menu.ShowMenu):
        return ShowAgentMenu(agent, "menu", tuple(range(len(agent.menu))), outcome.query)
    if isinstance(outcome, agent_menu.AskWhich):
        return ShowAgentMenu(agent, "ambiguous", outcome.candidates, outcome.query)
    if outcome.kind == "workflow" or outcome.target.strip().endswith("workflow.md"):
        # A workflow item (or an exec of a workflow.md): its run starts here, in Run mode.
        run = agent_catalog.start_menu_workflow(
            store, project, conversation_id, entry or agent_catalog.CatalogAgent(agent), outcome.target
        )
        return RunTurn("start", "run", f"Started run {run.runId} ({run.packageId}:{run.workflowId}).")
    index = next(i for i, item in enumerate(agent.menu) if item is outcome.item)
    return ShowAgentMenu(agent, "needs_package", (index,), text)
