"""Subagent types: the built-in file, package agents as types, and policies that only tighten."""

from __future__ import annotations

import pytest

from crewagent.core.agents import AgentTools, FsTools, builtin_agents
from crewagent.core.subagents import SubagentManager, SubagentTypes, builtin_types, child_policy
from crewagent.core.subagents.types import SubagentTypesError, parse_types
from crewagent.core.tools import ToolPolicy, default_registry


def test_builtin_types_are_general_purpose_and_a_read_only_explore() -> None:
    types = {t.id: t for t in builtin_types()}
    assert {"general-purpose", "explore"} <= set(types)
    assert types["general-purpose"].tools is None
    assert types["explore"].tools == frozenset({"fs.list", "fs.read", "fs.search"})
    assert types["explore"].prompt.startswith("SUBAGENT_TYPE\n- id: explore")


def test_child_policy_never_widens_the_parent_policy() -> None:
    manager = SubagentManager()
    registry = manager.register_tools(default_registry())
    explore = SubagentTypes().get("explore")
    general = SubagentTypes().get("general-purpose")
    assert explore is not None and general is not None

    parent = ToolPolicy(max_read_bytes=1000, disabled=frozenset({"fs.search"}))
    allowed = {name for name in registry.names() if child_policy(parent, registry, explore).allows(name)}
    assert allowed == {"fs.list", "fs.read"}  # the parent's fs.search stays off
    assert child_policy(parent, registry, explore).max_read_bytes == 1000
    general_allowed = {name for name in registry.names() if child_policy(parent, registry, general).allows(name)}
    assert general_allowed == {name for name in registry.names() if parent.allows(name)} - {"ui.ask_user"}
    assert not child_policy(ToolPolicy(fs_enabled=False), registry, general).allows("fs.read")


def test_package_agents_can_serve_as_types_and_their_tools_block_tightens() -> None:
    agent = builtin_agents()[0]
    types = SubagentTypes()
    types.add_package_agents([agent], package_id="pkg1")
    types.add_package_agents([agent])  # the same id again is skipped, not duplicated
    added = types.get(agent.id)
    assert added is not None and added.source == "package:pkg1" and types.ids().count(agent.id) == 1
    assert agent.metadata.name in added.prompt
    assert f"- {agent.id}: " in SubagentManager(types).tools()[0].description

    no_files = agent.model_copy(update={"id": "no-files", "tools": AgentTools(fs=FsTools(enabled=False))})
    types.add_package_agents([no_files])
    registry = default_registry()
    policy = child_policy(ToolPolicy(), registry, types.get("no-files"))  # type: ignore[arg-type]
    assert not policy.allows("fs.read") and not policy.allows("fs.write")


def test_a_broken_types_file_is_named_in_the_error() -> None:
    with pytest.raises(SubagentTypesError, match="types.0.description"):
        parse_types({"schemaVersion": "1", "types": [{"id": "x", "instructions": "y"}]}, source="t.json")
    with pytest.raises(SubagentTypesError, match="duplicate"):
        parse_types({"schemaVersion": "1", "types": [{"id": "x", "description": "d", "instructions": "y"}] * 2})
