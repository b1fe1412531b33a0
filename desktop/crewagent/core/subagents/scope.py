"""The subagent scope of one session: where a Task call's child hangs and what it may use.

A scope sits on the :class:`~crewagent.core.tools.ToolContext` (``ctx.subagents``) of a
conversation (depth 0) or of a child (depth 1, 2 ...). It names the parent session, the store
folder the sidechains go to, and the adapter, registry and limits a child inherits; the
:class:`~crewagent.core.subagents.manager.SubagentManager` it points at owns the running
children. Build the top-level one with :meth:`SubagentManager.bind`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from crewagent.core.llm import LlmAdapter
from crewagent.core.messages import ConversationMessage
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents.child import ChildSettings
from crewagent.core.subagents.recovery import deliver_notices
from crewagent.core.tools import ToolRegistry

class _Manager(Protocol):
    """The part of :class:`~crewagent.core.subagents.manager.SubagentManager` a scope calls.

    A protocol, so that the scope (which the manager builds) does not import the manager.
    """

    def annotate(self, parent_session_id: str, message: ConversationMessage) -> ConversationMessage: ...

    def announce_notices(self, conversation_id: str, messages: list[ConversationMessage]) -> None: ...


@dataclass(frozen=True)
class SubagentScope:
    manager: _Manager
    store: RuntimeStore
    project: ProjectInfo
    #: The top-level conversation: its folder holds every sidechain of the tree.
    conversation_id: str
    #: The session Task calls are made from: the conversation id, or a child's ``agent_<id>``.
    session_id: str
    depth: int
    adapter: LlmAdapter
    registry: ToolRegistry
    settings: ChildSettings

    @property
    def is_root(self) -> bool:
        return self.depth == 0

    def annotate(self, message: ConversationMessage) -> ConversationMessage:
        """A Task result with its child's app-only link fields (other messages unchanged)."""
        return self.manager.annotate(self.session_id, message)

    async def turn_ended(self) -> list[ConversationMessage]:
        """The parent's turn ended normally and its turn lock is still held: deliver waiting notices.

        No call is open at this point, so a notice cannot land between an assistant's tool
        calls and their results.
        """
        if not self.is_root:
            return []
        appended = await asyncio.to_thread(deliver_notices, self.store, self.project.id, self.conversation_id)
        self.manager.announce_notices(self.conversation_id, appended)
        return appended
