"""Conversation exports: OpenAI messages[] (outputs in full), JSON Lines, and readable Markdown.

With subagents (``--include-subagents``) each export nests the sidechains under the Task call
that started them (see :class:`SubagentExport` and the section at the end).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crewagent.core.errors import ImportFormatError, OffloadedOutputError
from crewagent.core.jsonparse import parse_json
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


def export_jsonl(messages: Iterable[ConversationMessage], subagents: Mapping[str, SubagentExport] | None = None) -> str:
    """One log line per message; with ``subagents``, a child's lines follow its Task result."""
    lines: list[str] = []
    for message in messages:
        lines.append(message.to_log_line() + "\n")
        child = (subagents or {}).get(message.tool_call_id or "") if message.role == "tool" else None
        if child is not None:
            lines.append(export_jsonl(child.messages, child.children))
    return "".join(lines)


def export_markdown(
    meta: ConversationMeta,
    messages: Iterable[ConversationMessage],
    full_output: FullOutput,
    subagents: Mapping[str, SubagentExport] | None = None,
) -> tuple[str, list[str]]:
    """A readable transcript: chat text, every tool call with its arguments, every tool result.

    With ``subagents``, each child's transcript follows its Task result as a quoted section.
    """
    parts = [f"# {meta.title}\n", f"_Conversation `{meta.id}` · {meta.activeType} · created {meta.createdAt}_\n"]
    body, warnings = _markdown_body(messages, full_output, subagents or {})
    return "\n".join([*parts, *body]), warnings


def _markdown_body(
    messages: Iterable[ConversationMessage], full_output: FullOutput, subagents: Mapping[str, SubagentExport]
) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    parts: list[str] = []
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
            child = subagents.get(message.tool_call_id or "")
            if child is not None:
                section, more = _markdown_subagent(child, full_output)
                parts.append(section)
                warnings.extend(more)
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
    return parts, warnings


def _pretty(text: str) -> str:
    try:
        return json.dumps(parse_json(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text


def _fence(text: str, lang: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}\n"


# -- subagents (issue 6) -----------------------------------------------------------------------


@dataclass(frozen=True)
class SubagentExport:
    """One sidechain to nest in an export: its meta (as stored), its messages, its own children.

    ``children`` and the ``subagents`` arguments above map a Task call id (in the log that made
    the call) to the child that answered it.
    """

    meta: Mapping[str, Any]
    messages: list[ConversationMessage]
    children: Mapping[str, SubagentExport] = field(default_factory=dict)


def export_openai_with_subagents(
    messages: Iterable[ConversationMessage], full_output: FullOutput, subagents: Mapping[str, SubagentExport]
) -> tuple[dict[str, Any], list[str]]:
    """``{"messages": [...], "subagents": [...]}``: the conversation's messages[] exactly as
    :func:`export_openai` gives them, and its children, each ``{sessionId, parentSessionId,
    parentToolCallId, type, status, depth, description, model, createdAt, updatedAt, summary,
    messages: [...], subagents: [...]}`` (its messages[] in full, its own children nested).
    """
    out, warnings = export_openai(messages, full_output)
    nested: list[dict[str, Any]] = []
    for child in subagents.values():
        node, more = _openai_subagent(child, full_output)
        nested.append(node)
        warnings.extend(more)
    return {"messages": out, "subagents": nested}, warnings


_META_KEYS = (
    "sessionId", "parentSessionId", "parentToolCallId", "type", "status", "depth", "description",
    "model", "background", "createdAt", "updatedAt", "summary",
)


def _openai_subagent(child: SubagentExport, full_output: FullOutput) -> tuple[dict[str, Any], list[str]]:
    payload, warnings = export_openai_with_subagents(child.messages, full_output, child.children)
    node = {key: child.meta[key] for key in _META_KEYS if child.meta.get(key) is not None}
    return {**node, **payload}, warnings


def _markdown_subagent(child: SubagentExport, full_output: FullOutput) -> tuple[str, list[str]]:
    """The child's transcript as a quoted section (a grandchild's is quoted twice)."""
    meta = child.meta
    head = [
        f"#### 🤖 Subagent `{meta.get('sessionId')}` ({meta.get('type')}) — {meta.get('status')}\n",
        f"_{meta.get('description', '')} · depth {meta.get('depth')} · {meta.get('model') or 'model unknown'} · "
        f"started {meta.get('createdAt')}_\n",
    ]
    body, warnings = _markdown_body(child.messages, full_output, child.children)
    text = "\n".join([*head, *body]).rstrip("\n")
    quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
    return quoted + "\n", warnings
