"""Core values of turns and subagents as the frozen values the TurnWorker's signals carry."""

from __future__ import annotations

from crewagent.core.errors import CrewAgentError
from crewagent.core.loop import LoopEvent, ReasoningDelta, StreamStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnFinished
from crewagent.core.routing import ShowAgentMenu
from crewagent.core import agent_menu
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents import SubagentStatusChanged
from crewagent.core.subagents.links import parent_status
from crewagent.core.turn_host import Opened, ProviderChanged, TurnHost
from crewagent.worker.turn_values import (
    AgentMenu,
    AgentMenuEntry,
    FullOutput,
    LoadedConversation,
    LoadedSubagent,
    ProviderInfo,
    SubagentInfo,
    SubagentProgress,
    TimelineMessage,
    ToolCallRef,
    ToolFinish,
    frozen_json,
)

DEMO_LABEL = "Demo (offline script)"


def call_ref(event: ToolCallStarted) -> ToolCallRef:
    return ToolCallRef(event.call_id, event.name, event.arguments)


def tool_finish(event: ToolCallFinished) -> ToolFinish:
    return ToolFinish(event.call_id, event.name, event.ok, event.duration_ms, event.error_code, frozen_json(event.result))


def subagent_info(meta: SidechainMeta) -> SubagentInfo:
    """A child's status as its meta (stored, or held by its live run) says."""
    return SubagentInfo(
        session_id=meta.sessionId,
        subagent_type=meta.type,
        status=parent_status(meta.status),
        summary=meta.summary or "",
        description=meta.description,
        conversation_id=meta.conversationId,
        parent_session_id=meta.parentSessionId,
        parent_call_id=meta.parentToolCallId,
        depth=meta.depth,
        background=meta.background,
    )


def status_info(event: SubagentStatusChanged) -> SubagentInfo:
    return SubagentInfo(
        session_id=event.session_id,
        subagent_type=event.subagent_type,
        status=event.status,
        summary=event.summary,
        description=event.description,
        conversation_id=event.conversation_id,
        parent_session_id=event.parent_session_id,
        parent_call_id=event.parent_call_id,
        depth=event.depth,
        background=event.background,
    )


def loaded(project_id: str, conversation_id: str, opened: Opened[TimelineMessage]) -> LoadedConversation:
    return LoadedConversation(
        project_id=project_id,
        conversation_id=conversation_id,
        messages=opened.messages,
        problems=opened.problems,
        running=opened.running,
        streaming=opened.streaming,
        streaming_text=opened.streaming_text,
        streaming_reasoning=opened.streaming_reasoning,
        subagents=tuple(subagent_info(meta) for meta in opened.subagents),
        complete=opened.complete,
    )


def agent_menu_of(conversation_id: str, routed: ShowAgentMenu) -> AgentMenu:
    agent = routed.agent
    entries = tuple(
        AgentMenuEntry(number, item.trigger, item.description, agent_menu.item_kind(item))
        for number, item in enumerate(agent.menu, start=1)
    )
    shown = tuple(entries[index] for index in routed.items)
    return AgentMenu(conversation_id, agent.id, agent.metadata.name, routed.reason, shown, routed.query)


def provider_info(changed: ProviderChanged) -> ProviderInfo:
    """The provider as the status bar names it (with what is wrong when it cannot start)."""
    config = changed.config
    if config is None:
        llm = changed.settings.llm
        return ProviderInfo(llm.provider, llm.model, llm.provider, changed.problem)
    if config.provider == "demo":
        return ProviderInfo(config.provider, config.model, DEMO_LABEL)
    return ProviderInfo(config.provider, config.model, f"{config.model} · {config.provider}")


def subagent_progress(event: LoopEvent) -> SubagentProgress | None:
    """A running child's event that is not a stored message, for its tab (None: nothing to show)."""
    if isinstance(event, StreamStarted):
        return SubagentProgress("stream_started")
    if isinstance(event, TextDelta):
        return SubagentProgress("stream_chunk", event.text)
    if isinstance(event, ReasoningDelta):
        return SubagentProgress("reasoning_chunk", event.text)
    if isinstance(event, ToolCallStarted):
        return SubagentProgress("tool_started", call=call_ref(event))
    if isinstance(event, ToolCallFinished):
        return SubagentProgress("tool_finished", finish=tool_finish(event))
    if isinstance(event, TurnFinished):
        return SubagentProgress("finished")
    return None


async def full_output(host: TurnHost[TimelineMessage], project_id: str, conversation_id: str, message_id: str) -> FullOutput:
    """The complete content of an offloaded tool result, or why it cannot be read."""
    try:
        text = await host.full_output(project_id, conversation_id, message_id)
    except CrewAgentError as exc:
        return FullOutput(conversation_id, message_id, "", str(exc))
    return FullOutput(conversation_id, message_id, text)


async def loaded_subagent(host: TurnHost[TimelineMessage], project_id: str, conversation_id: str, session_id: str) -> LoadedSubagent:
    """A sidechain opened for its tab, or why it cannot be read."""
    try:
        snapshot = await host.open_subagent(project_id, conversation_id, session_id)
    except CrewAgentError as exc:
        empty = LoadedConversation(project_id, session_id, ())
        return LoadedSubagent(project_id, conversation_id, session_id, None, empty, str(exc))
    info = subagent_info(snapshot.meta)
    return LoadedSubagent(project_id, conversation_id, session_id, info, loaded(project_id, session_id, snapshot.opened))
