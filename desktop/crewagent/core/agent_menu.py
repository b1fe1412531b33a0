"""Agent-mode input routed through the agent's menu (PACKAGE-FORMAT.md, "Agent menu (Agent mode)").

In order: empty input shows the menu; a number picks that item (1-based); an exact trigger
picks it (case-insensitive, a leading ``*`` ignored); a unique fuzzy match picks it, several ask
which; anything else is chat with the persona. A picked item then does what its target says: a
``show-menu`` action shows the menu, ``#prompt-id`` sends that prompt, any other action text is
sent as the instruction, and a ``workflow`` item (or an ``exec`` of a workflow.md) starts a run (core.agent_catalog).

Fuzzy matching is kept narrow on purpose, so that ordinary sentences stay chat: only a single
word is matched, against the start or inside of a trigger, or as a near miss of one ("reveiw").
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from crewagent.core.agents import SHOW_MENU, Agent, MenuItem

#: How close a mistyped word must be to a trigger to count as a fuzzy match (difflib ratio).
NEAR_MISS = 0.8
#: Shorter words than this are not fuzzy-matched ("a", "r" would match half the menu).
MIN_FUZZY = 2


@dataclass(frozen=True, slots=True)
class ShowMenu:
    """Show the agent's menu. ``query`` is set when a number was out of range."""

    query: str = ""


@dataclass(frozen=True, slots=True)
class AskWhich:
    """Several items match ``query``: ask which (``candidates`` are 0-based item indexes)."""

    query: str
    candidates: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Picked:
    """The input picked one item (``index`` is 0-based)."""

    index: int
    item: MenuItem


@dataclass(frozen=True, slots=True)
class Chat:
    """Not a menu command: chat with the persona, ``text`` as typed."""

    text: str


Route = ShowMenu | AskWhich | Picked | Chat


def command_of(text: str) -> str:
    """How input and triggers are compared: trimmed, lower-cased, without leading ``*``."""
    return text.strip().lstrip("*").strip().lower()


def route(text: str, menu: Sequence[MenuItem]) -> Route:
    """Where Agent-mode input goes, by the rules in the module docstring."""
    stripped = text.strip()
    if not stripped:
        return ShowMenu()
    if stripped.isdigit():
        number = int(stripped)
        if 1 <= number <= len(menu):
            return Picked(number - 1, menu[number - 1])
        return ShowMenu(query=stripped)
    command = command_of(stripped)
    for index, item in enumerate(menu):
        if item.command == command:
            return Picked(index, item)
    matches = fuzzy_matches(command, menu)
    if len(matches) == 1:
        return Picked(matches[0], menu[matches[0]])
    if matches:
        return AskWhich(stripped, matches)
    return Chat(text)


def fuzzy_matches(command: str, menu: Sequence[MenuItem]) -> tuple[int, ...]:
    """Indexes of the items a single word fuzzily names: a prefix, a part, or a near miss of the trigger."""
    if len(command) < MIN_FUZZY or any(ch.isspace() for ch in command):
        return ()
    found = []
    for index, item in enumerate(menu):
        trigger = item.command
        if command in trigger or difflib.SequenceMatcher(None, command, trigger).ratio() >= NEAR_MISS:
            found.append(index)
    return tuple(found)


# -- what a picked item does ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendPrompt:
    """Run a turn with ``text`` as the user's message (a ``#prompt`` or an inline action)."""

    text: str
    item: MenuItem


@dataclass(frozen=True, slots=True)
class NeedsPackage:
    """The item starts a workflow or runs a file from its package (core.routing decides what runs)."""

    kind: str  # "workflow" or "exec"
    target: str
    item: MenuItem


Outcome = ShowMenu | AskWhich | SendPrompt | NeedsPackage | Chat


def resolve(agent: Agent, text: str) -> Outcome:
    """Route ``text`` through ``agent``'s menu and say what to do with it."""
    routed = route(text, agent.menu)
    if not isinstance(routed, Picked):
        return routed
    item = routed.item
    if item.workflow:
        return NeedsPackage("workflow", item.workflow, item)
    if item.exec:
        return NeedsPackage("exec", item.exec, item)
    action = item.action or ""
    if action == SHOW_MENU:
        return ShowMenu()
    if action.startswith("#"):
        prompt = agent.prompt(action[1:])
        # parse_agents checks that every "#id" names a prompt of the agent.
        assert prompt is not None, f"menu item {item.trigger!r} refers to an unknown prompt"
        return SendPrompt(prompt.content, item)
    return SendPrompt(action, item)


def item_kind(item: MenuItem) -> str:
    """``menu``, ``prompt``, ``workflow`` or ``exec``: what picking the item does, for display."""
    if item.workflow:
        return "workflow"
    if item.exec:
        return "exec"
    return "menu" if item.action == SHOW_MENU else "prompt"
