"""Conversation exports: OpenAI messages[] (outputs in full), JSON Lines, and readable Markdown.

The OpenAI export is the chain a request would carry, after repair, with tool names as the wire
sends them (``fs_read``); ``import`` maps those back to the app's names. JSON Lines is the raw log
(old branches of edited turns included); OpenAI and Markdown show the current branch only.

With subagents (``--include-subagents``) each export nests the sidechains under the Task call
that started them (see :class:`SubagentExport` and the section at the end).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crewagent.core import texts
from crewagent.core.attachments import AttachmentError, export_data_urls, image_urls, resolve_reference
from crewagent.core.errors import ImportFormatError, OffloadedOutputError
from crewagent.core.jsonparse import parse_json
from crewagent.core.llm.toolnames import KnownNameDecoder, ToolNameCodec
from crewagent.core.messages import ConversationMessage, ConversationMeta, from_openai, to_openai
from crewagent.core.store import RuntimeStore
from crewagent.core.protocol import (
    DOTTED_FUNCTION_NAME,
    OPENAI_FUNCTION_NAME,
    ProtocolError,
    current_branch,
    repaired_chain,
    validate_messages,
)
from crewagent.core.subagents.export import SubagentExport as SubagentExport  # re-exported: callers build export trees from here
from crewagent.core.subagents.export import subagent_tree
from crewagent.core.subagents.tools import TOOL_NAMES
from crewagent.core.tools.builtin import builtin_tools

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


def app_tool_names() -> frozenset[str]:
    """The names of the app's own tools as the log holds them (``fs.read``, ``task.status`` ...)."""
    return frozenset([*(tool.name for tool in builtin_tools()), *TOOL_NAMES])


def check_import_chain(data: list[Any]) -> list[ProtocolError]:
    """Every protocol error of a messages[] about to be imported (dotted or wire names both pass)."""
    return validate_messages(data, name_pattern=DOTTED_FUNCTION_NAME)


def decode_tool_names(messages: Iterable[ConversationMessage], known: Iterable[str]) -> list[ConversationMessage]:
    """Imported messages with wire names of the app's tools mapped back (``fs_read`` -> ``fs.read``)."""
    decoder = KnownNameDecoder(known)
    out: list[ConversationMessage] = []
    for message in messages:
        calls = message.tool_calls or []
        if any(decoder.decode(call.function.name) != call.function.name for call in calls):
            renamed = [
                call.model_copy(update={"function": call.function.model_copy(update={"name": decoder.decode(call.function.name)})})
                for call in calls
            ]
            message = message.model_copy(update={"tool_calls": renamed})
        out.append(message)
    return out


@dataclass(frozen=True)
class OpenAIExport:
    """An OpenAI export: the messages[], what repair had to change, and outputs not put back in full.

    ``errors`` is the export's own validation (OpenAI's rules); it is empty unless the chain
    could not be made valid, which would be a bug.
    """

    messages: list[dict[str, Any]]
    changes: list[str]
    warnings: list[str]
    errors: list[ProtocolError]


def export_openai(
    messages: Iterable[ConversationMessage], full_output: FullOutput, *, tool_names: Iterable[str] = ()
) -> OpenAIExport:
    """The chain a request would carry of the whole log, with offloaded tool outputs in full.

    Repaired like a request (see :func:`~crewagent.core.protocol.repaired_chain`); tool names
    are encoded as the provider adapter encodes them, given the offered ``tool_names``.
    """
    chain = repaired_chain(list(messages))
    names = [call.function.name for m in chain.messages for call in m.tool_calls or ()]
    codec = ToolNameCodec([*names, *tool_names])
    out: list[dict[str, Any]] = []
    warnings: list[str] = []
    for message in chain.messages:
        content: Any = None
        if message.is_offloaded:
            try:
                content = full_output(message)
            except OffloadedOutputError as exc:
                warnings.append(str(exc))
        data = to_openai(message, content=content)
        if message.role == "tool" and data.get("content") is None:
            data["content"] = ""
        for call in data.get("tool_calls") or ():
            call["function"]["name"] = codec.encode(call["function"]["name"])
        if message.role == "tool" and isinstance(data.get("name"), str):
            data["name"] = codec.encode(data["name"])
        out.append(data)
    # An empty history is not an error of the chain (a request would add the system prompt).
    errors = validate_messages(out, name_pattern=OPENAI_FUNCTION_NAME) if out else []
    return OpenAIExport(out, chain.changes, warnings, errors)


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
    image_link: Callable[[str], str] | None = None,
) -> tuple[str, list[str]]:
    """A readable transcript: chat text, every tool call with its arguments, every tool result.

    With ``subagents``, each child's transcript follows its Task result as a quoted section.
    Only the current branch is written (an edit's or a regenerate's old one is not). An attached
    image is an image link, to ``image_link(reference)`` (the file) when given, else the reference.
    """
    parts = [f"# {meta.title}\n", f"_Conversation `{meta.id}` · {meta.activeType} · created {meta.createdAt}_\n"]
    body, warnings = _markdown_body(current_branch(list(messages)), full_output, subagents or {}, image_link)
    return "\n".join([*parts, *body]), warnings


