"""The built-in demo provider: a deterministic scripted "model" behind the local OpenAI-compatible server.

It needs no key and no network, and the app reaches it through the same adapter and HTTP path
as a real provider. Every answer starts with ``[demo]``: it is a script, not a model.

What it does with the last message of a request:

- a user message asking to read a file (``read README.md``, ``读取 README.md``) -> a call to
  ``fs.read`` with ``{"path": "@project/<name>"}``;
- a user message asking for files (``list``, ``files``, ``列出``, ``文件``) -> a call to ``fs.list``
  with ``{"path": "@project"}``;
- tool results (the last messages are ``role=tool``) -> a text summary of those results;
- ``fail mid-stream`` (or ``中途失败``) -> streams part of an answer, then drops the connection;
- ``fail`` / ``error`` (``失败``, ``出错``) -> HTTP 500 (retried by the adapter, then an error);
- ``continue`` / ``继续`` -> resumes: the rest of a cut answer, or a note after a failed request;
- ``delegate: <task>`` (``用子代理 <task>``; add ``in the background`` / ``后台`` to not wait) -> a
  ``task`` call that hands ``<task>`` to an ``explore`` subagent;
- a subagent's request (its system prompt has a ``SUBAGENT`` block) -> lists the project, reads the
  README (or a file the task names), then reports what it found;
- a Run-mode request (a ``RUN_DIRECTIVE`` block) -> drives the workflow (core/llm/demo_run.py);
- a title request (core/llm/title.py) -> the first words of the user's message, as a title;
- anything else -> a short help text.

Tools are called by their wire names (``fs_list``) as offered in the request's ``tools``; when a
tool is not offered, the demo says so in text instead of calling it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crewagent.core.jsonparse import parse_json
from crewagent.core import texts
from crewagent.core.llm.config import DEMO_MODEL, LlmConfigError
from crewagent.core.llm.config import demo_config as demo_config  # re-exported: callers start the demo from here
from crewagent.core.llm.demo_run import is_run_request, message_text, plan_run
from crewagent.core.llm.local_server import (
    Drop,
    Hangup,
    JsonReply,
    LocalServer,
    Pause,
    RecordedRequest,
    Reply,
    SseItem,
    SseReply,
    error_body,
)
from crewagent.core.llm.title import TITLE_INSTRUCTION, clean_title
from crewagent.core.llm.toolnames import wire_name_candidates

LABEL = "[demo]"

_MID_STREAM_TEXT = (
    f"{LABEL} This answer is being cut off on purpose: the demo drops the connection halfway "
    "through so that you can see how an interrupted stream is kept. The partial text stays in the "
    "conversation with an error block, and when you say \"continue\" the demo picks up right here "
    "and finishes the sentence, exactly as a real model would resume from its own partial answer."
)
_CUT_AT = len(_MID_STREAM_TEXT) * 2 // 5

_HELP = (
    f"{LABEL} This is the built-in demo provider: a script, not a language model. It works offline "
    "and answers the same way every time. Try:\n"
    "- \"list the files\" (calls fs.list)\n"
    "- \"read README.md\" (calls fs.read)\n"
    "- \"fail\" (the request fails with HTTP 500)\n"
    "- \"fail mid-stream\" (the connection drops halfway through an answer)\n"
    "- \"continue\" after an error (resumes)\n"
    "- \"delegate: summarise the README\" (hands the job to a read-only subagent)\n"
    "Configure a real provider in Settings to talk to a model."
)

_CONTINUE = re.compile(r"\bcontinue\b|继续", re.IGNORECASE)
_MID_STREAM = re.compile(r"mid-?\s?stream|中途", re.IGNORECASE)
_FAIL = re.compile(r"\bfail\b|\berror\b|失败|出错|报错", re.IGNORECASE)
_READ = re.compile(r"(?:\bread\b|读取|读)\s*[\"'`]?([^\s\"'`]+)", re.IGNORECASE)
_NOT_A_FILE = frozenset({"me", "the", "a", "an", "my", "this", "that", "it", "all", "files", "file"})
_LIST = re.compile(r"\blist\b|\bfiles?\b|列出|文件", re.IGNORECASE)
_DELEGATE = re.compile(r"^\s*(?:please\s+)?(?:delegate|用子代理|子代理)\s*(?:in the background|后台)?\s*[:：,，]?\s*", re.IGNORECASE)
_BACKGROUND = re.compile(r"\bbackground\b|后台", re.IGNORECASE)
_SUBAGENT_MARK = "SUBAGENT\n- session:"
_FILE_NAME = re.compile(r"[\w.-]+\.(?:md|txt|py|json|toml|rst|yaml|yml|cfg|ini)\b", re.IGNORECASE)
_README = re.compile(r"readme|summar|总结|概括|概述", re.IGNORECASE)


@dataclass
class _Plan:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, wire name, arguments)
    fail_http: bool = False
    cut_after: int | None = None  # characters of text streamed before the connection drops


def _offered(body: Mapping[str, Any], original: str) -> str | None:
    names = [
        t.get("function", {}).get("name")
        for t in body.get("tools") or ()
        if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
    ]
    for candidate in (original, *wire_name_candidates(original)):
        if candidate in names:
            return candidate
    return None


def plan_answer(body: Mapping[str, Any]) -> _Plan:
    """What the demo answers to a chat completion request body."""
    messages: Sequence[Mapping[str, Any]] = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    if not messages:
        return _Plan(text=_HELP)
    last = messages[-1]
    if messages[0].get("role") == "system" and message_text(messages[0]) == TITLE_INSTRUCTION:
        return _Plan(text=_demo_title(message_text(last)))
    if any(m.get("role") == "system" and _SUBAGENT_MARK in message_text(m) for m in messages):
        return _plan_subagent(body, messages)
    if is_run_request(messages):
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return plan_run(
            messages,
            offered=lambda name: _offered(body, name) is not None,
            tool=lambda name, arguments, why: _tool_plan(body, name, arguments, turn, why),
            text=lambda said: _Plan(text=said),
        )
    if last.get("role") == "tool":
        return _Plan(text=_summarise_tool_results(messages))
    if last.get("role") != "user":
        return _Plan(text=_HELP)
    said = message_text(last)
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    if _CONTINUE.search(said):
        return _Plan(text=_resume(body, messages[:-1]))
    delegate = _DELEGATE.match(said)
    if delegate and said[delegate.end() :].strip():
        task = said[delegate.end() :].strip()
        words = task.split()
        arguments = {
            "description": " ".join(words[:6]) if len(words) > 1 else task[:40],
            "prompt": task,
            "subagent_type": "explore",
            "run_in_background": bool(_BACKGROUND.search(said[: delegate.end()] + " " + " ".join(words[:4]))),
        }
        return _tool_plan(body, "task", arguments, turn, "The user wants this delegated; I will start an explore subagent.")
    read = _READ.search(said)
    if read and read.group(1).lower() not in _NOT_A_FILE:
        name = read.group(1).rstrip(".,;:!?。，")
        path = name if name.startswith("@") else f"@project/{name.lstrip('/')}"
        return _tool_plan(body, "fs.read", {"path": path}, turn, f"The user wants to read {name}; I will call fs.read.")
    if _MID_STREAM.search(said):
        return _Plan(text=_MID_STREAM_TEXT, cut_after=_CUT_AT)
    if _FAIL.search(said):
        return _Plan(fail_http=True)
    if _LIST.search(said):
        return _tool_plan(
            body, "fs.list", {"path": "@project"}, turn, "The user wants the project's files; I will call fs.list."
        )
    return _Plan(text=_HELP)


def _demo_title(quoted: str) -> str:
    """A deterministic title: the first words of the user's message in a title request."""
    said = quoted.split("\n\nAssistant:", 1)[0].removeprefix("User:")
    return clean_title(said) or "Demo conversation"


