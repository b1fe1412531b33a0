"""After every test: each conversation it left on disk exports as a chain the validator accepts.

This is the issue's promise, checked over everything the test suite creates (chats, runs,
crashes, kills, interrupted tools, LLM errors, subagents, damaged logs): ``crewagent export
--format openai`` piped into ``crewagent validate`` passes. It reads the logs without locks or
writes (damaged lines are simply skipped, as the export skips them), then runs the export and
the validator exactly as the two commands do.

It also checks that every repair result in a log is in place when the log is read in its own
order (``validate --all`` of the log): recovery's TOOL_INTERRUPTED results read correctly from
the log alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from crewagent.core.export import app_tool_names, export_openai
from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.protocol import (
    DOTTED_FUNCTION_NAME,
    OPENAI_FUNCTION_NAME,
    answers_message_id,
    log_order,
    validate_messages,
)
from crewagent.core.store import RuntimeStore
from crewagent.core.store.log import load_log

_LOGS = ("projects/*/conversations/*/messages.jsonl", "projects/*/conversations/*/agents/agent_*.jsonl")


def _logs(root: Path) -> Iterator[tuple[Path, Path, str]]:
    """(data dir, log, project id) for every log under a data dir at ``root`` or one level below.

    Run after every test, which mostly leaves no data folder: one listing of ``root`` (its entries'
    types come with it, no stat each) and one stat per folder for ``projects``.
    """
    try:
        with os.scandir(root) as entries:
            bases = [str(root), *(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))]
    except OSError:
        return
    for base in bases:
        if not os.path.isdir(os.path.join(base, "projects")):
            continue
        for pattern in _LOGS:
            try:
                found = sorted(Path(base).glob(pattern))
            except OSError:
                continue
            for log in found:
                # <data>/projects/<project>/conversations/<conversation>/[agents/]<log>
                project_dir = log.parents[2] if log.name == "messages.jsonl" else log.parents[3]
                yield project_dir.parent.parent, log, project_dir.name


def export_problems(root: Path) -> list[str]:
    """One line per log under ``root`` whose OpenAI export the validator rejects."""
    problems: list[str] = []
    names: frozenset[str] | None = None
    stores: dict[Path, RuntimeStore] = {}
    for data_dir, log, project_id in _logs(root):
        try:
            if not log.is_file():
                continue
            messages = load_log(log).messages
        except OSError:
            continue  # unreadable on purpose (a damaged-file test): nothing to export
        store = stores.setdefault(data_dir, RuntimeStore(data_dir))

        def full(message: object, store: RuntimeStore = store) -> str:
            return store.read_full_output(project_id, message)  # type: ignore[arg-type]

        names = app_tool_names() if names is None else names
        exported = export_openai(messages, full, tool_names=names)
        wire = json.loads(json.dumps(exported.messages, ensure_ascii=False))  # what `validate -` reads
        errors = validate_messages(wire, first_only=True, name_pattern=OPENAI_FUNCTION_NAME) if wire else []
        if exported.errors or errors:
            error = (exported.errors or errors)[0]
            problems.append(f"{log}: {error.code} at {error.param}: {error.message}")
        problems.extend(f"{log}: {problem}" for problem in misplaced_repairs(messages))
    return problems


def misplaced_repairs(messages: list[ConversationMessage]) -> list[str]:
    """Repair results that the log, read in its own order, does not show answering their call."""
    ordered = log_order(messages)
    # Every synthetic result, not only those naming their call: one without the name is checked too.
    repairs = {id(m) for m in ordered if answers_message_id(m) or (m.role == "tool" and getattr(m, "synthetic", False) is True)}
    if not repairs:
        return []
    calls = {m.tool_call_id for m in ordered if id(m) in repairs}
    out = []
    for error in validate_messages([to_openai(m) for m in ordered], name_pattern=DOTTED_FUNCTION_NAME):
        at_repair = error.index >= 0 and id(ordered[error.index]) in repairs
        unanswered = error.code == "missing_tool_result" and set(error.message.rsplit(": ", 1)[-1].split(", ")) & calls
        if at_repair or unanswered:
            out.append(f"the log read in order: {error.code} at {error.param}")
    return out
