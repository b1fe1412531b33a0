"""``crewagent chat``: one user turn, headless, persisted exactly as in the app (no Qt here)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import Any

from crewagent.core import texts
from crewagent.core.attachments import ImagesNotSupported, read_image_file, store_image, user_content
from crewagent.core.commands import global_command
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import ProviderConfig
from crewagent.core.llm.demo import start_demo_server
from crewagent.core.llm.usage import sum_usage
from crewagent.core.loop import (
    LoopEvent,
    MessagePersisted,
    RunProgress,
    TextDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    TurnFinished,
)
from crewagent.core.loop.factory import provider_config
from crewagent.core.mcp import McpManager
from crewagent.core.messages import ConversationMeta, Mode
from crewagent.core.providers import accepts_images
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.core.runs import RunSetupError
from crewagent.core.runs.service import active_run
from crewagent.core.routing import Routed, RunTurn, ShowAgentMenu, route_input
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents import SubagentEvent, SubagentManager, SubagentStatusChanged
from crewagent.core.tools import ApprovalDecision, ApprovalGate, ApprovalRequest, AutoApprover
from crewagent.core.tools.registry import AskUser
from crewagent.core.turns import TurnHooks, run_turn

EXIT_OK, EXIT_FAILED = 0, 1


class _TerminalApprover:
    """Asks on the terminal when there is one; refuses otherwise (``--yes`` approves)."""

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        if not sys.stdin.isatty():
            return ApprovalDecision.DENY
        question = f"\nAllow {call.summary or call.tool}? [y]es once / [c]onversation / [N]o: "
        if call.scope_label:  # a command: its program, arguments, folder and shell, one per line
            details = "".join(f"\n    {line}" for line in call.summary.splitlines())
            question = f"\nAllow {call.tool}?{details}\n[y]es once / [c] {call.scope_label} for this conversation / [N]o: "
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
    # The provider first: a chat that cannot reach a model creates no conversation.
    async with terminal_provider(args, settings) as config:
        images = _read_images(args, settings, config)  # refused here: nothing is created
        found: ConversationMeta | None = None
        if args.conversation:
            found = store.get_conversation(project.id, args.conversation)
        elif not args.new:
            found = next(iter(store.list_conversations(project.id)), None)
        mode: Mode = args.mode or (found.activeType if found is not None else "chat")
        if mode == "run" and (found is None or active_run(project, found) is None):
            # Run mode continues a run: refused before a conversation is created or switched.
            raise RunSetupError(
                "This conversation has no workflow run to continue; start one with "
                "`crewagent run --project ... --workflow ...`."
            )
        meta = found if found is not None else store.create_conversation(project.id, entry_type=args.mode or "chat")
        if mode != meta.activeType:
            store.update_conversation(project.id, meta.id, activeType=mode)
        print(meta.id, file=sys.stderr)
        routed = await asyncio.to_thread(route_input, store, project, meta.id, args.message, mode)
        if images:
            if not isinstance(routed, RunTurn):
                raise CrewAgentError(texts.IMAGES_WITH_COMMAND)
            state = store.state_dir(project.id)
            content = user_content(routed.text, [store_image(state, meta.id, data) for data in images])
            return await headless_turn(args, store, settings, project, meta.id, content, routed.mode, config)
        return await headless_routed(args, store, settings, project, meta.id, routed, config)


def _read_images(args: argparse.Namespace, settings: Settings, config: ProviderConfig) -> list[bytes]:
    """The ``--image`` files, checked; refused when the model takes no images or the message is a command."""
    paths = getattr(args, "image", None) or []
    if not paths:
        return []
    if not accepts_images(config.provider, config.model, settings.llm.vision):
        raise ImagesNotSupported(texts.IMAGES_NOT_SUPPORTED.format(model=config.model or config.provider))
    if global_command(args.message) is not None:
        raise CrewAgentError(texts.IMAGES_WITH_COMMAND)
    return [read_image_file(path) for path in paths]


@asynccontextmanager
async def terminal_provider(args: argparse.Namespace, settings: Settings) -> AsyncIterator[ProviderConfig]:
    """The provider config of ``--provider`` / ``--model`` (the demo's server runs meanwhile); raises before
    anything is created when the provider cannot be used."""
    provider = args.provider or settings.llm.provider
    demo = start_demo_server() if provider == "demo" else None
    try:
        yield provider_config(
            settings, SecretStore(), provider=provider, model=args.model, demo_base_url=demo.base_url if demo else None
        )
    finally:
        if demo is not None:
            demo.stop()


async def headless_routed(
    args: argparse.Namespace,
    store: RuntimeStore,
    settings: Settings,
    project: ProjectInfo,
    conversation_id: str,
    routed: Routed,
    config: ProviderConfig,
) -> int:
    """What core.routing decided for the message: a turn, the agent's menu, or a command's result."""
    if isinstance(routed, RunTurn):
        if routed.note:
            print(routed.note, file=sys.stderr)
        return await headless_turn(args, store, settings, project, conversation_id, routed.text, routed.mode, config)
    if isinstance(routed, ShowAgentMenu):
        if routed.reason == "needs_package":
            print(f"{routed.agent.metadata.name}: this item needs a file of its package that cannot be run here.")
        for index in routed.items:
            item = routed.agent.menu[index]
            print(f"{index + 1}. {item.trigger}  {item.description}")
        return EXIT_OK
    print(routed.message)
    return EXIT_OK


async def headless_turn(
    args: argparse.Namespace,
    store: RuntimeStore,
    settings: Settings,
    project: ProjectInfo,
    conversation_id: str,
    text: str | list[dict[str, Any]] | None,
    mode: Mode,
    config: ProviderConfig,
) -> int:
    """One turn of ``crewagent chat`` or ``crewagent run``: the core entry point with the terminal's hooks."""
    gate = (
        ApprovalGate(AutoApprover(), always_allowed=settings.tools.alwaysAllow)
        if args.yes
        else ApprovalGate(
            _TerminalApprover(),
            always_allowed=settings.tools.alwaysAllow,
            deny_message=(
                "The user did not approve this tool call (crewagent without --yes cannot ask). "
                "Tell the user to re-run with --yes to allow writes."
            ),
        )
    )
    hooks = TurnHooks(approval=gate, ask_user=terminal_ask_user(args.yes))
    # Subagents: the Task tool delegates to children that live as long as this run.
    subagents = SubagentManager()
    # The enabled MCP servers: started when the turn needs their tools, stopped (process groups) on the way out.
    mcp = McpManager()
    as_json = bool(getattr(args, "json", False))
    if not as_json:
        subagents.add_listener(_print_subagent)
    try:
        events = run_turn(
            store, project, conversation_id, text, mode=mode, settings=settings, config=config, hooks=hooks, subagents=subagents, mcp=mcp
        )
        turn_usage: list[Any] = []
        code = await print_turn(events, as_json, turn_usage)
        _print_usage(store, project, conversation_id, turn_usage)
        if subagents.running(conversation_id):
            # A background child was asked for: finish it (its notice reaches the next turn); Ctrl-C cancels it.
            waiting = len(subagents.running(conversation_id))
            print(f"crewagent: waiting for {waiting} background subagent(s)…", file=sys.stderr, flush=True)
            await subagents.wait_background()
        return code
    finally:
        await subagents.shutdown()
        await mcp.aclose()


def _print_subagent(event: SubagentEvent) -> None:
    if isinstance(event, SubagentStatusChanged):
        line = f"🤖 subagent {event.session_id} ({event.subagent_type}) {event.status}: {event.description}"
        if event.status != "running" and event.summary:
            line += f" — {' '.join(event.summary.split())[:120]}"
        print(line, file=sys.stderr, flush=True)


def _print_usage(store: RuntimeStore, project: ProjectInfo, conversation_id: str, turn_usage: list[Any]) -> None:
    """The tokens (and cost, where prices are known) of this turn and of the whole conversation, on stderr.

    With ``--json`` every assistant line carries its own ``usage`` (core/llm/usage.py)."""
    turn = sum_usage(turn_usage)
    if not turn.calls:
        return
    messages = store.load_messages(project.id, conversation_id).messages
    total = sum_usage(m.usage for m in messages)
    print(f"crewagent: tokens this turn: {turn.describe()}; this conversation: {total.describe()}", file=sys.stderr)


async def print_turn(events: AsyncGenerator[LoopEvent, None], as_json: bool, usage: list[Any] | None = None) -> int:
    """Show a turn on the terminal (or its messages as JSON lines); the exit code of how it ended.

    ``usage`` receives the ``usage`` of each persisted assistant message."""
    out, err = sys.stdout, sys.stderr
    finished: TurnFinished | None = None
    async with aclosing(events) as stream:
        async for event in stream:
            if usage is not None and isinstance(event, MessagePersisted) and event.message.usage:
                usage.append(event.message.usage)
            if as_json:
                if isinstance(event, MessagePersisted):
                    print(json.dumps(event.message.to_log_dict(), ensure_ascii=False), flush=True)
            elif isinstance(event, TextDelta):
                out.write(event.text)
                out.flush()
            elif isinstance(event, ToolCallStarted):
                print(f"\n🔧 {event.name} {event.arguments}", file=err, flush=True)
            elif isinstance(event, ToolCallOutput):
                err.write(event.text)  # a command's live output, as it comes
                err.flush()
            elif isinstance(event, ToolCallFinished):
                status = "ok" if event.ok else f"failed ({event.error_code})"
                print(f"   {event.name} · {status} · {event.duration_ms:.0f} ms", file=err, flush=True)
            elif isinstance(event, RunProgress):
                where = "complete" if event.complete else f"at {event.current_node_id or '(start)'}"
                print(f"▶ run {event.run_id} {where}; steps done: {', '.join(event.steps_completed) or 'none'}", file=err, flush=True)
            if isinstance(event, TurnFinished):
                finished = event
    if not as_json:
        out.write("\n")
    if finished is not None and finished.reason == "waiting_user":
        print("crewagent: the run waits for your input (give it as MESSAGE to continue)", file=err)
        return EXIT_OK
    if finished is None or not finished.ok:
        error = (finished.error or {}) if finished else {}
        reason = finished.reason if finished else "unknown"
        print(f"crewagent: turn {reason}: {error.get('code', '')} {error.get('message', '')}".rstrip(), file=err)
        return EXIT_FAILED
    return EXIT_OK


def terminal_ask_user(assume_yes: bool) -> AskUser | None:
    """How ``ui.ask_user`` reaches a person from the command line.

    ``--yes`` answers every question with its defaults (a form's default values, a selection's
    first option, "confirmed"), so a headless run never hangs; a terminal asks field by field;
    with neither, the tool is not offered and the model goes on without asking.
    """
    if assume_yes:
        async def answer_defaults(widget: dict[str, Any]) -> dict[str, Any] | None:
            return default_answer(widget)

        return answer_defaults
    if not sys.stdin.isatty():
        return None

    async def ask(widget: dict[str, Any]) -> dict[str, Any] | None:
        return await asyncio.to_thread(_ask_on_terminal, widget)

    return ask


def default_answer(widget: dict[str, Any]) -> dict[str, Any]:
    """The ``WIDGET_SUBMIT`` payload of a widget answered with its defaults."""
    kind = widget.get("type")
    payload: dict[str, Any] = {"type": "WIDGET_SUBMIT", "widgetType": kind}
    if kind == "form":
        payload["values"] = {
            str(f.get("name")): f.get("default", [] if f.get("type") == "multiselect" else "") for f in widget.get("fields") or ()
        }
    elif kind == "selection":
        options = [o.get("value") for o in widget.get("options") or () if isinstance(o, dict)]
        payload["selected"] = options[:1] if widget.get("multiple") else (options[0] if options else None)
    else:
        payload["confirmed"] = True
    return payload


def _ask_on_terminal(widget: dict[str, Any]) -> dict[str, Any] | None:
    print(f"\n❓ {widget.get('title', '')}", file=sys.stderr)
    if widget.get("description") or widget.get("message"):
        print(f"   {widget.get('description') or widget.get('message')}", file=sys.stderr)
    payload = default_answer(widget)
    try:
        if widget.get("type") == "form":
            for field in widget.get("fields") or ():
                default = field.get("default", "")
                options = [o.get("value") for o in field.get("options") or () if isinstance(o, dict)]
                hint = f" ({'/'.join(map(str, options))})" if options else ""
                typed = input(f"   {field.get('label')}{hint} [{default}]: ").strip()
                payload["values"][str(field.get("name"))] = typed or default
        elif widget.get("type") == "selection":
            options = [o.get("value") for o in widget.get("options") or () if isinstance(o, dict)]
            for number, option in enumerate(options, start=1):
                print(f"   {number}. {option}", file=sys.stderr)
            typed = input("   Choose a number [1]: ").strip()
            index = int(typed) - 1 if typed.isdigit() and 0 < int(typed) <= len(options) else 0
            payload["selected"] = [options[index]] if widget.get("multiple") else options[index]
        else:
            payload["confirmed"] = input("   Confirm? [y/N]: ").strip().lower().startswith("y")
    except EOFError:
        return None
    return payload
