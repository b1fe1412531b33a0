"""A scripted OpenAI-compatible server on 127.0.0.1: the test seam for everything that calls a model.

A script is a list of steps, one per request the code under test is expected to make, answered
in order over real HTTP/SSE (built on ``crewagent.core.llm.local_server``), so that the real
``openai`` client and its stream parser are exercised. Like openai-agents' scripted test model:
steps left unused fail the test (:meth:`ScriptedServer.assert_all_used`, called by the
``scripted_llm`` fixture at teardown), and a request beyond the script gets a non-retryable
HTTP 400 naming the problem *and* fails the test at teardown, even if the code swallowed it.

Scripts speak the wire: tool names are what the provider sees (``fs_read``), not ``fs.read``.

    server.script(
        tool_calls(call("call_1", "fs_read", '{"pa', 'th": "a.txt"}')),
        text("The file ", "says hi."),
    )

Several conversations at once (a parent and its subagents) get separate scripts:
``server.script_for(marker, *steps)`` answers the requests whose system messages contain
``marker`` (e.g. ``"description: child-A"``) from their own list, in their own order; every
other request takes the main script. Each list must be used up.

The app names a conversation after its first exchange with one more request (a title request,
core/llm/title.py). A test that scripts titles with ``server.script_titles(*steps)`` gets them
answered from that list; otherwise a title request is answered with HTTP 404 (the app keeps the
first message's title) and is no failure, so that tests of other things need not script it.
Title requests are not in :attr:`ScriptedServer.bodies` (see ``title_bodies``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from crewagent.core.llm.config import ProviderConfig
from crewagent.core.llm.title import TITLE_INSTRUCTION
from crewagent.core.llm.local_server import (
    Drop,
    Hangup,
    JsonReply,
    LocalServer,
    Pause,
    Raw,
    RecordedRequest,
    Reply,
    SseItem,
    SseReply,
    error_body,
)

MODEL = "scripted-model"
API_KEY = "sk-test-scripted"

Endpoint = Literal["chat", "models"]


@dataclass(frozen=True)
class Step:
    """One expected request and its reply; ``reply`` may be a function of the request."""

    label: str
    reply: Reply | Callable[[RecordedRequest], Reply]
    endpoint: Endpoint = "chat"


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call the model makes; ``argument_parts`` are sent as separate chunks."""

    id: str | None
    name: str | None
    argument_parts: tuple[str, ...]
    index: int | None = None


def call(id: str | None, name: str | None, *argument_parts: str, index: int | None = None) -> ScriptedCall:
    return ScriptedCall(id, name, argument_parts, index)


# chunk builders


def chunk(delta: dict[str, Any], finish_reason: str | None = None, *, model: str = MODEL) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def usage_chunk(prompt: int = 11, completion: int = 7) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def sse_line(item: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(item).encode() + b"\n\n"


def _text_chunks(parts: Iterable[str]) -> list[SseItem]:
    return [chunk({"content": part}) for part in parts]


def _reasoning_chunks(parts: Iterable[str]) -> list[SseItem]:
    return [chunk({"reasoning_content": part}) for part in parts]


def _tool_call_chunks(calls: Sequence[ScriptedCall]) -> list[SseItem]:
    """The first delta of each call carries id and name; the arguments follow piece by piece,
    interleaved across calls (as parallel calls arrive from real providers)."""
    items: list[SseItem] = []
    indexes = [c.index if c.index is not None else i for i, c in enumerate(calls)]
    for idx, c in zip(indexes, calls):
        head: dict[str, Any] = {"index": idx, "type": "function", "function": {"arguments": ""}}
        if c.id is not None:
            head["id"] = c.id
        if c.name is not None:
            head["function"]["name"] = c.name
        items.append(chunk({"tool_calls": [head]}))
    longest = max((len(c.argument_parts) for c in calls), default=0)
    for n in range(longest):
        for idx, c in zip(indexes, calls):
            if n < len(c.argument_parts):
                items.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": c.argument_parts[n]}}]}))
    return items


# steps


def text(
    *parts: str,
    reasoning: Sequence[str] = (),
    finish_reason: str = "stop",
    usage: bool = True,
    done: bool = True,
    label: str = "text",
) -> Step:
    """Streamed text (optionally preceded by ``reasoning_content`` deltas)."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""})]
    items += _reasoning_chunks(reasoning) + _text_chunks(parts)
    items.append(chunk({}, finish_reason))
    if usage:
        items.append(usage_chunk())
    return Step(label, SseReply(items, done=done))


def tool_calls(*calls: ScriptedCall, text_parts: Sequence[str] = (), reasoning: Sequence[str] = (), label: str = "tool_calls") -> Step:
    """Parallel tool calls, arguments split across chunks, optionally after some text."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": None})]
    items += _reasoning_chunks(reasoning) + _text_chunks(text_parts) + _tool_call_chunks(calls)
    items.append(chunk({}, "tool_calls"))
    return Step(label, SseReply(items))


