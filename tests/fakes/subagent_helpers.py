"""Helpers for subagent tests: a parent turn with a SubagentManager, sidechain checks, Task call steps."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any

from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.loop import ConversationSession, LoopEvent, TurnSettings
from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents import SubagentEvent, SubagentManager
from crewagent.core.tools import ToolContext, default_registry
from tests.core.loop_helpers import make_context
from tests.fakes.llm_helpers import FakeSleep, no_jitter
from tests.fakes.scripted_server import Step, call, tool_calls

OnEvent = Callable[[LoopEvent, ConversationSession], Awaitable[None] | None]


def task_call(call_id: str, description: str, prompt: str = "do it", subagent_type: str = "general-purpose", **extra: Any) -> Any:
    """A scripted ``task`` call (wire name ``task``); the child's script is routed by ``description: <description>``."""
    arguments = {"description": description, "prompt": prompt, "subagent_type": subagent_type, **extra}
    return call(call_id, "task", json.dumps(arguments))


def task_step(call_id: str, description: str, **kwargs: Any) -> Step:
    return tool_calls(task_call(call_id, description, **kwargs), label=f"task {description}")


def marker(description: str) -> str:
    """The routing marker of a child's requests (its SUBAGENT system block names its description)."""
    return f"- description: {description}\n"


class Recorder:
    """Collects the manager's events."""

    def __init__(self, manager: SubagentManager) -> None:
        self.events: list[SubagentEvent] = []
        manager.add_listener(self.events.append)

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def statuses(self, session_id: str | None = None) -> list[str]:
        return [e.status for e in self.of_type("subagent_status") if session_id in (None, e.session_id)]


async def parent_turn(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    config: ProviderConfig,
    text: str | None,
    manager: SubagentManager,
    *,
    ctx: ToolContext | None = None,
    on_event: OnEvent | None = None,
) -> list[LoopEvent]:
    """One turn of a conversation whose tools include the Task tool of ``manager``."""
    events: list[LoopEvent] = []
    async with LlmAdapter(config, sleep=FakeSleep(), retry=no_jitter()) as adapter:
        registry = manager.register_tools(default_registry())
        bound = manager.bind(
            ctx or make_context(project, conversation_id),
            store=store,
            project=project,
            conversation_id=conversation_id,
            adapter=adapter,
            registry=registry,
        )
        session = ConversationSession(store, project, conversation_id, adapter=adapter, registry=registry, tool_context=bound)
        async with aclosing(session.send(text, TurnSettings())) as stream:
            async for event in stream:
                events.append(event)
                if on_event is not None:
                    maybe = on_event(event, session)
                    if maybe is not None:
                        await maybe
    return events


def sidechain_valid(store: RuntimeStore, project_id: str, conversation_id: str, session_id: str) -> list[ConversationMessage]:
    """The sidechain loads cleanly, validates as messages[], and every line links back to its parent."""
    chains = store.sidechains(project_id, conversation_id)
    meta = chains.read_meta(session_id)
    result = chains.load(session_id)
    assert result.problems == [], result.problem_summary()
    payload = [to_openai(m) for m in result.messages]
    errors = validate_messages(payload, name_pattern=DOTTED_FUNCTION_NAME)
    assert errors == [], (errors, json.dumps(payload, indent=1)[:3000])
    for message in result.messages:
        data = message.to_log_dict()
        assert data["sessionId"] == session_id
        assert data["parentSessionId"] == meta.parentSessionId
        assert data["isSidechain"] is True
        assert data["parentToolCallId"] == meta.parentToolCallId
    return result.messages


def only_sidechain(store: RuntimeStore, project_id: str, conversation_id: str, **match: Any) -> SidechainMeta:
    metas = [
        m for m in store.sidechains(project_id, conversation_id).metas() if all(getattr(m, k) == v for k, v in match.items())
    ]
    assert len(metas) == 1, metas
    return metas[0]