def _markdown_body(
    messages: Iterable[ConversationMessage],
    full_output: FullOutput,
    subagents: Mapping[str, SubagentExport],
    image_link: Callable[[str], str] | None = None,
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
        for number, url in enumerate(image_urls(message.content), start=1):
            parts.append(f"![image {number}](<{image_link(url) if image_link is not None else url}>)\n")
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


def export_openai_with_subagents(
    messages: Iterable[ConversationMessage],
    full_output: FullOutput,
    subagents: Mapping[str, SubagentExport],
    *,
    tool_names: Iterable[str] = (),
) -> tuple[dict[str, Any], OpenAIExport]:
    """``{"messages": [...], "subagents": [...]}``: the conversation's messages[] exactly as
    :func:`export_openai` gives them, and its children, each ``{sessionId, parentSessionId,
    parentToolCallId, type, status, depth, description, model, createdAt, updatedAt, summary,
    messages: [...], subagents: [...]}`` (its messages[] in full, its own children nested).

    The second value gathers the changes, warnings and errors of every chain, a child's
    prefixed with its session id.
    """
    names = tuple(tool_names)
    top = export_openai(messages, full_output, tool_names=names)
    changes, warnings, errors = list(top.changes), list(top.warnings), list(top.errors)
    nested: list[dict[str, Any]] = []
    for child in subagents.values():
        node, report = _openai_subagent(child, full_output, names)
        nested.append(node)
        where = f"subagent {child.meta.get('sessionId')}: "
        changes.extend(where + text for text in report.changes)
        warnings.extend(report.warnings)
        errors.extend(report.errors)
    return {"messages": top.messages, "subagents": nested}, OpenAIExport(top.messages, changes, warnings, errors)


_META_KEYS = (
    "sessionId", "parentSessionId", "parentToolCallId", "type", "status", "depth", "description",
    "model", "background", "createdAt", "updatedAt", "summary",
)


def _openai_subagent(
    child: SubagentExport, full_output: FullOutput, tool_names: tuple[str, ...]
) -> tuple[dict[str, Any], OpenAIExport]:
    payload, report = export_openai_with_subagents(child.messages, full_output, child.children, tool_names=tool_names)
    node = {key: child.meta[key] for key in _META_KEYS if child.meta.get(key) is not None}
    return {**node, **payload}, report


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


# -- one conversation of a project, as `crewagent export` and the window's File > Export write it ------

#: The formats of :func:`export_conversation`.
EXPORT_FORMATS = ("openai", "markdown", "jsonl")


@dataclass(frozen=True)
class ConversationExport:
    """The text of an export and what the user should know about it.

    ``error``: an OpenAI error envelope when the chain would not be valid (a bug; nothing may be
    written); ``incomplete``: output that could not be completed (a missing offloaded file);
    ``changes``: what the export repaired in a log that is not a valid chain as it stands.
    """

    text: str
    warnings: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    incomplete: bool = False
    error: dict[str, Any] | None = None


def export_conversation(
    store: RuntimeStore, project_id: str, conversation_id: str, fmt: str, *, include_subagents: bool = False
) -> ConversationExport:
    """One conversation in ``fmt`` (openai, markdown or jsonl), read from the store."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}; expected one of {EXPORT_FORMATS}")
    meta = store.get_conversation(project_id, conversation_id)
    loaded = store.load_messages(project_id, meta.id)
    warnings: list[str] = [loaded.problem_summary()] if loaded.problems else []

    def full(message: Any) -> str:
        return store.read_full_output(project_id, message)

    subagents = None
    if include_subagents:
        subagents, damaged = subagent_tree(store, project_id, meta.id)
        warnings.extend(damaged)
    changes: list[str] = []
    if fmt == "openai":
        payload: Any
        if subagents is not None:
            payload, report = export_openai_with_subagents(loaded.messages, full, subagents, tool_names=app_tool_names())
        else:
            report = export_openai(loaded.messages, full, tool_names=app_tool_names())
            payload = report.messages
        if report.errors:  # a bug: never hand out a chain a provider would reject
            return ConversationExport("", error=report.errors[0].envelope())
        # Images go back as data URLs here only (markdown and jsonl keep the reference).
        inlined, missing = export_data_urls(report.messages, store.state_dir(project_id))
        payload = {**payload, "messages": inlined} if isinstance(payload, dict) else inlined
        text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
        more, changes = list(report.warnings) + missing, list(report.changes)
        if not report.messages:
            warnings.append(texts.EXPORT_EMPTY)
    elif fmt == "jsonl":
        text, more = export_jsonl(loaded.messages, subagents), []
    else:
        text, more = export_markdown(meta, loaded.messages, full, subagents, functools.partial(_image_file, store.state_dir(project_id)))
    return ConversationExport(text, tuple(warnings + list(more)), tuple(changes), incomplete=bool(more))


def _image_file(state_dir: Path, reference: str) -> str:
    """A stored image's file as a ``file:`` URL (the reference itself when it names none)."""
    try:
        return resolve_reference(state_dir, reference).as_uri()
    except AttachmentError:
        return reference