def whole_tool_calls(*calls: tuple[str, str], ids: Sequence[str | None] = (), index: bool = False, one_chunk: bool = False, label: str = "whole tool calls") -> Step:
    """Ollama's shape: each call complete (name and all its arguments) in one chunk, with no
    ``index`` unless ``index`` and no ``id`` unless ``ids`` gives one; ``one_chunk`` puts all the
    calls in a single chunk. ``calls`` are (wire name, arguments)."""
    parts: list[dict[str, Any]] = []
    for n, (name, arguments) in enumerate(calls):
        part: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
        if n < len(ids) and ids[n] is not None:
            part["id"] = ids[n]
        if index:
            part["index"] = n
        parts.append(part)
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""})]
    items += [chunk({"tool_calls": parts})] if one_chunk else [chunk({"tool_calls": [part]}) for part in parts]
    items += [chunk({}, "tool_calls"), usage_chunk()]
    return Step(label, SseReply(items))


def raw_stream(*items: SseItem, done: bool = True, label: str = "raw stream") -> Step:
    """Any sequence of SSE items (chunks, Raw bytes, Pause, Drop)."""
    return Step(label, SseReply(list(items), done=done))


def no_final_delimiter(*parts: str, label: str = "no final delimiter") -> Step:
    """Text whose last event (with finish_reason) has no trailing blank line, and no [DONE]."""
    last = chunk({"content": parts[-1]}, "stop")
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""}), *_text_chunks(parts[:-1])]
    items.append(Raw(b"data: " + json.dumps(last).encode()))
    return Step(label, SseReply(items, done=False))


def http_error(status: int, message: str = "scripted failure", *, code: str | None = None, headers: dict[str, str] | None = None, label: str | None = None) -> Step:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return Step(label or f"HTTP {status}", JsonReply(status, error_body(message, type=kind, code=code), headers or {}))


def unauthorized(label: str = "401") -> Step:
    return http_error(401, "Incorrect API key provided: sk-te***ed.", code="invalid_api_key", label=label)


def rate_limited(retry_after: str | None = None, *, retry_after_ms: str | None = None, code: str | None = "rate_limit_exceeded") -> Step:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return http_error(429, "Rate limit reached, slow down.", code=code, headers=headers, label=f"429 retry-after={retry_after}")


def server_error(status: int = 500) -> Step:
    return http_error(status, "The server had an error while processing your request.")


def stall(seconds: float, *before: str) -> Step:
    """Some text, then silence for ``seconds`` (longer than the client's timeout)."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""}), *_text_chunks(before), Pause(seconds)]
    items += [chunk({"content": " (too late)"}), chunk({}, "stop")]
    return Step(f"stall {seconds}s", SseReply(items))


def drop(*before: str, reasoning: Sequence[str] = ()) -> Step:
    """Some text, then the connection is cut mid-stream."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""})]
    items += _reasoning_chunks(reasoning) + _text_chunks(before) + [Drop()]
    return Step("dropped mid-stream", SseReply(items, done=False))


def hangup() -> Step:
    """The connection closes before any response (a connection error)."""
    return Step("hang-up", Hangup())


