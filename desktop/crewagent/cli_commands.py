"""The options of ``crewagent chat``, ``run`` and ``runs``, without their handlers' imports (no Qt here).

The handlers live in cli_chat.py and cli_run.py, which import the loop, the tools, the LLM client
and the run engine. Registering a command must not cost every other command (``--help``,
``packages list``) that second, so the parser gets a small handler here that imports its module
when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

#: The conversation modes (crewagent.core.messages.MODES, which imports pydantic; a test keeps them equal).
MODES = ("chat", "agent", "run")
#: ``--provider`` values: the demo and the presets of resources/providers.json (core.llm.presets
#: validates that file with pydantic; tests/cli keeps this tuple equal to its ids).
PROVIDERS = (
    "demo",
    "openai",
    "openai-compatible",
    "ollama",
    "lmstudio",
    "vllm",
    "llamacpp",
    "deepseek",
    "openrouter",
    "groq",
    "mistral",
    "together",
    "gemini",
    "azure",
)


def add_chat_subcommand(subparsers: Any, common: argparse.ArgumentParser) -> None:
    chat = subparsers.add_parser("chat", parents=[common], help="run one user turn headless")
    chat.add_argument("--project", required=True)
    target = chat.add_mutually_exclusive_group()
    target.add_argument("--conversation", help="continue this conversation (default: the most recent one)")
    target.add_argument("--new", action="store_true", help="start a new conversation")
    chat.add_argument("--mode", choices=MODES, help="chat, agent or run (default: the conversation's mode)")
    chat.add_argument("--provider", choices=PROVIDERS, metavar="PROVIDER", help=f"one of {', '.join(PROVIDERS)}")
    chat.add_argument("--model")
    chat.add_argument("--yes", action="store_true", help="approve write tools without asking")
    chat.add_argument(
        "--image", action="append", metavar="FILE", help="attach an image (PNG, JPEG, WebP or GIF, up to 20 MB); repeatable"
    )
    chat.add_argument("message", help="the user message")
    chat.set_defaults(handler=cmd_chat)


def add_run_subcommands(subparsers: Any, common: argparse.ArgumentParser) -> None:
    run = subparsers.add_parser("run", parents=[common], help="start or continue a workflow run (one turn)")
    run.add_argument("--project", required=True)
    run.add_argument("--workflow", help="[PKG:]WORKFLOW to run (default: the conversation's active run)")
    target = run.add_mutually_exclusive_group()
    target.add_argument("--conversation", help="run in this conversation")
    target.add_argument("--new", action="store_true", help="start a new conversation")
    run.add_argument("--agent", help="the run's agent (a package agent id; default: the entry node's)")
    run.add_argument("--provider", choices=PROVIDERS, metavar="PROVIDER", help=f"one of {', '.join(PROVIDERS)}")
    run.add_argument("--model")
    run.add_argument("--yes", action="store_true", help="approve write tools and answer questions with their defaults")
    run.add_argument("message", nargs="?", help="the user message (default: start / continue)")
    run.set_defaults(handler=cmd_run)

    runs = subparsers.add_parser("runs", parents=[common], help="list a project's workflow runs")
    runs.add_argument("--project", required=True)
    runs.set_defaults(handler=cmd_runs)


def cmd_chat(args: argparse.Namespace) -> int:
    from crewagent import cli_chat

    return cli_chat.cmd_chat(args)


def cmd_run(args: argparse.Namespace) -> int:
    from crewagent import cli_run

    return cli_run.cmd_run(args)


def cmd_runs(args: argparse.Namespace) -> int:
    from crewagent import cli_run

    return cli_run.cmd_runs(args)
