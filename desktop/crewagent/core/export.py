"""Conversation exports: OpenAI messages[] (outputs in full), JSON Lines, and readable Markdown."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from crewagent.core.errors import ImportFormatError, OffloadedOutputError
from crewagent.core.messages import ConversationMessage, ConversationMeta, from_openai, to_openai

_ROLES = {"system", "user", "assistant", "tool", "developer"}


def parse_openai_messages(data: Any) -> list[ConversationMessage]:
    """Check that ``data`` is an OpenAI messages[] array and wrap each entry; raise ImportFormatError naming the problem."""
    if not isinstance(data, list):
        raise ImportFormatError(f"Expected a JSON array of messages (messages[]), got a JSON {_json_type(data)}.")
    messages: list[ConversationMessage] = []
    for index, item in enumerate(data):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where} is a JSON {_json_type(item)}, not a message object.")
        role = item.get("role")
        if role not in _ROLES:
            raise ImportFormatError(f"{where} has role {role!r}; expected system, user, assistant or tool.")
        if role == "developer":
            item = {**item, "role": "system"}
        try:
            messages.append(from_openai(item))
        except ValueError as exc:
            first = str(exc).splitlines()
            detail = first[1].strip() + ": " + first[2].strip() if len(first) > 2 else str(exc)
            raise ImportFormatError(f"{where} is not a valid {role} message ({detail}).") from exc
    return messages


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


FullOutput = Callable[[ConversationMessage], str]


def export_openai(messages: Iterable[ConversationMessage], full_output: FullOutput) -> tuple[list[dict[str, Any]], list[str]]:
    """The OpenAI messages[] with offloaded tool outputs put back in full, and warnings for any that cannot be."""
    out: list[dict[str, Any]] = []
    warnings: list[str] = []
    for message in messages:
        content: str | None = None
        if message.is_offloaded:
            try:
                content = full_output(message)
            except OffloadedOutputError as exc:
                warnings.append(str(exc))
        out.append(to_openai(message, content=content))
    return out, warnings


def export_jsonl(messages: Iterable[ConversationMessage]) -> str:
    return "".join(message.to_log_line() + "\n" for message in messages)


def export_markdown(
    meta: ConversationMeta, messages: Iterable[ConversationMessage], full_output: FullOutput
) -> tuple[str, list[str]]:
    """A readable transcript: chat text, every tool call with its arguments, every tool result."""
    warnings: list[str] = []
    parts = [f"# {meta.title}\n", f"_Conversation `{meta.id}` · {meta.activeType} · created {meta.createdAt}_\n"]
    call_names: dict[str, str] = {}
    for message in messages:
        stamp = message.createdAt
        for call in message.tool_calls or []:
            call_names[call.id] = call.function.name
        if message.role == "tool":
            name = message.toolName or call_names.get(message.tool_call_id or "", "tool")
            try:
                body = full_output(message) if message.is_offloaded else message.text
            except OffloadedOutputError as exc:
                warnings.append(str(exc))
                body = message.text
            size = f" · {message.fullOutputBytes:,} bytes" if message.fullOutputBytes else ""
            parts.append(f"### 🔧 Result of `{name}` (call `{message.tool_call_id}`){size}\n")
            parts.append(_fence(_pretty(body)))
            continue
        heading = {"user": "🧑 User", "assistant": "🤖 Assistant", "system": "⚙️ System"}[message.role]
        if message.partType == "error":
            heading += " — error"
        parts.append(f"## {heading}\n\n<sub>{stamp}</sub>\n")
        if message.reasoning_content:
            parts.append("> **Reasoning**\n>\n" + "\n".join(f"> {line}" for line in message.reasoning_content.splitlines()) + "\n")
        if message.text:
            parts.append(message.text.rstrip() + "\n")
        for call in message.tool_calls or []:
            parts.append(f"**🔧 Tool call** `{call.function.name}` (id `{call.id}`)\n")
            parts.append(_fence(_pretty(call.function.arguments), "json"))
    return "\n".join(parts), warnings


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text


def _fence(text: str, lang: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}\n"