def malformed(*before: str, raw: bytes = b'data: {"choices": [{"delta": {"content": "x"\n\n') -> Step:
    """Some text, then an SSE event whose JSON is broken."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""}), *_text_chunks(before), Raw(raw)]
    items.append(chunk({}, "stop"))
    return Step("malformed JSON", SseReply(items))


def slow_text(*parts: str, interval: float = 0.05) -> Step:
    """Text with a pause before every chunk (for cancellation tests)."""
    items: list[SseItem] = [chunk({"role": "assistant", "content": ""})]
    for part in parts:
        items += [Pause(interval), chunk({"content": part})]
    items.append(chunk({}, "stop"))
    return Step("slow text", SseReply(items))


def held_text(gate: threading.Event, first: str, *rest: str) -> Step:
    """``first``, then nothing until ``gate`` is set, then ``rest``: a stream that lasts exactly as
    long as the test needs it to (instead of a long :func:`slow_text` that repaints at every chunk)."""

    def events() -> Iterator[SseItem]:
        yield chunk({"role": "assistant", "content": ""})
        yield chunk({"content": first})
        while not gate.is_set():
            yield Pause(0.02)  # a Pause ends early when the client goes away or the server stops
        yield from _text_chunks(rest)
        yield chunk({}, "stop")

    return Step("held text", lambda _request: SseReply(events()))


def completion(
    content: str | None = None,
    *,
    calls: Sequence[tuple[str, str, str]] = (),
    reasoning: str | None = None,
    finish_reason: str | None = None,
    label: str = "non-streaming completion",
) -> Step:
    """A non-streaming JSON chat completion; ``calls`` are (id, wire name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if calls else "stop")}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    return Step(label, JsonReply(200, body))


def models(*ids: str, metadata: Mapping[str, Mapping[str, Any]] | None = None) -> Step:
    """The model list; ``metadata`` adds fields to entries by id (``{"m": {"context_length": 8192}}``)."""
    data = [{"id": i, "object": "model", "created": 1, "owned_by": "scripted", **(metadata or {}).get(i, {})} for i in ids]
    return Step("model list", JsonReply(200, {"object": "list", "data": data}), endpoint="models")


def models_error(status: int, message: str = "scripted failure") -> Step:
    return Step(f"model list HTTP {status}", http_error(status, message).reply, endpoint="models")


# the server


@dataclass
class _Failure:
    request: int
    problem: str


