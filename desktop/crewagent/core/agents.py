"""Agent personas (``agents.json``, PACKAGE-FORMAT.md): load, validate, and render for the system prefix.

The built-in agents live in ``resources/agents/agents.json``; packages bring their own file in
the same shape. Agents are frozen pydantic values, safe to hand to another thread. Unknown
fields are kept (``extra="allow"``) so that a file written for a newer format still loads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from crewagent.core.context.prompts import render_persona
from crewagent.core.errors import CrewAgentError
from crewagent.core.jsonparse import parse_json

BUILTIN_AGENTS_FILE = "agents.json"
#: The action of a menu item that shows the menu again (``*help``).
SHOW_MENU = "show-menu"

#: The agentId of the format's agents.schema.json (``bmm:analyst`` is a valid id): a package the schema
#: accepts must load. (pydantic's regex engine reads ``$`` as the end of the text, as ECMA-262 does.)
_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"


class AgentsFileError(CrewAgentError):
    """An ``agents.json`` that cannot be used; the message names the file and the field."""


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class AgentMetadata(_Value):
    name: str = Field(min_length=1)
    title: str = Field(min_length=1)
    icon: str = ""
    description: str = ""


class AgentPersona(_Value):
    role: str = Field(min_length=1)
    identity: str = Field(min_length=1)
    communication_style: str = Field(min_length=1)
    #: One paragraph or a list of short rules.
    principles: str | tuple[str, ...]


class AgentPrompt(_Value):
    id: str = Field(min_length=1)
    content: str = Field(min_length=1)


class MenuItem(_Value):
    """One entry of an agent's menu; exactly one of ``workflow``, ``exec`` and ``action``."""

    trigger: str = Field(min_length=1)
    description: str = Field(min_length=1)
    workflow: str | None = None
    exec: str | None = None
    action: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> MenuItem:
        targets = [name for name in ("workflow", "exec", "action") if getattr(self, name)]
        if len(targets) != 1:
            raise ValueError(f"a menu item needs exactly one of workflow, exec or action (has {targets or 'none'})")
        return self

    @property
    def command(self) -> str:
        """The trigger without its leading ``*``, lower-cased (how routing compares input)."""
        return self.trigger.lstrip("*").strip().lower()


class FsTools(_Value):
    enabled: bool = True
    maxReadBytes: int | None = Field(default=None, ge=1)
    maxWriteBytes: int | None = Field(default=None, ge=1)


class McpTools(_Value):
    enabled: bool = False
    allowedServers: tuple[str, ...] = ()


class TerminalTools(_Value):
    """Command tools for this agent; each field can only narrow the settings' ``tools.terminal``."""

    enabled: bool = True
    timeoutMs: int | None = Field(default=None, ge=1)
    maxStdoutBytes: int | None = Field(default=None, ge=1)
    maxStderrBytes: int | None = Field(default=None, ge=1)
    allowedRoots: tuple[str, ...] | None = None
    allowShellExec: bool | None = None
    envAllowlist: tuple[str, ...] | None = None


class AgentTools(_Value):
    """An agent's tool policy; it can only tighten the system policy (see core.tools.policy)."""

    fs: FsTools | None = None
    mcp: McpTools | None = None
    terminal: TerminalTools | None = None


