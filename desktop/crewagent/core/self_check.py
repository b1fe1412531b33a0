"""Checks behind ``crewagent gui --self-test``: was the demo turn persisted, protocol-complete?"""

from __future__ import annotations

from pathlib import Path

from crewagent.core.messages import to_openai
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages
from crewagent.core.store import RuntimeStore


def check_demo_turn(store: RuntimeStore, project_folder: Path) -> list[str]:
    """What is wrong with the self-test's conversation on disk ([] when the turn was persisted)."""
    try:
        project = store.open_project(project_folder)
        conversations = store.list_conversations(project.id)
    except Exception as exc:  # noqa: BLE001 - reported as a failed check, the caller exits 1
        return [f"cannot read the project: {exc}"]
    if not conversations:
        return ["no conversation was saved"]
    loaded = store.load_messages(project.id, conversations[0].id)
    messages = loaded.messages
    problems = [f"damaged log line {p.line}: {p.reason}" for p in loaded.problems]
    roles = [m.role for m in messages]
    if roles[:1] != ["user"] or "list the files" not in messages[0].text:
        problems.append(f"the user message was not saved first (roles: {roles})")
    if not any(m.role == "assistant" and m.tool_calls for m in messages):
        problems.append("no assistant message with tool calls was saved")
    if not any(m.role == "tool" for m in messages):
        problems.append("no tool result was saved")
    if not messages or messages[-1].role != "assistant" or "[demo]" not in messages[-1].text:
        problems.append("the demo's final answer was not saved last")
    errors = validate_messages([to_openai(m) for m in messages], name_pattern=DOTTED_FUNCTION_NAME)
    problems.extend(f"invalid chain: {e.code} at {e.param}" for e in errors)
    return problems
