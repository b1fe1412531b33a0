"""Subagents (issue 6): the Task tool, its manager, sidechain logs linked to their parent.

A model hands a focused job to a child that runs its own tool loop with its own system prompt
and a tool policy that only tightens its caller's. The child's whole conversation goes to a
sidechain (``conversations/<cid>/agents/agent_<id>.jsonl``, see ``core.store.sidechain``); the
parent log gets one Task result with the first 500 characters of the answer and app-only link
fields. See :mod:`.manager` for the lifecycle, :mod:`.events` for what the UI can follow.
"""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from crewagent.core.subagents.child import ChildSettings
    from crewagent.core.subagents.events import (
        SubagentActivity,
        SubagentEvent,
        SubagentNotice,
        SubagentStatus,
        SubagentStatusChanged,
    )
    from crewagent.core.subagents.links import ANSWER_PREVIEW_CHARS
    from crewagent.core.subagents.manager import MAX_CONCURRENT_CHILDREN, MAX_DEPTH, SubagentManager, child_policy
    from crewagent.core.subagents.scope import SubagentScope
    from crewagent.core.subagents.tools import RESULT_TOOL, STATUS_TOOL, TASK_TOOL
    from crewagent.core.subagents.types import SubagentType, SubagentTypes, builtin_types

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "child": ("ChildSettings",),
        "events": (
            "SubagentActivity",
            "SubagentEvent",
            "SubagentNotice",
            "SubagentStatus",
            "SubagentStatusChanged",
        ),
        "links": ("ANSWER_PREVIEW_CHARS",),
        "manager": ("MAX_CONCURRENT_CHILDREN", "MAX_DEPTH", "SubagentManager", "child_policy"),
        "scope": ("SubagentScope",),
        "tools": ("RESULT_TOOL", "STATUS_TOOL", "TASK_TOOL"),
        "types": ("SubagentType", "SubagentTypes", "builtin_types"),
    },
)

__all__ = [
    "ANSWER_PREVIEW_CHARS",
    "MAX_CONCURRENT_CHILDREN",
    "MAX_DEPTH",
    "RESULT_TOOL",
    "STATUS_TOOL",
    "TASK_TOOL",
    "ChildSettings",
    "SubagentActivity",
    "SubagentEvent",
    "SubagentManager",
    "SubagentNotice",
    "SubagentScope",
    "SubagentStatus",
    "SubagentStatusChanged",
    "SubagentType",
    "SubagentTypes",
    "builtin_types",
    "child_policy",
]