class Agent(_Value):
    """One persona with its menu, as PACKAGE-FORMAT.md describes it."""

    id: str = Field(pattern=_ID_PATTERN)
    metadata: AgentMetadata
    persona: AgentPersona
    critical_actions: tuple[str, ...] = ()
    prompts: tuple[AgentPrompt, ...] = ()
    menu: tuple[MenuItem, ...] = ()
    #: Replaces the rendered persona entirely when set.
    systemPrompt: str | None = None
    tools: AgentTools | None = None

    @model_validator(mode="after")
    def _references(self) -> Agent:
        prompt_ids = [prompt.id for prompt in self.prompts]
        if len(set(prompt_ids)) != len(prompt_ids):
            raise ValueError(f"duplicate prompt ids in agent {self.id!r}")
        triggers = [item.command for item in self.menu]
        if len(set(triggers)) != len(triggers):
            raise ValueError(f"duplicate menu triggers in agent {self.id!r}")
        for item in self.menu:
            # "#id" points at one of the agent's prompts; anything else is a built-in action.
            if item.action and item.action.startswith("#") and item.action[1:] not in prompt_ids:
                raise ValueError(f"menu item {item.trigger!r} refers to an unknown prompt {item.action!r}")
        return self

    def prompt(self, prompt_id: str) -> AgentPrompt | None:
        return next((prompt for prompt in self.prompts if prompt.id == prompt_id), None)

    def tool_policy(self) -> dict[str, Any] | None:
        """The ``tools`` section as the plain dict ``ToolPolicy.tighten`` takes (None: no tightening)."""
        return self.tools.model_dump(mode="json", exclude_none=True) if self.tools else None


class AgentsFile(_Value):
    schemaVersion: str | int
    agents: tuple[Agent, ...] = Field(min_length=1)

    @field_validator("agents")
    @classmethod
    def _unique_ids(cls, agents: tuple[Agent, ...]) -> tuple[Agent, ...]:
        seen: set[str] = set()
        for agent in agents:
            if agent.id in seen:
                raise ValueError(f"duplicate agent id {agent.id!r}")
            seen.add(agent.id)
        return agents


def parse_agents(data: Any, *, source: str = "agents.json") -> tuple[Agent, ...]:
    """Validate an already-parsed ``agents.json`` document; ``source`` names it in errors."""
    try:
        return AgentsFile.model_validate(data).agents
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(document)"
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        raise AgentsFileError(f"{source}: {where}: {first['msg']}{more}") from exc


def load_agents(path: str | Path) -> tuple[Agent, ...]:
    """Read and validate an ``agents.json`` file (a package's, or the built-in one)."""
    path = Path(path)
    try:
        data = parse_json(path.read_bytes())
    except OSError as exc:
        raise AgentsFileError(f"{path}: cannot be read ({exc.strerror or exc}).") from exc
    except ValueError as exc:
        raise AgentsFileError(f"{path}: {exc}.") from exc
    return parse_agents(data, source=str(path))


@lru_cache(maxsize=1)
def builtin_agents() -> tuple[Agent, ...]:
    """The agents that ship with the app (``resources/agents/agents.json``), in file order.

    A broken built-in file is a bug in the build, so the error is not softened.
    """
    resource = files("crewagent.resources") / "agents" / BUILTIN_AGENTS_FILE
    return parse_agents(json.loads(resource.read_text(encoding="utf-8")), source=f"resources/agents/{BUILTIN_AGENTS_FILE}")


def find_agent(agents: Sequence[Agent], agent_id: str) -> Agent | None:
    return next((agent for agent in agents if agent.id == agent_id), None)


def effective_agent(agents: Sequence[Agent], agent_id: str | None) -> Agent | None:
    """The conversation's agent: the one it chose, else the first (what the selector shows first).

    None only when there are no agents at all.
    """
    chosen = find_agent(agents, agent_id) if agent_id else None
    return chosen or (agents[0] if agents else None)


def agent_persona(agent: Agent) -> str:
    """The persona block of the system prefix (Agent and Run modes): ``systemPrompt`` or the rendering."""
    return render_persona(agent.model_dump(mode="json", exclude_none=True))


def turn_agent(agent_id: str | None, mode: str) -> Agent | None:
    """The agent whose persona a turn carries: the conversation's in Agent and Run mode, none in Chat.

    One rule for the app and ``crewagent chat`` (PACKAGE-FORMAT.md, prompt layers).
    """
    if mode == "chat":
        return None
    return effective_agent(builtin_agents(), agent_id)

