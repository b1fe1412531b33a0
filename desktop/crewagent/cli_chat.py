"""``crewagent chat``: one user turn, headless, persisted exactly as in the app (no Qt here)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from contextlib import aclosing
from typing import Any

from crewagent.core.agents import agent_persona, turn_agent
from crewagent.core.llm import LlmAdapter
from crewagent.core.llm.demo import start_demo_server
from crewagent.core.loop import (
    ConversationSession,
    MessagePersisted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from crewagent.core.loop.factory import context_window, provider_config, tool_context, turn_settings
from crewagent.core.messages import MODES, Mode
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from crewagent.core.subagents import ChildSettings, SubagentEvent, SubagentManager, SubagentStatusChanged
from crewagent.core.tools import ApprovalDecision, ApprovalRequest, AutoApprover, default_registry

EXIT_OK, EXIT_FAILED = 0, 1


def add_subcommand(subparsers: Any, common: argparse.ArgumentParser) -> None:
    chat = subparsers.add_parser("chat", parents=[common], help="run one user turn headless")
    chat.add_argument("--project", required=True)
    target = chat.add_mutually_exclusive_group()
    target.add_argument("--conversation", help="continue this conversation (default: the most recent one)")
    target.add_argument("--new", action="store_true", help="start a new conversation")
    chat.add_argument("--mode", choices=MODES, help="chat, agent or run (default: the conversation's mode)")
    chat.add_argument("--provider", choices=("demo", "openai", "openai-compatible"))
    chat.add_argument("--model")
    chat.add_argument("--yes", action="store_true", help="approve write tools without asking")
    chat.add_argument("message", help="the user message")
    chat.set_defaults(handler=cmd_chat)


class _TerminalApprover:
    """Asks on the terminal when there is one; refuses otherwise (``--yes`` approves)."""

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        if not sys.stdin.isatty():
            return ApprovalDecision.DENY
        question = f"\nAllow {call.summary or call.tool}? [y]es once / [c]onversation / [N]o: "
        answer = (await asyncio.to_thread(input, question)).strip().lower()
        return {"y": ApprovalDecision.ALLOW_ONCE, "c": ApprovalDecision.ALLOW_CONVERSATION}.get(answer[:1], ApprovalDecision.DENY)


def cmd_chat(args: argparse.Namespace) -> int:
    return asyncio.run(_chat(args))


async def _chat(args: argparse.Namespace) -> int:
    store = RuntimeStore(getattr(args, "data_dir", None))
    settings_store = SettingsStore()
    settings = settings_store.load()
    for problem in settings_store.problems:
        print(f"crewagent: warning: {problem}", file=sys.stderr)
    project = store.open_project(args.project, create=True)
    provider = args.provider or settings.llm.provider
    demo = start_demo_server() if provider == "demo" else None
    try:
        # Check the provider first: a chat that cannot reach a model creates no conversation.
        config = provider_config(
            settings, SecretStore(), provider=provider, model=args.model, demo_base_url=demo.base_url if demo else None
        )
        window = context_window(settings, config)
        if args.conversation:
            meta = store.get_conversation(project.id, args.conversation)
        else:
            existing = [] if args.new else store.list_conversations(project.id)
            meta = existing[0] if existing else store.create_conversation(project.id, entry_type=args.mode or "chat")
        mode: Mode = args.mode or meta.activeType
        if mode != meta.activeType:
            store.update_conversation(project.id, meta.id, activeType=mode)
        print(meta.id, file=sys.stderr)

        approver = AutoApprover() if args.yes else _TerminalApprover()
        agent = turn_agent(meta.agentId, mode)
        ctx = tool_context(
            project,
            settings,
            conversation_id=meta.id,
            approver=approver,
            agent_tools=agent.tool_policy() if agent is not None else None,
        )
        if not args.yes:
            assert ctx.approval is not None
            ctx.approval.deny_message = (
                "The user did not approve this tool call (crewagent chat without --yes cannot ask). "
                "Tell the user to re-run with --yes to allow writes."
            )
        # Subagents: the Task tool delegates to children that live as long as this run.
        subagents = SubagentManager()
        registry = subagents.register_tools(default_registry())
        if not getattr(args, "json", False):
            subagents.add_listener(_print_subagent)
        try:
            async with LlmAdapter(config) as adapter:
                ctx = subagents.bind(
                    ctx,
                    store=store,
                    project=project,
                    conversation_id=meta.id,
                    adapter=adapter,
                    registry=registry,
                    settings=ChildSettings.from_settings(settings, window=window),
                )
                session = ConversationSession(store, project, meta.id, adapter=adapter, registry=registry, tool_context=ctx)
                per_turn = turn_settings(
                    settings,
                    mode,
                    window=window,
                    agent_id=agent.id if agent is not None else None,
                    persona=agent_persona(agent) if agent is not None else None,
                )
                code = await _print_turn(session, args.message, per_turn, getattr(args, "json", False))
            if subagents.running(meta.id):
                # A background child was asked for: finish it (its notice reaches the next turn); Ctrl-C cancels it.
                print(f"crewagent: waiting for {len(subagents.running(meta.id))} background subagent(s)…", file=sys.stderr, flush=True)
                await subagents.wait_background()
            return code
        finally:
            await subagents.shutdown()
    finally:
        if demo is not None:
            demo.stop()


def _print_subagent(event: SubagentEvent) -> None:
    if isinstance(event, SubagentStatusChanged):
        line = f"🤖 subagent {event.session_id} ({event.subagent_type}) {event.status}: {event.description}"
        if event.status != "running" and event.summary:
            line += f" — {' '.join(event.summary.split())[:120]}"
        print(line, file=sys.stderr, flush=True)


async def _print_turn(session: ConversationSession, text: str, settings: Any, as_json: bool) -> int:
    out, err = sys.stdout, sys.stderr
    finished: TurnFinished | None = None
    async with aclosing(session.send(text, settings)) as events:
        async for event in events:
            if as_json:
                if isinstance(event, MessagePersisted):
                    print(json.dumps(event.message.to_log_dict(), ensure_ascii=False), flush=True)
            elif isinstance(event, TextDelta):
                out.write(event.text)
                out.flush()
            elif isinstance(event, ToolCallStarted):
                print(f"\n🔧 {event.name} {event.arguments}", file=err, flush=True)
            elif isinstance(event, ToolCallFinished):
                status = "ok" if event.ok else f"failed ({event.error_code})"
                print(f"   {event.name} · {status} · {event.duration_ms:.0f} ms", file=err, flush=True)
            if isinstance(event, TurnFinished):
                finished = event
    if not as_json:
        out.write("\n")
    if finished is None or not finished.ok:
        error = (finished.error or {}) if finished else {}
        reason = finished.reason if finished else "unknown"
        print(f"crewagent: turn {reason}: {error.get('code', '')} {error.get('message', '')}".rstrip(), file=err)
        return EXIT_FAILED
    return EXIT_OK
