"""The command line: the desktop app's entry point and headless access to the same core (no Qt here)."""

from __future__ import annotations

import argparse
import json
import logging
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crewagent import __version__
from crewagent.cli_output import listing_done
from crewagent.core.errors import (
    ConversationNotFound,
    CrewAgentError,
    ImportFormatError,
    ProjectError,
    RunSetupError,
    SetupError,
)
from crewagent.core.redact import install_log_redaction

if TYPE_CHECKING:
    from crewagent.core.store import RuntimeStore

# Building the parser imports only light modules (the standard library, errors, the light
# cli_* modules): `crewagent --help` and `crewagent packages list` must not pay for the store,
# the export, the loop, the tools or the LLM client. Each command's handler imports what it needs
# when it runs (see cli_commands.py for chat, run and runs; tests/cli/test_cli_startup.py).

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
    imp.add_argument(
        "--repair",
        action="store_true",
        help="import a broken tool-call chain repaired, as a request would carry it (default: refuse it, exit 2)",
    )
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

    from crewagent import cli_commands, cli_packages

    cli_commands.add_chat_subcommand(sub, common)
    cli_packages.add_subcommand(sub, common)
    cli_commands.add_run_subcommands(sub, common)
    from crewagent import cli_mcp

    cli_mcp.add_subcommand(sub, common)
    try:
        from crewagent import cli_protocol
    except ImportError:  # pragma: no cover - the protocol commands arrive with their own module
        pass
    else:
        cli_protocol.add_subcommands(sub, common)
    return parser


def _store(args: argparse.Namespace) -> RuntimeStore:
    from crewagent.core.store import RuntimeStore

    return RuntimeStore(getattr(args, "data_dir", None))


def _json_mode(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def cmd_gui(args: argparse.Namespace) -> int:
    from crewagent.core import tuning

    with tuning.start_imports():  # no cyclic collections while the start imports (see there)
        _check_gui_setup(args)
        from crewagent.ui.app import run_gui  # Qt is imported only when a window is wanted

    if getattr(args, "self_test", False):
        return _gui_self_test(args, run_gui)
    return run_gui(data_dir=getattr(args, "data_dir", None), project=getattr(args, "project", None))


def _check_gui_setup(args: argparse.Namespace) -> None:
    """What would stop the window later, less clearly, refused before Qt starts (exit 2, one line).

    An empty ``--project``, a data folder that is a file, a settings folder that cannot be read,
    and on Linux/X11 the system libraries Qt's platform plugin lacks (Qt would abort, naming none).
    """
    from crewagent import gui_deps  # ctypes, subprocess, ldd: only the window needs them

    problem = gui_deps.platform_problem()
    if problem is not None:
        raise SetupError(problem)
    project = getattr(args, "project", None)
    if project is not None and not project.strip():
        raise ProjectError("The project path is empty; give the project folder.")
    from crewagent.core.settings import SettingsStore
    from crewagent.core.store import RuntimeStore

    RuntimeStore(getattr(args, "data_dir", None))  # raises SetupError for a data folder that is a file
    if not getattr(args, "self_test", False):  # the self-test uses throwaway settings
        SettingsStore().load()


def _gui_self_test(args: argparse.Namespace, run_gui: Callable[..., int]) -> int:
    """Run the window's self-test in throwaway data and settings folders, then check the log on disk."""
    import os
    import tempfile

    from crewagent.core.self_check import check_demo_turn
    from crewagent.core.store import RuntimeStore

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
    if listing_done(_json_mode(args), [meta.to_json_dict() for meta in metas], f"No conversations in {project.root}."):
        return EXIT_OK
    print(f"{'ID':<38} {'TYPE':<6} {'MSGS':>6}  {'LAST ACTIVE':<24} TITLE")
    for meta in metas:
        print(f"{meta.id:<38} {meta.activeType:<6} {meta.messageCount:>6}  {meta.lastActiveAt:<24} {meta.title}")
    return EXIT_OK


def _read_input(source: str) -> bytes:
    """The bytes of FILE, or of stdin for '-'. Only a regular file is opened: a FIFO or a device would block."""
    if source == "-":
        return sys.stdin.buffer.read()
    path = Path(source)
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise ImportFormatError(f"{source} is a folder, not a file.")
        if not stat.S_ISREG(mode):
            raise ImportFormatError(f"{source} is not a regular file (a pipe, socket or device); pass its content on stdin with '-'.")
        return path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"Cannot read {source}: {exc.strerror or exc}") from exc


