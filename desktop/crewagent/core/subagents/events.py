"""What the subagent manager reports to its listeners (the UI turns these into signals).

Listeners are called on the manager's event-loop thread, in order, and must not block:

- :class:`SubagentStatusChanged` when a child starts and when it ends (the Task part's
  type / status / summary, live);
- :class:`SubagentActivity` for every event of a child's own tool loop (a read-only tab can
  follow the child: ``MessagePersisted`` carries each sidechain line as stored);
- :class:`SubagentNotice` when the notice of a finished background child was appended to its
  parent conversation (the timeline inserts the message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from crewagent.core.loop.events import LoopEvent
from crewagent.core.messages import ConversationMessage

#: The status a parent sees (``subagentStatus``); a child whose process died reads ``cancelled``.
SubagentStatus = Literal["running", "completed", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class SubagentStatusChanged:
    session_id: str
    #: The top-level conversation (the folder that holds the sidechain).
    conversation_id: str
    #: The conversation id, or ``agent_<id>`` of the child that spawned this grandchild.
    parent_session_id: str
    parent_call_id: str
    subagent_type: str
    status: SubagentStatus
    summary: str
    depth: int
    description: str = ""
    background: bool = False
    type: Literal["subagent_status"] = field(default="subagent_status", init=False)


@dataclass(frozen=True, slots=True)
class SubagentActivity:
    session_id: str
    conversation_id: str
    parent_call_id: str
    event: LoopEvent
    type: Literal["subagent_activity"] = field(default="subagent_activity", init=False)


@dataclass(frozen=True, slots=True)
class SubagentNotice:
    conversation_id: str
    session_id: str
    message: ConversationMessage
    type: Literal["subagent_notice"] = field(default="subagent_notice", init=False)


SubagentEvent = SubagentStatusChanged | SubagentActivity | SubagentNotice