def _plan_subagent(body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> _Plan:
    """A subagent's steps: list the project (or read the file the task names), read the README, report."""
    task = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    called = [
        (str((call.get("function") or {}).get("name", "")), str((call.get("function") or {}).get("arguments", "")))
        for m in messages
        for call in m.get("tool_calls") or ()
        if isinstance(call, Mapping)
    ]
    if messages[-1].get("role") == "user":
        named = _FILE_NAME.search(task)
        if named:
            return _tool_plan(body, "fs.read", {"path": f"@project/{named.group(0)}"}, turn, f"The task names {named.group(0)}; I will read it.")
        return _tool_plan(body, "fs.list", {"path": "@project"}, turn, "I will look at the project's files first.")
    read_before = any("read" in name for name, _ in called)
    if not read_before and _README.search(task):
        readme = _readme_in(messages)
        if readme is not None:
            return _tool_plan(body, "fs.read", {"path": f"@project/{readme}"}, turn, f"The task is about the README; I will read {readme}.")
    lines = [f"{LABEL} Subagent report on \"{task.strip()[:200]}\" (a script, not a model):"]
    names = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            if isinstance(call, Mapping):
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name", "tool")).replace("_", ".", 1)
    for m in messages:
        if m.get("role") == "tool":
            lines.append(f"- {names.get(str(m.get('tool_call_id')), 'tool')}: {_summarise_one(message_text(m))}")
    return _Plan(text="\n".join(lines))


def _readme_in(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The README's name from an earlier fs.list result, if there is one."""
    for m in messages:
        if m.get("role") != "tool":
            continue
        try:
            data = parse_json(message_text(m))
        except ValueError:
            continue
        entries = data.get("entries") if isinstance(data, Mapping) else None
        for entry in entries if isinstance(entries, list) else ():
            name = _entry_name(entry)
            if name.lower().startswith("readme") and not name.endswith("/"):
                return name
    return None


def _tool_plan(body: Mapping[str, Any], tool: str, arguments: dict[str, Any], turn: int, why: str) -> _Plan:
    wire = _offered(body, tool)
    if wire is None:
        return _Plan(text=f"{LABEL} I would call {tool} for this, but that tool is not enabled in this conversation.")
    return _Plan(reasoning=f"{LABEL} {why}", tool_calls=[(f"call_demo_{turn}_0", wire, json.dumps(arguments))])


def _resume(body: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> str:
    """The rest of the answer that was cut off (by a dropped stream or a Stop), else a note.

    The demo is deterministic: what it was answering when it was cut off is its answer to the
    messages before the cut-off one, so it plans that answer again and goes on after the part kept.
    """
    at = next((i for i in range(len(history) - 1, -1, -1) if history[i].get("role") == "assistant"), None)
    previous = history[at] if at is not None else None
    said = message_text(previous) if previous else ""
    kept = said.split("\n\nLLM_ERROR", 1)[0]  # an error part: the partial text, then its error block
    if at is not None and len(kept) > len(LABEL) + 5:
        whole = plan_answer({**body, "messages": history[:at]}).text
        if whole.startswith(kept) and len(whole) > len(kept):
            return f"{LABEL} (continuing) …{whole[len(kept):]}"
    if previous is not None and ("LLM_" in said or not said.strip()):
        return (
            f"{LABEL} Continuing after the error. The last request failed because you asked the demo "
            "to fail; nothing you saw was lost. Ask again, or try \"list the files\"."
        )
    return f"{LABEL} There is nothing to continue: the previous answer was complete."


def _summarise_tool_results(messages: Sequence[Mapping[str, Any]]) -> str:
    results: list[Mapping[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.insert(0, message)
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name", "tool"))
    lines = [f"{LABEL} Here is what the tools returned (summarised by a script, not a model):"]
    for message in results:
        tool = names.get(str(message.get("tool_call_id")), "tool").replace("_", ".", 1)
        lines.append(f"- {tool}: {_summarise_one(message_text(message))}")
    return "\n".join(lines)


def _summarise_one(content: str) -> str:
    try:
        data = parse_json(content)
    except ValueError:
        preview = content.strip().replace("\n", " ")
        return f"{preview[:200]}{'…' if len(preview) > 200 else ''}" or "(empty result)"
    if not isinstance(data, Mapping):
        return f"{json.dumps(data)[:200]}"
    if data.get("ok") is False:
        error: Mapping[str, Any] = data["error"] if isinstance(data.get("error"), Mapping) else {}
        return f"failed with {error.get('code', 'an error')}: {error.get('message', '')}".rstrip(": ")
    if isinstance(data.get("subagentSessionId"), str):
        who = f"subagent {data['subagentSessionId']} ({data.get('type', 'subagent')})"
        if data.get("status") == "running":
            return f"{who} is working in the background; a notice will follow when it is done."
        answer = str(data.get("answer") or "").strip().replace("\n", " ")
        return f"{who} answered: {answer[:300]}{'…' if len(answer) > 300 else ''}"
    for key in ("entries", "items", "files", "children", "matches", "results"):
        entries = data.get(key)
        if isinstance(entries, list):
            shown = [_entry_name(e) for e in entries[:12]]
            more = f" and {len(entries) - 12} more" if len(entries) > 12 else ""
            return f"{len(entries)} entries: {', '.join(shown)}{more}." if entries else "no entries."
    for key in ("content", "text", "preview"):
        text = data.get(key)
        if isinstance(text, str):
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            where = f" of {data['path']}" if isinstance(data.get("path"), str) else ""
            return f"{len(text.splitlines())} lines, {len(text)} characters{where}; it begins: \"{first[:120]}\"."
    keys = ", ".join(sorted(str(k) for k in data)[:10])
    return f"a result with {keys}."


def _entry_name(entry: Any) -> str:
    if isinstance(entry, Mapping):
        name = entry.get("name") or entry.get("path") or "?"
        return f"{name}/" if entry.get("type") in ("dir", "directory") and not str(name).endswith("/") else str(name)
    return str(entry)


def _pieces(text: str) -> Iterator[str]:
    """Small chunks of two words (or six characters of unspaced text such as Chinese)."""
    words = re.findall(r"\S+\s*|\s+", text)
    for i in range(0, len(words), 2):
        piece = "".join(words[i : i + 2])
        while len(piece) > 12:
            yield piece[:6]
            piece = piece[6:]
        yield piece


class DemoResponder:
    """The demo's answers; ``chunk_delay`` (seconds) paces the stream so a UI shows it streaming."""

    def __init__(self, *, chunk_delay: float = 0.0) -> None:
        self.chunk_delay = chunk_delay

    def list_models(self, request: RecordedRequest) -> Reply:
        return JsonReply(200, {"object": "list", "data": [{"id": DEMO_MODEL, "object": "model", "owned_by": "crewagent"}]})

    def chat_completion(self, request: RecordedRequest) -> Reply:
        body = request.body
        if not isinstance(body, Mapping):
            return JsonReply(400, error_body(f"{LABEL} the request body is not a JSON object"))
        plan = plan_answer(body)
        if plan.fail_http:
            return JsonReply(500, error_body(f"{LABEL} failing on purpose, as you asked.", type="server_error"))
        if plan.cut_after is not None and not body.get("stream"):
            return Hangup()  # a non-streaming answer cannot be cut halfway: drop the connection instead
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return SseReply(self._events(plan, include_usage, _prompt_tokens(body)), done=plan.cut_after is None)
        return JsonReply(200, self._completion(plan, _prompt_tokens(body)))

    def _events(self, plan: _Plan, include_usage: bool, prompt_tokens: int) -> Iterator[SseItem]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-demo",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": DEMO_MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        def paced(item: dict[str, Any]) -> Iterator[SseItem]:
            if self.chunk_delay > 0:
                yield Pause(self.chunk_delay)
            yield item

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(plan.reasoning):
            yield from paced(chunk({"reasoning_content": piece}))
        sent = 0
        for piece in _pieces(plan.text):
            if plan.cut_after is not None and sent >= plan.cut_after:
                yield Drop()
                return
            yield from paced(chunk({"content": piece}))
            sent += len(piece)
        for index, (call_id, name, arguments) in enumerate(plan.tool_calls):
            half = len(arguments) // 2
            yield from paced(
                chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]})
            )
            for part in (arguments[:half], arguments[half:]):
                yield from paced(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
        yield chunk({}, "tool_calls" if plan.tool_calls else "stop")
        if include_usage:
            completion = len(plan.text) // 4
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens + completion}
            yield {**chunk({}), "choices": [], "usage": usage}

    def _completion(self, plan: _Plan, prompt_tokens: int) -> dict[str, Any]:
        text = plan.text[: plan.cut_after] if plan.cut_after is not None else plan.text
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if plan.reasoning:
            message["reasoning_content"] = plan.reasoning
        if plan.tool_calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in plan.tool_calls
            ]
        return {
            "id": "chatcmpl-demo",
            "object": "chat.completion",
            "created": 0,
            "model": DEMO_MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if plan.tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4, "total_tokens": prompt_tokens + len(text) // 4},
        }


#: Seconds between the demo's chunks, so that a window or a terminal shows the answer streaming.
DEFAULT_CHUNK_DELAY = 0.02
#: Overrides :data:`DEFAULT_CHUNK_DELAY` (seconds, ``0``: no pacing), e.g. for scripts and tests
#: that drive the demo and only want its answers.
CHUNK_DELAY_ENV = "CREWAGENT_DEMO_CHUNK_DELAY"


def chunk_delay_from_env(env: Mapping[str, str] | None = None) -> float:
    """The pacing ``CREWAGENT_DEMO_CHUNK_DELAY`` asks for, else :data:`DEFAULT_CHUNK_DELAY`;
    LlmConfigError (one line) when the value is not a number of seconds from 0 to 10."""
    raw = (os.environ if env is None else env).get(CHUNK_DELAY_ENV, "").strip()
    if not raw:
        return DEFAULT_CHUNK_DELAY
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not 0.0 <= seconds <= 10.0:  # also refuses nan
        raise LlmConfigError(texts.DEMO_CHUNK_DELAY_INVALID.format(name=CHUNK_DELAY_ENV, value=raw[:40]))
    return seconds


def start_demo_server(*, chunk_delay: float | None = None) -> LocalServer:
    """Start the demo on a free port of 127.0.0.1; stop it with ``.stop()`` when the app quits.
    ``chunk_delay`` (seconds) defaults to :func:`chunk_delay_from_env`."""
    delay = chunk_delay_from_env() if chunk_delay is None else chunk_delay
    return LocalServer(DemoResponder(chunk_delay=delay)).start()


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    """The demo's estimate of the request's size in tokens (a character count over 4, like its
    completion count), so that the usage line shows what a real provider would: more the longer
    the conversation gets."""
    sent = {key: body[key] for key in ("messages", "tools") if key in body}
    return len(json.dumps(sent, ensure_ascii=False)) // 4
