"""Subagent types: the built-in ones (``resources/agents/subagent-types.json``) and package agents.

A type gives a child its instructions (rendered into its system prompt) and its tools. Tools are
an allow-list of tool names (None: the caller's tools) plus an optional agent-style ``tools``
block (``{fs: {maxReadBytes ...}}``); both only ever tighten the caller's policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crewagent.core.agents import Agent, agent_persona
from crewagent.core.errors import CrewAgentError

TYPES_FILE = "subagent-types.json"
DEFAULT_TYPE = "general-purpose"


class SubagentTypesError(CrewAgentError):
    """A subagent types file that cannot be used; the message names the file and the field."""


class _TypeEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    name: str = ""
    description: str = Field(min_length=1)
    instructions: str | tuple[str, ...]
    tools: tuple[str, ...] | None = None
    toolPolicy: dict[str, Any] | None = None


class _TypesFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    schemaVersion: str | int
    types: tuple[_TypeEntry, ...] = Field(min_length=1)


@dataclass(frozen=True)
class SubagentType:
    """What a child of this type is told and may use."""

    id: str
    description: str
    #: The persona block of the child's system prompt.
    prompt: str
    #: The only tools the child may use (None: every tool its caller may use).
    tools: frozenset[str] | None = None
    #: An agent ``tools`` block (``ToolPolicy.tighten``); None: no further limits.
    tool_policy: Mapping[str, Any] | None = None
    #: Where the type comes from: ``builtin`` or ``package:<id>``.
    source: str = "builtin"
    name: str = ""


def _prompt(entry: _TypeEntry) -> str:
    lines = [f"SUBAGENT_TYPE\n- id: {entry.id}" + (f" ({entry.name})" if entry.name else ""), f"- purpose: {entry.description}"]
    if isinstance(entry.instructions, str):
        lines.append(entry.instructions.strip())
    else:
        lines.append("- instructions:")
        lines.extend(f"  - {line}" for line in entry.instructions)
    return "\n".join(lines)


def parse_types(data: Any, *, source: str = TYPES_FILE) -> tuple[SubagentType, ...]:
    try:
        parsed = _TypesFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(document)"
        raise SubagentTypesError(f"{source}: {where}: {first['msg']}") from exc
    ids = [entry.id for entry in parsed.types]
    if len(set(ids)) != len(ids):
        raise SubagentTypesError(f"{source}: duplicate type ids in {ids}")
    return tuple(
        SubagentType(
            id=entry.id,
            description=entry.description,
            prompt=_prompt(entry),
            tools=frozenset(entry.tools) if entry.tools is not None else None,
            tool_policy=entry.toolPolicy,
            name=entry.name or entry.id,
        )
        for entry in parsed.types
    )


@lru_cache(maxsize=1)
def builtin_types() -> tuple[SubagentType, ...]:
    """The types that ship with the app; a broken file is a bug in the build and is not softened."""
    resource = files("crewagent.resources") / "agents" / TYPES_FILE
    return parse_types(json.loads(resource.read_text(encoding="utf-8")), source=f"resources/agents/{TYPES_FILE}")


def type_from_agent(agent: Agent, *, package_id: str | None = None) -> SubagentType:
    """A package agent as a subagent type: its persona is the prompt, its ``tools`` block the limits."""
    description = agent.metadata.description or agent.metadata.title
    return SubagentType(
        id=agent.id,
        description=description,
        prompt=agent_persona(agent),
        tool_policy=agent.tool_policy(),
        source=f"package:{package_id}" if package_id else "package",
        name=agent.metadata.name,
    )


@dataclass
class SubagentTypes:
    """The types a Task call may name, in the order the tool's description lists them."""

    types: list[SubagentType] = field(default_factory=lambda: list(builtin_types()))

    def get(self, type_id: str) -> SubagentType | None:
        return next((t for t in self.types if t.id == type_id), None)

    def ids(self) -> list[str]:
        return [t.id for t in self.types]

    def add(self, extra: Iterable[SubagentType]) -> None:
        """Add types (a package's agents); a built-in type keeps its id, a clash is skipped."""
        taken = set(self.ids())
        for item in extra:
            if item.id not in taken:
                self.types.append(item)
                taken.add(item.id)

    def add_package_agents(self, agents: Sequence[Agent], *, package_id: str | None = None) -> None:
        """The hook for packages: their agents become types (the caller decides which packages count)."""
        self.add(type_from_agent(agent, package_id=package_id) for agent in agents)

    def describe(self) -> str:
        return "\n".join(f"- {t.id}: {t.description}" for t in self.types)