def cmd_import(args: argparse.Namespace) -> int:
    """Check everything first (JSON, messages, the tool-call chain, storable text); then create the conversation."""
    from crewagent.core.attachments import decode_imported_images, store_imported_images
    from crewagent.core.export import app_tool_names, check_import_chain, decode_tool_names, parse_openai_messages
    from crewagent.core.jsonparse import parse_json
    from crewagent.core.protocol import repaired_chain
    from crewagent.core.store.index import title_from_text

    raw = _read_input(args.file)
    try:
        data = parse_json(raw)
    except ValueError as exc:  # not UTF-8, not JSON, nested too deeply
        raise ImportFormatError(f"{args.file} is {exc}") from exc
    messages = parse_openai_messages(data)  # raises before anything is created
    errors = check_import_chain(data)
    changes: list[str] = []
    if errors and not args.repair:
        print(json.dumps(errors[0].envelope(), ensure_ascii=False, indent=2))
        first = errors[0]
        print(
            f"crewagent: {args.file} is not a valid tool-call chain ({first.code} at {first.param}); "
            "nothing was imported (--repair imports it repaired)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if errors:
        chain = repaired_chain(messages)
        where = {message.id: f"messages[{index}]" for index, message in enumerate(messages)}
        messages, changes = chain.messages, chain.describe(lambda i: where.get(i, i))
        if not messages:
            raise ImportFormatError(f"{args.file} holds no message that a request could carry; nothing was imported.")
    messages = decode_tool_names(messages, app_tool_names())
    # Images given as data URLs: checked now, stored as files once the conversation exists.
    with_images = {m.id for index, m in enumerate(messages) if decode_imported_images(m.content, f"messages[{index}]")}
    first_user = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
    title = args.title or title_from_text(first_user) or f"Imported from {Path(args.file).name}"
    try:
        for message in messages:
            message.to_log_line().encode("utf-8")
        title.encode("utf-8")
    except (UnicodeError, ValueError) as exc:
        raise ImportFormatError(f"{args.file} holds text that cannot be stored as UTF-8 ({exc}).") from exc
    store = _store(args)
    project = store.open_project(args.project, create=True)
    meta = store.create_conversation(project.id, title=title)
    try:
        if with_images:
            state = store.state_dir(project.id)
            messages = [
                m.model_copy(update={"content": store_imported_images(m.content, state, meta.id)}) if m.id in with_images else m
                for m in messages
            ]
        store.append_messages(project.id, meta.id, messages)
    except BaseException:
        store.delete_conversation(project.id, meta.id)  # a failed import leaves nothing behind
        raise
    for change in changes:
        print(f"crewagent: repaired: {change}", file=sys.stderr)
    if _json_mode(args):
        print(json.dumps({"conversationId": meta.id, "messageCount": len(messages)}))
    else:
        print(meta.id)
    return EXIT_OK


def _output_problem(output: str) -> str | None:
    """Why ``-o FILE`` cannot be written, for what can be told before any work: a folder, a missing folder."""
    path = Path(output)
    if path.is_dir():
        return f"{output} is a folder; give a file name"
    if not path.parent.is_dir():
        return f"{path.parent} is not a folder" if path.parent.exists() else f"the folder {path.parent} does not exist"
    return None


def cmd_export(args: argparse.Namespace) -> int:
    from crewagent.core.export import export_conversation

    problem = _output_problem(args.output) if args.output else None
    if problem is not None:
        print(f"crewagent: cannot write {args.output}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    store = _store(args)
    project = store.open_project(args.project, create=True)
    result = export_conversation(store, project.id, args.conversation, args.format, include_subagents=args.include_subagents)
    if result.error is not None:
        print(json.dumps(result.error, ensure_ascii=False), file=sys.stderr)
        print("crewagent: the exported chain would not be valid; nothing was written", file=sys.stderr)
        return EXIT_FAILED
    text = result.text
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"crewagent: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_FAILED
    else:
        sys.stdout.write(text)
    for change in result.changes:  # the log is not a valid chain as it stands: say what the export changed
        print(f"crewagent: repaired: {change}", file=sys.stderr)
    for warning in result.warnings:
        print(f"crewagent: warning: {warning}", file=sys.stderr)
    # Output that could not be completed (a missing offload file) is a failure of the operation.
    return EXIT_FAILED if result.incomplete else EXIT_OK


class _StderrNotices(logging.Handler):
    """Shows what the core logs as a warning (a rebuilt index, conversations brought back) on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"crewagent: {record.getMessage()}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    install_log_redaction()  # no log line may carry a credential (a base URL's user-info ...)
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        return cmd_gui(args)
    notices = _StderrNotices(logging.WARNING)
    logger = logging.getLogger("crewagent")
    logger.addHandler(notices)
    try:
        return _run(handler, args)
    finally:
        logger.removeHandler(notices)


def _run(handler: Handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except (ImportFormatError, ProjectError, ConversationNotFound, SetupError, RunSetupError, ValueError) as exc:
        print(f"crewagent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CrewAgentError as exc:
        print(f"crewagent: {exc}", file=sys.stderr)
        return EXIT_USAGE if _is_config_error(exc) else EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK


def _is_config_error(exc: CrewAgentError) -> bool:
    """A bad provider setting or image is bad input (exit 2); their modules are imported only on this path."""
    from crewagent.core.attachments import AttachmentError, ImagesNotSupported
    from crewagent.core.llm.config import LlmConfigError

    return isinstance(exc, (LlmConfigError, AttachmentError, ImagesNotSupported))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
