"""The command line: the desktop app's entry point and headless access to the same core (no Qt here)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from crewagent import __version__
from crewagent.core.errors import (
    ConversationNotFound,
    CrewAgentError,
    ImportFormatError,
    ProjectError,
    RunSetupError,
    StoreWriteError,
)
from crewagent.core.export import (
    export_jsonl,
    export_markdown,
    export_openai,
    export_openai_with_subagents,
    parse_openai_messages,
)
from crewagent.core.store import RuntimeStore
from crewagent.core.store.index import title_from_text
from crewagent.core.subagents.export import subagent_tree

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own exit code is 2 as well; keep the text short
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common() -> _Parser:
    """Options every command takes, before or after the subcommand."""
    common = _Parser(add_help=False)
    common.add_argument("--data-dir", default=argparse.SUPPRESS, help="runtime data folder (default: the OS data dir)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(prog="crewagent", description="CrewAgent Desktop", parents=[common])
    parser.add_argument("--version", action="version", version=f"crewagent {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    gui = sub.add_parser("gui", parents=[common], help="open the desktop app")
    gui.add_argument("--project", help="open this project folder at start")
    gui.add_argument(
        "--self-test",
        action="store_true",
        help="open the window, send one demo message, check it was saved, exit (temporary data and settings)",
    )
    gui.set_defaults(handler=cmd_gui)

    conversations = sub.add_parser("conversations", parents=[common], help="list a project's conversations")
    conversations.add_argument("--project", required=True, help="project folder (initialised if needed)")
    conversations.set_defaults(handler=cmd_conversations)

    imp = sub.add_parser("import", parents=[common], help="import an OpenAI messages[] JSON file")
    imp.add_argument("--project", required=True)
    imp.add_argument("file", help="a JSON file holding an array of OpenAI chat messages ('-' for stdin)")
    imp.add_argument("--title")
    imp.set_defaults(handler=cmd_import)

    exp = sub.add_parser("export", parents=[common], help="export a conversation")
    exp.add_argument("--project", required=True)
    exp.add_argument("--conversation", required=True)
    exp.add_argument("--format", choices=("openai", "markdown", "jsonl"), default="openai")
    exp.add_argument("-o", "--output", help="write to this file instead of stdout")
    exp.add_argument(
        "--include-subagents",
        action="store_true",
        help="nest subagent conversations under their Task calls (openai: an object {messages, subagents})",
    )
    exp.set_defaults(handler=cmd_export)

    from crewagent import cli_chat

    cli_chat.add_subcommand(sub, common)
    from crewagent import cli_packages

    cli_packages.add_subcommand(sub, common)
    from crewagent import cli_run

    cli_run.add_subcommands(sub, common)
    try:
        from crewagent import cli_protocol
    except ImportError:  # pragma: no cover - the protocol commands arrive with their own module
        pass
    else:
        cli_protocol.add_subcommands(sub, common)
    return parser


def _store(args: argparse.Namespace) -> RuntimeStore:
    return RuntimeStore(getattr(args, "data_dir", None))


def _json_mode(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _out(args: argparse.Namespace) -> TextIO:
    return sys.stdout


def cmd_gui(args: argparse.Namespace) -> int:
    from crewagent.ui.app import run_gui  # Qt is imported only when a window is wanted

    if getattr(args, "self_test", False):
        return _gui_self_test(args, run_gui)
    return run_gui(data_dir=getattr(args, "data_dir", None), project=getattr(args, "project", None))


def _gui_self_test(args: argparse.Namespace, run_gui: Callable[..., int]) -> int:
    """Run the window's self-test in throwaway data and settings folders, then check the log on disk."""
    import os
    import tempfile

    from crewagent.core.self_check import check_demo_turn

    with tempfile.TemporaryDirectory(prefix="crewagent-self-test-") as scratch:
        root = Path(scratch)
        data = Path(args.data_dir) if getattr(args, "data_dir", None) else root / "data"
        project = Path(args.project) if getattr(args, "project", None) else root / "project"
        os.environ["CREWAGENT_CONFIG_DIR"] = str(root / "config")  # the demo provider, whatever the user set
        code = run_gui(data_dir=str(data), project=str(project), self_test=True)
        if code != 0:
            print("crewagent: self-test: the window did not finish the demo turn", file=sys.stderr)
            return EXIT_FAILED
        problems = check_demo_turn(RuntimeStore(data), project)
    for problem in problems:
        print(f"crewagent: self-test: {problem}", file=sys.stderr)
    if problems:
        return EXIT_FAILED
    print("self-test passed: the window sent a demo message and the turn was persisted")
    return EXIT_OK


def cmd_conversations(args: argparse.Namespace) -> int:
    store = _store(args)
    project = store.open_project(args.project, create=True)
    metas = store.list_conversations(project.id)
    if _json_mode(args):
        json.dump([meta.model_dump(mode="json") for meta in metas], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    if not metas:
        print(f"No conversations in {project.root}.")
        return EXIT_OK
    print(f"{'ID':<38} {'TYPE':<6} {'MSGS':>6}  {'LAST ACTIVE':<24} TITLE")
    for meta in metas:
        print(f"{meta.id:<38} {meta.activeType:<6} {meta.messageCount:>6}  {meta.lastActiveAt:<24} {meta.title}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"Cannot read {args.file}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{args.file} is not UTF-8 text.") from exc
    except ValueError as exc:
        raise ImportFormatError(f"{args.file} is not valid JSON: {exc}") from exc
    messages = parse_openai_messages(data)  # raises before anything is created
    store = _store(args)
    project = store.open_project(args.project, create=True)
    first_user = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
    title = args.title or title_from_text(first_user) or f"Imported from {Path(args.file).name}"
    meta = store.create_conversation(project.id, title=title)
    try:
        store.append_messages(project.id, meta.id, messages)
    except StoreWriteError:
        store.delete_conversation(project.id, meta.id)
        raise
    if _json_mode(args):
        print(json.dumps({"conversationId": meta.id, "messageCount": len(messages)}))
    else:
        print(meta.id)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    store = _store(args)
    project = store.open_project(args.project, create=True)
    meta = store.get_conversation(project.id, args.conversation)
    loaded = store.load_messages(project.id, meta.id)
    warnings: list[str] = []
    if loaded.problems:
        warnings.append(loaded.problem_summary())

    def full(message: Any) -> str:
        return store.read_full_output(project.id, message)

    subagents = None
    if args.include_subagents:
        subagents, damaged = subagent_tree(store, project.id, meta.id)
        warnings.extend(damaged)
    payload: Any
    if args.format == "openai" and subagents is not None:
        payload, more = export_openai_with_subagents(loaded.messages, full, subagents)
        text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    elif args.format == "openai":
        payload, more = export_openai(loaded.messages, full)
        text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    elif args.format == "jsonl":
        text, more = export_jsonl(loaded.messages, subagents), []
    else:
        text, more = export_markdown(meta, loaded.messages, full, subagents)
    warnings.extend(more)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"crewagent: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_FAILED
    else:
        sys.stdout.write(text)
    for warning in warnings:
        print(f"crewagent: warning: {warning}", file=sys.stderr)
    # Output that could not be completed (a missing offload file) is a failure of the operation.
    return EXIT_FAILED if more else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        return cmd_gui(args)
    try:
        return handler(args)
    except (ImportFormatError, ProjectError, ConversationNotFound, RunSetupError, ValueError) as exc:
        print(f"crewagent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CrewAgentError as exc:
        print(f"crewagent: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
