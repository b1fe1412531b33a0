"""Core values of turns and subagents as the frozen values the TurnWorker's signals carry."""

from __future__ import annotations

import asyncio

from crewagent.core import paths
from crewagent.core.errors import CrewAgentError
from crewagent.core.loop import LoopEvent, ReasoningDelta, StreamStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnFinished
from crewagent.core.providers import accepts_images
from crewagent.core.routing import ShowAgentMenu
from crewagent.core import agent_menu
from crewagent.core.tools.results import readable
from crewagent.core.turn_host import Opened, ProviderChanged, TurnHost
from crewagent.worker.tool_images import Problem, ToolImage, ToolImages, read_images
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
    return ToolCallRef.of(event.call_id, event.name, event.arguments)


def tool_finish(event: ToolCallFinished) -> ToolFinish:
    return ToolFinish(event.call_id, event.name, event.ok, event.duration_ms, event.error_code, frozen_json(event.result))


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
        subagents=tuple(SubagentInfo.from_meta(meta) for meta in opened.subagents),
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
    vision = accepts_images(config.provider, config.model, changed.settings.llm.vision)
    return ProviderInfo(config.provider, config.model, f"{config.model} · {config.provider}", vision=vision)


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
    """The complete content of a tool result, as a person reads it, or why it cannot be read.

    Decoded here, off the GUI thread: parsing and indenting tens of megabytes of JSON takes seconds.
    """
    try:
        text = await host.full_output(project_id, conversation_id, message_id)
    except CrewAgentError as exc:
        return FullOutput(conversation_id, message_id, "", str(exc))
    return FullOutput(conversation_id, message_id, await asyncio.to_thread(readable, text))


async def loaded_subagent(host: TurnHost[TimelineMessage], project_id: str, conversation_id: str, session_id: str) -> LoadedSubagent:
    """A sidechain opened for its tab, or why it cannot be read."""
    try:
        snapshot = await host.open_subagent(project_id, conversation_id, session_id)
    except CrewAgentError as exc:
        empty = LoadedConversation(project_id, session_id, ())
        return LoadedSubagent(project_id, conversation_id, session_id, None, empty, str(exc))
    info = SubagentInfo.from_meta(snapshot.meta)
    return LoadedSubagent(project_id, conversation_id, session_id, info, loaded(project_id, session_id, snapshot.opened))


async def tool_images(host: TurnHost[TimelineMessage], project_id: str, conversation_id: str, key: str, shown: tuple[str, ...]) -> ToolImages:
    """The thumbnails of the images a tool part's result names, read under the project's state folder only."""
    try:
        project = host.project(project_id)
    except CrewAgentError:
        return ToolImages(conversation_id, key, tuple(ToolImage(one, problem=Problem.MISSING) for one in shown))
    state = paths.state_dir(project.runtime_dir)
    return ToolImages(conversation_id, key, await asyncio.to_thread(read_images, state, shown))
