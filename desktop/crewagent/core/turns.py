"""One turn in any mode (chat, agent, run): the single entry point the worker and the CLI both call.

The caller decides what only it can decide and passes it in :class:`TurnHooks` (how approvals
and ``ui.ask_user`` reach a person, what happens on "allow always", the session handle for Stop);
everything else is decided here, once: the agent and its persona for the mode, the tool context
(sandbox, policy, audit, and in Run mode ``@pkg`` and the state guard), the subagents' Task tool,
the run's driver, and the session that persists the turn.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crewagent.core import texts
from crewagent.core.agent_catalog import turn_agent as catalog_agent
from crewagent.core.agents import Agent, agent_persona
from crewagent.core.attachments import ImagesNotSupported, count_images
from crewagent.core.providers import accepts_images
from crewagent.core.context import RunContext
from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.llm.adapter import CLIENT_MODULE
from crewagent.core.loop import ConversationSession, LoopEvent
from crewagent.core.context.window import ContextWindow
from crewagent.core.loop.factory import context_window, tool_context, turn_settings
from crewagent.core.mcp import McpManager, mcp_prompt_block
from crewagent.core.messages import ConversationMessage, ConversationMeta, Mode
from crewagent.core.packages import PackageStore, shared_store
from crewagent.core.runs import RunDriver, RunSetupError
from crewagent.core.runs.service import active_run, load_driver
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents import ChildSettings, SubagentManager
from crewagent.core.tools import ApprovalGate, Approver, default_registry
from crewagent.core.tools.registry import AskUser


def package_store(data_dir: Path) -> PackageStore:
    """One PackageStore per data folder for the process (``packages.shared_store``): it caches loaded
    packages (by inode and mtime), so a run's turn does not validate its whole package again."""
    return shared_store(data_dir)


@dataclass
class TurnHooks:
    """What the caller of :func:`run_turn` decides."""

    #: The session's approval gate: its grants "for this conversation" outlive the turn, and it
    #: says what the model reads on a refusal and where "allow always" is saved.
    approval: ApprovalGate | None = None
    #: Or just who allows a write tool: this turn gets a gate of its own, seeded from the
    #: settings (None, with no ``approval`` either: writes need no approval).
    approver: Approver | None = None
    #: Shows a ``ui.ask_user`` widget and waits (None: the tool is not offered).
    ask_user: AskUser | None = None
    #: Receives the session once it exists (to request Stop).
    on_session: Callable[[ConversationSession], None] | None = None
    #: Receives the run's driver in Run mode (to show the run's progress).
    on_run: Callable[[RunDriver], None] | None = None