class ScriptedServer:
    """Answers each request with the next step of its script; see the module docstring."""

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self._lock = threading.Lock()
        self._steps: list[Step] = list(steps)
        self._next = 0
        #: marker → [steps, next index]: scripts of requests routed by their system prompt.
        self._routes: dict[str, list[Any]] = {}
        self._failures: list[_Failure] = []
        self.used: list[tuple[int, str]] = []  # (request number, step label)
        self._server = LocalServer(self)

    # script

    def script(self, *steps: Step) -> ScriptedServer:
        with self._lock:
            self._steps.extend(steps)
        return self

    def script_for(self, marker: str, *steps: Step) -> ScriptedServer:
        """Steps for the chat requests whose system messages contain ``marker`` (a separate script)."""
        with self._lock:
            self._routes.setdefault(marker, [[], 0])[0].extend(steps)
        return self

    def script_titles(self, *steps: Step) -> ScriptedServer:
        """Steps for the app's title requests (see the module docstring)."""
        return self.script_for(TITLE_INSTRUCTION, *steps)

    @property
    def remaining(self) -> list[str]:
        with self._lock:
            left = [step.label for step in self._steps[self._next :]]
            for marker, (steps, index) in self._routes.items():
                left += [f"{marker}: {step.label}" for step in steps[index:]]
            return left

    def bodies_for(self, marker: str) -> list[Any]:
        """The chat request bodies routed to ``marker``'s script, in order."""
        return [body for body in self.bodies if _route_of(body, [marker]) == marker]

    # lifecycle

    def start(self) -> ScriptedServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        return list(self._server.requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat completion requests, in order (title requests aside)."""
        chat = [r.body for r in self._server.requests if r.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")]
        return [body for body in chat if _route_of(body, [TITLE_INSTRUCTION]) is None]

    @property
    def title_bodies(self) -> list[Any]:
        """The JSON bodies of the title requests, in order."""
        chat = [r.body for r in self._server.requests if r.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")]
        return [body for body in chat if _route_of(body, [TITLE_INSTRUCTION]) is not None]

    @property
    def local_server(self) -> LocalServer:
        return self._server

    def config(self, **overrides: Any) -> ProviderConfig:
        """A ProviderConfig pointing at this server (short timeout, test key)."""
        values: dict[str, Any] = {
            "provider": "openai-compatible",
            "base_url": self.base_url,
            "api_key": API_KEY,
            "model": MODEL,
            "timeout": 5.0,
        }
        values.update(overrides)
        return ProviderConfig(**values)

    def assert_all_used(self) -> None:
        problems = [f"request #{f.request}: {f.problem}" for f in self._failures]
        problems += [f"responder error: {e!r}" for e in self._server.errors]
        if self.remaining:
            problems.append(f"{len(self.remaining)} scripted step(s) never requested: {self.remaining}")
        if problems:
            raise AssertionError("scripted LLM server: " + "; ".join(problems))

    # Responder

    def chat_completion(self, request: RecordedRequest) -> Reply:
        return self._answer(request, "chat")

    def list_models(self, request: RecordedRequest) -> Reply:
        return self._answer(request, "models")

    def _answer(self, request: RecordedRequest, endpoint: Endpoint) -> Reply:
        with self._lock:
            marker = _route_of(request.body, list(self._routes)) if endpoint == "chat" else None
            if marker is None and endpoint == "chat" and _route_of(request.body, [TITLE_INSTRUCTION]) is not None:
                self.used.append((request.number, "unscripted title request"))
                return JsonReply(404, error_body("SCRIPTED SERVER: no title scripted", code="model_not_found"))
            if marker is not None:
                steps, index = self._routes[marker]
                if index >= len(steps):
                    problem = f"unexpected request for {marker!r} beyond its script ({len(steps)} steps)"
                    self._failures.append(_Failure(request.number, problem))
                    return JsonReply(400, error_body(f"SCRIPTED SERVER: {problem}", code="script_exhausted"))
                self._routes[marker][1] = index + 1
                self.used.append((request.number, f"{marker}: {steps[index].label}"))
                step = steps[index]
                return step.reply(request) if callable(step.reply) else step.reply
            if self._next >= len(self._steps):
                problem = f"unexpected {endpoint} request beyond the script ({len(self._steps)} steps)"
                self._failures.append(_Failure(request.number, problem))
                return JsonReply(400, error_body(f"SCRIPTED SERVER: {problem}", code="script_exhausted"))
            step = self._steps[self._next]
            if step.endpoint != endpoint:
                problem = f"expected a {step.endpoint} request for step {step.label!r}, got a {endpoint} request"
                self._failures.append(_Failure(request.number, problem))
                return JsonReply(400, error_body(f"SCRIPTED SERVER: {problem}", code="script_mismatch"))
            self._next += 1
            self.used.append((request.number, step.label))
        return step.reply(request) if callable(step.reply) else step.reply


def _route_of(body: Any, markers: Sequence[str]) -> str | None:
    """The first marker found in the system messages of a chat request body."""
    if not markers or not isinstance(body, dict):
        return None
    system = "\n".join(
        str(m.get("content")) for m in body.get("messages") or () if isinstance(m, dict) and m.get("role") == "system"
    )
    return next((marker for marker in markers if marker in system), None)


__all__ = [
    "API_KEY",
    "MODEL",
    "ScriptedCall",
    "ScriptedServer",
    "Step",
    "call",
    "chunk",
    "completion",
    "drop",
    "hangup",
    "http_error",
    "malformed",
    "models",
    "models_error",
    "no_final_delimiter",
    "rate_limited",
    "raw_stream",
    "server_error",
    "slow_text",
    "sse_line",
    "stall",
    "text",
    "tool_calls",
    "unauthorized",
    "usage_chunk",
]
