"""The tools a model delegates with: ``task`` (start a subagent), ``task.status`` and ``task.result``.

Their handlers are the manager's (:meth:`SubagentManager.tools`): they reach it through
``ctx.subagents`` (a :class:`SubagentScope`); without one (a session built without a manager)
they answer ``TOOL_NOT_AVAILABLE``.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crewagent.core import texts
from crewagent.core.subagents.types import SubagentTypes
from crewagent.core.tools import ErrorCode, Tool, error
from crewagent.core.tools.registry import ToolHandler

TASK_TOOL = "task"
STATUS_TOOL = "task.status"
RESULT_TOOL = "task.result"
TOOL_NAMES = (TASK_TOOL, STATUS_TOOL, RESULT_TOOL)


class TaskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, max_length=200, description="A short label of the task (3-7 words), shown to the user.")
    prompt: str = Field(
        min_length=1,
        description="The complete task for the subagent. It sees nothing of this conversation: include every fact, path and constraint it needs, and say what its answer should contain.",
    )
    subagent_type: str = Field(min_length=1, description="Which kind of subagent runs the task (see the list in the tool description).")
    run_in_background: bool = Field(
        default=False,
        description="true: return at once and keep working; a SUBAGENT_NOTICE arrives when it is done. Only honoured at the top level.",
    )


class SessionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1, description="The subagent's session id (agent_...) from the task result.")


class StatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str | None = Field(default=None, description="The subagent's session id (agent_...); leave out to list every subagent of this conversation.")


def no_scope() -> dict[str, Any]:
    """The answer of a Task tool called in a session built without a subagent manager."""
    return error(ErrorCode.TOOL_NOT_AVAILABLE, texts.SUBAGENTS_UNAVAILABLE)


def task_tools(types: SubagentTypes, *, task: ToolHandler, status: ToolHandler, result: ToolHandler) -> list[Tool]:
    """The three tools with the manager's handlers, the Task tool's description listing ``types``."""
    description = (
        "Hand a focused, self-contained job to a subagent that works with its own context and tools and "
        "returns only its final answer (long searches and reads stay out of your context). "
        "Subagent types:\n" + types.describe()
    )
    return [
        Tool(
            name=TASK_TOOL,
            description=description,
            handler=task,
            args_model=TaskArgs,
            # A child runs as long as its own loop allows; its tools have their own timeouts.
            timeout_s=math.inf,
            summarize=lambda a: texts.APPROVE_TASK.format(type=a.get("subagent_type"), description=a.get("description")),
        ),
        Tool(
            name=STATUS_TOOL,
            description="The status of a subagent started with task (or of all of them): running or how it ended, steps so far, a summary.",
            handler=status,
            args_model=StatusArgs,
        ),
        Tool(
            name=RESULT_TOOL,
            description="The complete final answer of a finished subagent (the task result holds only its first 500 characters).",
            handler=result,
            args_model=SessionArgs,
        ),
    ]
