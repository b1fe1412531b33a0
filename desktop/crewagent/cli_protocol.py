"""The protocol commands of the CLI: ``crewagent validate FILE`` and ``crewagent context``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crewagent.core.context import ContextBudget

# The context builder and the validator (pydantic, the tokenizer ...) are imported by the handlers,
# not here: building the parser must stay light for every command (see cli.py).

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def add_subcommands(subparsers: Any, common_parent: argparse.ArgumentParser) -> None:
    """Register ``validate`` and ``context`` on the main parser's subparsers."""
    validate = subparsers.add_parser(
        "validate",
        parents=[common_parent],
        help="check an OpenAI messages[] file against the tool-call protocol",
        description=(
            "Exit 0 when the messages would be accepted; exit 1 and the error envelope of the first "
            "problem (--all: every problem) when not; exit 2 when FILE is not readable JSON. FILE is a "
            "JSON array of messages, a request body with a 'messages' array, or a .jsonl log (read in the "
            "log's order: a repair result counts as written right after the call it answers)."
        ),
    )
    validate.add_argument("file", help="the JSON file ('-' for stdin)")
    validate.add_argument("--all", action="store_true", help="list every error, not only the first")
    validate.add_argument(
        "--allow-dotted-names",
        action="store_true",
        help="accept dotted function names (fs.read) as CrewAgent logs hold them; default: OpenAI's rule",
    )
    validate.set_defaults(handler=cmd_validate)

    context = subparsers.add_parser(
        "context",
        parents=[common_parent],
        help="print the exact messages[] the next LLM call of a conversation would send",
    )
    context.add_argument("--project", required=True, help="project folder (initialised if needed)")
    context.add_argument("--conversation", required=True)
    context.add_argument("--mode", choices=("chat", "agent", "run"), help="default: the conversation's active mode")
    context.add_argument("--max-messages", type=_positive, help="contextMaxMessages (default 80)")
    context.add_argument(
        "--max-chars", type=_positive, help="hold the request to this many characters instead of the model's window"
    )
    context.add_argument("--max-tokens", type=_positive, help="a token budget below the model's window")
    context.set_defaults(handler=_context_with_store)


def _read_messages(source: str) -> Any:
    """The messages[] of FILE; raises ValueError/OSError when it cannot be read as JSON."""
    from crewagent.core.jsonparse import parse_json

    raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    if source.endswith(".jsonl"):
        return [parse_json(line) for line in raw.splitlines() if line.strip()]
    data = parse_json(raw)
    if isinstance(data, dict) and "messages" in data:
        return data["messages"]
    return data


def cmd_validate(args: argparse.Namespace) -> int:
    """``crewagent validate FILE [--all] [--json]``."""
    from crewagent.core.protocol import DOTTED_FUNCTION_NAME, OPENAI_FUNCTION_NAME, current_branch, log_order, validate_messages

    try:
        messages = _read_messages(args.file)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"crewagent: cannot read {args.file} as JSON: {reason}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(messages, list):
        # Moves only repair results of a log (answersMessageId); an edit's old branch is left out.
        messages = current_branch(log_order(messages))
    pattern = DOTTED_FUNCTION_NAME if args.allow_dotted_names else OPENAI_FUNCTION_NAME
    errors = validate_messages(messages, name_pattern=pattern, first_only=not args.all)
    if errors:
        body: Any = [e.envelope() for e in errors] if args.all else errors[0].envelope()
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return EXIT_FAILED
    count = len(messages)
    if getattr(args, "json", False):
        print(json.dumps({"valid": True, "messageCount": count}))
    else:
        print(f"valid: {count} messages")
    return EXIT_OK


def _context_with_store(args: argparse.Namespace) -> int:
    from crewagent.core.store import RuntimeStore

    return cmd_context(args, RuntimeStore(getattr(args, "data_dir", None)))


def _budget(args: argparse.Namespace) -> ContextBudget:
    """The budget a turn would use (the model's window, from the settings), with the flags applied;
    ``--max-chars`` holds the request to the character budget instead of the window."""
    from crewagent.core.context import ContextBudget
    from crewagent.core.loop.factory import settings_window
    from crewagent.core.settings import SettingsStore

    settings = SettingsStore().load()
    base = ContextBudget.from_settings(settings.llm.model_dump(), window=settings_window(settings))
    return replace(
        base,
        max_messages=args.max_messages or base.max_messages,
        max_chars=args.max_chars or base.max_chars,
        max_tokens=args.max_tokens or base.max_tokens,
        window=None if args.max_chars else base.window,
    )


def cmd_context(args: argparse.Namespace, store: Any) -> int:
    """``crewagent context``: the next request of a conversation, built from its log as it is.

    Read-only: an interrupted call is shown with the TOOL_INTERRUPTED result that repair
    would persist before the real call. Without ``--json`` the messages[] go to stdout and a
    one-line summary to stderr; exit 1 when no valid request fits the budget.
    """
    from crewagent.core.context import build_llm_messages

    project = store.open_project(args.project, create=True)
    meta = store.get_conversation(project.id, args.conversation)
    loaded = store.load_messages(project.id, meta.id)
    budget = _budget(args)
    mode = args.mode or meta.activeType
    from crewagent.core.turns import next_call_extras  # the run engine, only for this command

    persona, run_context = next_call_extras(store, project, meta.id, mode)
    result = build_llm_messages(
        loaded.messages, mode=mode, budget=budget, conversation_id=meta.id, persona=persona, run_context=run_context
    )
    if loaded.problems:
        result.debug["logProblems"] = loaded.problem_summary()
    if getattr(args, "json", False):
        out: dict[str, Any] = {"messages": result.messages, "debug": result.debug}
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(json.dumps(result.messages, ensure_ascii=False, indent=2))
        d = result.debug
        print(
            f"crewagent: {mode}: {d['sentMessages']} messages ({d['includedMessages']} of "
            f"{d['totalMessages']} from the log), ~{d['estimatedTokens']} tokens, "
            f"{d['usage']['usagePercent']}% of budget ({d['usage']['status']}); budget: {d['budget']['source']}",
            file=sys.stderr,
        )
    if result.error is not None:
        print(f"crewagent: {result.error.code}: {result.error.message}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
