"""Helpers for the tool-loop tests: one turn of a real ConversationSession against a real server.

Everything goes through real HTTP (the scripted server or the demo), a real RuntimeStore on
disk and the real tool registry; only the adapter's backoff ``sleep`` is replaced (so retries
are instant and their delays can be asserted).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any

from crewagent.core.context import TokenCounter
from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.loop import ConversationSession, LoopEvent, MessagePersisted, TurnFinished, TurnSettings
from crewagent.core.loop.factory import tool_context
from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, OPENAI_FUNCTION_NAME, validate_messages
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover, ToolContext, ToolRegistry, default_registry
from tests.fakes.llm_helpers import FakeSleep, no_jitter

OnEvent = Callable[[LoopEvent, ConversationSession], Awaitable[None] | None]


def make_context(project: ProjectInfo, conversation_id: str, **policy: Any) -> ToolContext:
    """The tool context the app builds (sandbox, policy, auto-approval, execution audit)."""
    settings = Settings()
    if policy:
        settings = settings.model_copy(update={"tools": settings.tools.model_copy(update=policy)})
    return tool_context(project, settings, conversation_id=conversation_id, approver=AutoApprover())


async def turn_async(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    config: ProviderConfig,
    text: str | None,
    *,
    registry: ToolRegistry | None = None,
    ctx: ToolContext | None = None,
    settings: TurnSettings | None = None,
    sleep: FakeSleep | None = None,
    on_event: OnEvent | None = None,
    counter: TokenCounter | None = None,
) -> list[LoopEvent]:
    events: list[LoopEvent] = []
    async with LlmAdapter(config, sleep=sleep or FakeSleep(), retry=no_jitter()) as adapter:
        session = ConversationSession(
            store,
            project,
            conversation_id,
            adapter=adapter,
            registry=registry or default_registry(),
            tool_context=ctx or make_context(project, conversation_id),
            counter=counter,
        )
        async with aclosing(session.send(text, settings or TurnSettings())) as stream:
            async for event in stream:
                events.append(event)
                if on_event is not None:
                    maybe = on_event(event, session)
                    if maybe is not None:
                        await maybe
    return events


def turn(*args: Any, **kwargs: Any) -> list[LoopEvent]:
    """One turn in a fresh event loop (see :func:`turn_async`)."""
    return asyncio.run(turn_async(*args, **kwargs))


def finished(events: Sequence[LoopEvent]) -> TurnFinished:
    """The turn's one TurnFinished, which must be its last event."""
    ends = [e for e in events if isinstance(e, TurnFinished)]
    assert len(ends) == 1, events
    assert events[-1] is ends[0], events
    return ends[0]


def persisted(events: Sequence[LoopEvent]) -> list[ConversationMessage]:
    return [e.message for e in events if isinstance(e, MessagePersisted)]


def load(store: RuntimeStore, project_id: str, conversation_id: str) -> list[ConversationMessage]:
    result = store.load_messages(project_id, conversation_id)
    assert result.problems == [], result.problem_summary()
    return result.messages


def assert_log_valid(store: RuntimeStore, project_id: str, conversation_id: str) -> list[ConversationMessage]:
    """The log, as an OpenAI messages[] (dotted names allowed), passes the validator; returns it."""
    messages = load(store, project_id, conversation_id)
    payload = [to_openai(m) for m in messages]
    errors = validate_messages(payload, name_pattern=DOTTED_FUNCTION_NAME)
    assert errors == [], (errors, json.dumps(payload, indent=1)[:4000])
    return messages


def assert_request_valid(body: Any) -> list[dict[str, Any]]:
    """A chat completion request body the server received passes the validator with wire names."""
    assert isinstance(body, dict), body
    messages = body["messages"]
    errors = validate_messages(messages, name_pattern=OPENAI_FUNCTION_NAME)
    assert errors == [], (errors, json.dumps(messages, indent=1)[:4000])
    for tool in body.get("tools") or ():
        assert OPENAI_FUNCTION_NAME.match(tool["function"]["name"]), tool
    return list(messages)


def shape(messages: Sequence[ConversationMessage | dict[str, Any]]) -> list[str]:
    """A compact picture of a log or request: ``user``, ``assistant+calls``, ``tool``, ``assistant!error``."""
    out = []
    for m in messages:
        data = m if isinstance(m, dict) else m.to_log_dict()
        role = data["role"]
        if role == "assistant" and data.get("tool_calls"):
            out.append("assistant+calls")
        elif role == "assistant" and data.get("partType") == "error":
            out.append("assistant!error")
        else:
            out.append(role)
    return out


def result_of(message: ConversationMessage) -> dict[str, Any]:
    """The parsed result dict of a role=tool message."""
    assert message.role == "tool", message
    value = json.loads(message.text)
    assert isinstance(value, dict)
    return value


def error_code_of(message: ConversationMessage) -> str | None:
    error = result_of(message).get("error")
    return error.get("code") if isinstance(error, dict) else None