async def run_turn(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    text: str | list[dict[str, Any]] | None,
    *,
    mode: Mode,
    settings: Settings,
    config: ProviderConfig,
    hooks: TurnHooks | None = None,
    subagents: SubagentManager | None = None,
    packages: PackageStore | None = None,
    config_dir: Path | None = None,
    mcp: McpManager | None = None,
    replaces: str | None = None,
) -> AsyncGenerator[LoopEvent, None]:
    """Persist ``text`` (None: continue without a new message) and run the turn; yields its events.

    Run mode continues the conversation's active run (RunSetupError when it has none). Raises
    CrewAgentError subclasses before anything is written when the turn cannot start.
    ``config_dir`` is the settings folder in use (None: the default): the sandbox protects it,
    and the provider's context windows remembered there size the budget. ``replaces``: ``text``
    starts a new branch in place of that message (Edit and Regenerate, protocol/branches.py).
    ``mcp`` (the caller's, living as long as its session) offers the tools of the enabled MCP
    servers, started as needed.
    """
    vision = accepts_images(config.provider, config.model, settings.llm.vision)
    if not vision and count_images(text):
        raise ImagesNotSupported(texts.IMAGES_NOT_SUPPORTED.format(model=config.model or config.provider))
    hooks = hooks or TurnHooks()
    window = await asyncio.to_thread(context_window, settings, config, config_dir=config_dir)
    meta = await asyncio.to_thread(store.get_conversation, project.id, conversation_id)
    driver: RunDriver | None = None
    agent: Agent | None
    if mode == "run":
        driver = await asyncio.to_thread(_active_driver, project, meta, packages or package_store(store.data_dir))
        agent = driver.effective_agent()
        if hooks.on_run is not None:
            hooks.on_run(driver)
    else:
        agent = await asyncio.to_thread(catalog_agent, store.data_dir, meta.agentId, mode)
    registry = default_registry()
    if subagents is not None:
        registry = subagents.register_tools(registry)
    context = tool_context(
        project,
        settings,
        conversation_id=conversation_id,
        approver=hooks.approver,
        approval=hooks.approval,
        ask_user=hooks.ask_user,
        agent_tools=agent.tool_policy() if agent is not None else None,
        run_id=driver.run.runId if driver is not None else None,
        pkg_dir=driver.package.root if driver is not None else None,
        frontmatter_guard=driver.guard if driver is not None else None,
        config_dir=config_dir,
    )
    mcp_servers = await mcp.register_tools(registry, settings.mcp, context.policy) if mcp is not None else []
    # The model client library (openai) is imported on first use: ~0.4 s, and 9 s measured on this
    # loaded 2-core machine. Not on the loop, where it would hold up every other conversation.
    await asyncio.to_thread(importlib.import_module, CLIENT_MODULE)
    async with LlmAdapter(config) as adapter:
        if subagents is not None:
            # Task calls of this turn start children here; a background one gets its own adapter.
            context = subagents.bind(
                context,
                store=store,
                project=project,
                conversation_id=conversation_id,
                adapter=adapter,
                registry=registry,
                settings=ChildSettings.from_settings(settings, window=window),
            )
        session = ConversationSession(store, project, conversation_id, adapter=adapter, registry=registry, tool_context=context)
        if hooks.on_session is not None:
            hooks.on_session(session)
        # Chat has no persona (PACKAGE-FORMAT.md, prompt layers); Agent uses the conversation's
        # agent; Run the effective agent of the current node (the driver re-renders it per call).
        per_turn = turn_settings(
            settings,
            mode,
            window=window,
            agent_id=agent.id if agent is not None else None,
            persona=agent_persona(agent) if agent is not None and driver is None else None,
            run=driver,
            run_id=driver.run.runId if driver is not None else None,
            workflow_id=driver.workflow.id if driver is not None else None,
            vision=vision,
        )
        if mcp_servers:
            per_turn.extra_system = (*per_turn.extra_system, mcp_prompt_block(mcp_servers, settings.mcp))
        async with aclosing(session.send(text, per_turn, replaces=replaces)) as events:
            async for event in events:
                yield event


def _active_driver(project: ProjectInfo, meta: ConversationMeta, packages: PackageStore) -> RunDriver:
    """The driver of the conversation's active run (blocking; one trip off the event loop, not two)."""
    run = active_run(project, meta)
    if run is None:
        raise RunSetupError(texts.NO_RUN)
    return load_driver(project, run, packages)


def next_call_extras(
    store: RuntimeStore, project: ProjectInfo, conversation_id: str, mode: Mode
) -> tuple[str | None, RunContext | None]:
    """The persona and run context the next call of ``mode`` would carry (blocking; changes nothing).

    For ``crewagent context``: the same choice of agent and run as :func:`run_turn`.
    """
    meta = store.get_conversation(project.id, conversation_id)
    if mode == "run":
        run = active_run(project, meta)
        if run is None:
            return None, None
        return load_driver(project, run, package_store(store.data_dir), start=False).context()
    agent = catalog_agent(store.data_dir, meta.agentId, mode)
    return (agent_persona(agent) if agent is not None else None), None


def next_call_usage(
    store: RuntimeStore,
    project: ProjectInfo,
    conversation_id: str,
    *,
    settings: Settings,
    window: ContextWindow,
    messages: Sequence[ConversationMessage] | None = None,
) -> dict[str, Any]:
    """The debug of the context the next call would carry, built from the log (blocking; changes nothing).

    For the context meter when a conversation is opened: the turn's own build (``ContextBuilt``)
    reports the same, once it starts; a summary it would write is not written here. ``messages``:
    the log as the caller has just loaded (and recovered) it, not loaded again.
    """
    from crewagent.core.context import build_llm_messages

    meta = store.get_conversation(project.id, conversation_id)
    mode = meta.activeType
    persona, run_context = next_call_extras(store, project, conversation_id, mode)
    per_turn = turn_settings(settings, mode, window=window)
    if messages is None:
        messages = store.load_messages(project.id, conversation_id).messages
    result = build_llm_messages(
        messages,
        mode=mode,
        budget=per_turn.budget,
        persona=persona,
        run_context=run_context,
        merge_system=per_turn.merge_system,
        tool_results=per_turn.tool_results,
        conversation_id=conversation_id,
    )
    return result.debug
