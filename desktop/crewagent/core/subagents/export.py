"""The sidechains of a conversation as a tree for ``crewagent export --include-subagents``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crewagent.core.messages import ConversationMessage
from crewagent.core.store import RuntimeStore
from crewagent.core.store.sidechain import SidechainMeta


@dataclass(frozen=True)
class SubagentExport:
    """One sidechain to nest in an export: its meta (as stored), its messages, its own children.

    ``children`` and the ``subagents`` arguments above map a Task call id (in the log that made
    the call) to the child that answered it.
    """

    meta: Mapping[str, Any]
    messages: list[ConversationMessage]
    children: Mapping[str, SubagentExport] = field(default_factory=dict)


def subagent_tree(store: RuntimeStore, project_id: str, conversation_id: str) -> tuple[dict[str, SubagentExport], list[str]]:
    """Task call id → child (with its own children) for the conversation; and warnings.

    A sidechain with damaged lines is exported without them (a warning names it).
    """
    chains = store.sidechains(project_id, conversation_id)
    by_parent: dict[str, list[SidechainMeta]] = {}
    for meta in chains.metas():
        by_parent.setdefault(meta.parentSessionId, []).append(meta)
    warnings: list[str] = []

    def children_of(session_id: str, seen: frozenset[str]) -> Mapping[str, SubagentExport]:
        nodes: dict[str, SubagentExport] = {}
        for meta in by_parent.get(session_id, []):
            if meta.sessionId in seen:  # a damaged meta pointing at its own descendant
                continue
            loaded = chains.load(meta.sessionId)
            if loaded.problems:
                warnings.append(f"subagent {meta.sessionId}: {loaded.problem_summary()}")
            nodes[meta.parentToolCallId] = SubagentExport(
                meta=meta.model_dump(mode="json", exclude_none=True),
                messages=loaded.messages,
                children=children_of(meta.sessionId, seen | {meta.sessionId}),
            )
        return nodes

    return dict(children_of(conversation_id, frozenset({conversation_id}))), warnings
