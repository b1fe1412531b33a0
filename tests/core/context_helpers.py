"""Builders of conversation logs shared by the context tests."""

from __future__ import annotations

import itertools
from typing import Any

from crewagent.core.messages import ConversationMessage

_ids = itertools.count()


def msg(role: str, content: Any = None, **fields: Any) -> ConversationMessage:
    fields.setdefault("id", f"m{next(_ids):05d}")
    fields.setdefault("createdAt", "2026-01-01T00:00:00.000Z")
    if role == "assistant" and content is None and "tool_calls" not in fields:
        fields["content"] = None
    return ConversationMessage(role=role, content=content, **fields)  # type: ignore[arg-type]


def calls(*ids: str, name: str = "fs.read", content: str | None = None, args: str = '{"path": "@project/a.md"}') -> ConversationMessage:
    return msg(
        "assistant",
        content,
        tool_calls=[{"id": i, "type": "function", "function": {"name": name, "arguments": args}} for i in ids],
    )


def result(call_id: str, content: str = '{"ok": true, "content": "text"}', **fields: Any) -> ConversationMessage:
    return msg("tool", content, tool_call_id=call_id, toolName="fs.read", **fields)


def turn(n: int, *, size: int = 100, tool: bool = True) -> list[ConversationMessage]:
    """One user question, optionally a tool group, and the answer."""
    out = [msg("user", f"question {n} " + "q" * size)]
    if tool:
        out += [calls(f"call_{n}"), result(f"call_{n}", "r" * size)]
    out.append(msg("assistant", f"answer {n} " + "a" * size))
    return out
