"""LlmAdapter: one chat completion with tools over the openai SDK, as a stream of typed events.

Usage::

    async with LlmAdapter(config) as llm:
        async with contextlib.aclosing(llm.stream(LlmRequest(messages, tools))) as events:
            async for event in events:
                ...  # StreamStarted, TextDelta, ReasoningDelta, ToolCallDelta, Completed

Behaviour (see events.py for the event order, errors.py for the error codes):

- Streaming by default; when the provider rejects streaming (a 400/422/501 whose message
  mentions "stream") the same request is sent once more without it, and the adapter stays
  non-streaming from then on. ``ProviderConfig.stream=False`` starts that way. The
  non-streaming response is replayed as the same events.
- Retries: 429, 5xx, 408, timeouts and connection errors are retried up to
  ``config.max_retries`` times (a timeout only once: each one already cost the user
  ``config.timeout`` seconds), waiting per :class:`~.retry.RetryPolicy` (Retry-After honoured),
  but ONLY while nothing has been yielded to the caller beyond ``StreamStarted`` -- streamed
  text is never duplicated. After a delta, a failure raises ``LlmError`` with the partial output.
  400, 401, 403, 404 and malformed responses are never retried. A 429 whose code says the quota
  is exhausted (``insufficient_quota``) is not retried either.
- A stream that ends before a ``finish_reason`` arrived is a network failure
  (``LLM_HTTP_ERROR``, ``status=None``), not a complete answer.
- Cancellation (``CancelledError``, or closing the generator) closes the HTTP response at once.
- Tool names are encoded for the wire per :mod:`.toolnames` and decoded in the events; for a
  provider that needs them, tool-call ids are mapped per :mod:`.callids` and back.
- The request goes through the SDK's generic ``client.post`` (its documented route for custom
  requests) with ``cast_to=object``: auth, headers, timeouts, the SSE parser and the error
  mapping are the SDK's, but the body is sent as built and every chunk stays a plain dict. The
  typed ``chat.completions.create`` costs ~15 ms per turn in TypedDict transforms of the history
  and pydantic construction of every chunk (see docs/benchmarks.md, "LLM adapter").
- ``reasoning_content`` (or ``reasoning``) deltas are kept; earlier assistant messages carry
  theirs back to the provider only when ``config.send_reasoning`` is set.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from contextlib import aclosing
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from crewagent.core import texts
from crewagent.core.llm.accumulator import BadChunk, StreamAccumulator
from crewagent.core.llm.callids import Alnum9Ids
from crewagent.core.llm.config import NO_KEY, ProviderConfig
from crewagent.core.llm.errors import LlmError
from crewagent.core.llm.events import Completed, LlmEvent, LlmRequest, RetryScheduled, StreamStarted
from crewagent.core.llm.retry import RetryPolicy, parse_retry_after
from crewagent.core.llm.toolnames import ToolNameCodec

Sleep = Callable[[float], Awaitable[Any]]
#: The module that imports the model client library (slow): an async caller may import it off its loop first.
CLIENT_MODULE = "crewagent.core.llm._client"

if TYPE_CHECKING:
    import openai
else:

    class _OpenAIOnFirstUse:
        """The ``openai`` module, imported when first used: importing it takes ~0.4 s (its API
        types), and the desktop app has its window up before any model is called."""

        def __getattr__(self, name: str) -> Any:
            return getattr(importlib.import_module("openai"), name)

    openai = _OpenAIOnFirstUse()

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_STREAM_REJECTED_STATUS = frozenset({400, 422, 501})
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


class _StreamingRejected(Exception):
    """The provider said it does not do streaming."""


class LlmAdapter:
    """Talks to one provider. Owns an AsyncOpenAI client: close it with :meth:`aclose` (or ``async with``)."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        http_client: Any | None = None,
    ) -> None:
        self.config = config
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._streaming = config.stream
        #: The wire messages last made for a pre-send check, with their codec and id mapping: the
        #: stream of that same request sends them as made instead of encoding the history again.
        self._prepared: tuple[LlmRequest, ToolNameCodec, Alnum9Ids | None, list[dict[str, Any]]] | None = None
        from crewagent.core.llm._client import make_client, request_headers  # imports openai (see _OpenAIOnFirstUse)

        self._request_headers = request_headers(config.auth)

        self._client = make_client(
            base_url=config.base_url,
            api_key=config.api_key or NO_KEY,
            timeout=config.timeout,
            headers=config.extra_headers,
            http_client=http_client,
            auth=config.auth,
            query=config.query,
        )

    @property
    def streaming(self) -> bool:
        """False once the provider rejected streaming (or the config turned it off)."""
        return self._streaming

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> LlmAdapter:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # the call

    def outgoing_messages(self, request: LlmRequest) -> list[dict[str, Any]]:
        """The messages exactly as the next call sends them (tool names encoded): for the pre-send check.

        The next :meth:`stream` of this same request object sends this very list: read it, do not change it.
        """
        codec = _codec_for(request, enabled=self.config.encode_tool_names)
        ids = self._call_ids(request)
        messages = self._outgoing(request, codec, ids)
        self._prepared = (request, codec, ids, messages)
        return messages

    async def complete(self, request: LlmRequest) -> Completed:
        """Run a call to the end and return its ``Completed`` event (for callers that do not stream)."""
        async with aclosing(self.stream(request)) as events:
            async for event in events:
                if isinstance(event, Completed):
                    return event
        raise RuntimeError("the stream ended without a Completed event")  # a bug in stream()

    async def stream(self, request: LlmRequest) -> AsyncGenerator[LlmEvent, None]:
        """Yield the events of one assistant turn; raise :class:`LlmError` when it fails."""
        prepared, self._prepared = self._prepared, None
        wire: list[dict[str, Any]] | None = None
        if prepared is not None and prepared[0] is request:
            _, codec, ids, wire = prepared
        else:
            codec = _codec_for(request, enabled=self.config.encode_tool_names)
            ids = self._call_ids(request)
        started = False
        attempt = 0
        timeouts = 0
        while True:
            attempt += 1
            acc = StreamAccumulator(codec.decode, decode_id=ids.decode if ids is not None else None)
            try:
                if self._streaming:
                    source = self._stream_attempt(request, codec, acc, ids, wire)
                else:
                    source = self._plain_attempt(request, codec, acc, ids, wire)
                async with aclosing(source):
                    async for event in source:
                        if isinstance(event, StreamStarted):
                            if started:
                                continue
                            started = True
                        yield event
                return
            except _StreamingRejected:
                self._streaming = False
                attempt -= 1  # the provider's refusal is not a failed attempt
                continue
            except LlmError as error:
                if error.code == "LLM_TIMEOUT":
                    timeouts += 1
                retry = error.retryable and not acc.has_output and attempt <= self.config.max_retries
                if retry and timeouts <= 1:
                    delay = self._retry.delay(attempt, error.retry_after)
                    yield RetryScheduled(attempt, delay, error.code, error.message, error.status)
                    await self._sleep(delay)
                    continue
                raise error.with_partial(acc.text, acc.reasoning, attempt) from error.__cause__

    async def _stream_attempt(
        self, request: LlmRequest, codec: ToolNameCodec, acc: StreamAccumulator, ids: Alnum9Ids | None, wire: list[dict[str, Any]] | None
    ) -> AsyncGenerator[LlmEvent, None]:
        body, options = self._request(request, codec, ids, streaming=True, wire=wire)
        try:
            stream = await self._client.post(
                "/chat/completions",
                body=body,
                options=cast(Any, options),
                cast_to=object,  # chunks stay plain dicts (see the module docstring)
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
        except openai.APIStatusError as exc:
            if _rejects_streaming(exc):
                raise _StreamingRejected from exc
            raise self._classify(exc) from exc
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._classify(exc) from exc
        try:
            yield StreamStarted(body["model"], streaming=True)
            try:
                async for chunk in stream:
                    for event in acc.add_chunk(chunk):
                        yield event
            except (openai.OpenAIError, json.JSONDecodeError, BadChunk) as exc:
                raise self._classify(exc) from exc
        finally:
            # Runs on cancellation and on an abandoned generator too: never leave the socket open.
            await stream.close()
        if acc.finish_reason is None:
            raise LlmError(
                "LLM_HTTP_ERROR",
                texts.LLM_CONNECTION_ENDED,
                retryable=True,
            )
        yield acc.completed()

    async def _plain_attempt(
        self, request: LlmRequest, codec: ToolNameCodec, acc: StreamAccumulator, ids: Alnum9Ids | None, wire: list[dict[str, Any]] | None
    ) -> AsyncGenerator[LlmEvent, None]:
        body, options = self._request(request, codec, ids, streaming=False, wire=wire)
        try:
            response = await self._client.post("/chat/completions", body=body, options=cast(Any, options), cast_to=object)
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._classify(exc) from exc
        if not isinstance(response, dict):
            raise LlmError("LLM_BAD_RESPONSE", texts.LLM_NOT_OBJECT)
        choices = response.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            raise LlmError("LLM_BAD_RESPONSE", texts.LLM_NO_MESSAGE)
        message = choice["message"]
        yield StreamStarted(body["model"], streaming=False)
        events: list[LlmEvent] = []
        try:
            acc.add_message_parts(message, events, whole=True)
        except BadChunk as exc:
            raise self._classify(exc) from exc
        for event in events:
            yield event
        reason = choice.get("finish_reason")
        acc.finish_reason = reason if isinstance(reason, str) and reason else "stop"
        model = response.get("model")
        acc.model = model if isinstance(model, str) else None
        if isinstance(response.get("usage"), dict):
            acc.set_usage(response["usage"])
        yield acc.completed()

    # request building

    def _call_ids(self, request: LlmRequest) -> Alnum9Ids | None:
        """The tool-call id mapping of a provider that needs one (callids.py), else None."""
        if self.config.tool_call_ids != "alnum9":
            return None
        return Alnum9Ids.for_messages(request.messages)

    def _outgoing(self, request: LlmRequest, codec: ToolNameCodec, ids: Alnum9Ids | None) -> list[dict[str, Any]]:
        messages = [_outgoing_message(m, codec, self.config.send_reasoning) for m in request.messages]
        return [ids.apply(m) for m in messages] if ids is not None else messages

    def _request(
        self, request: LlmRequest, codec: ToolNameCodec, ids: Alnum9Ids | None, *, streaming: bool, wire: list[dict[str, Any]] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The JSON body and the SDK request options (``wire``: the messages already encoded)."""
        config = self.config
        body: dict[str, Any] = {
            "model": request.model or config.model,
            "messages": wire if wire is not None else self._outgoing(request, codec, ids),
        }
        if request.tools:
            body["tools"] = [_encode_tool(tool, codec) for tool in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = _encode_tool_choice(request.tool_choice, codec)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            # OpenAI and Azure OpenAI refuse `max_tokens` for their reasoning (o-series) models; both
            # accept `max_completion_tokens` for every model (Azure since api-version 2024-10-21).
            key = "max_completion_tokens" if config.provider in ("openai", "azure") else "max_tokens"
            body[key] = request.max_tokens
        body["stream"] = streaming
        if streaming and config.include_usage:
            body["stream_options"] = {"include_usage": True}
        if request.extra_body:
            body.update(request.extra_body)
        options: dict[str, Any] = {}
        if self._request_headers:
            options["headers"] = dict(self._request_headers)
        if request.timeout is not None:
            options["timeout"] = request.timeout
        return body, options

    # errors

    def _classify(self, exc: BaseException) -> LlmError:
        error = classify_error(exc, base_url=self.config.base_url)
        key = self.config.api_key
        if key and key in error.message:  # never let a key reach a log or the conversation
            error.message = error.message.replace(key, "***")
            error.args = (error.message,)
        return error


def classify_error(exc: BaseException, *, base_url: str = "") -> LlmError:
    """The LlmError for an SDK (or decoding) exception."""
    if isinstance(exc, openai.APITimeoutError):
        return LlmError("LLM_TIMEOUT", texts.LLM_TIMEOUT, retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause, where = exc.__cause__, base_url or texts.LLM_THE_PROVIDER
        if cause:
            message = texts.LLM_NETWORK_DETAIL.format(where=where, detail=f"{type(cause).__name__}: {cause}")
        else:
            message = texts.LLM_NETWORK.format(where=where)
        return LlmError("LLM_HTTP_ERROR", message, retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _provider_message(exc)
        retry_after = parse_retry_after(dict(exc.response.headers))
        if status in (401, 403):
            what = texts.LLM_KEY_REJECTED if status == 401 else texts.LLM_ACCESS_DENIED
            return LlmError("LLM_AUTH_FAILED", what.format(status=status, detail=detail), status=status)
        if status == 429:
            quota = _provider_code(exc) in _QUOTA_CODES
            return LlmError(
                "LLM_RATE_LIMITED",
                texts.LLM_RATE_LIMITED.format(detail=detail),
                status=status,
                retryable=not quota,
                retry_after=retry_after,
            )
        if status == 408:
            return LlmError("LLM_TIMEOUT", texts.LLM_HTTP_TIMEOUT.format(detail=detail), status=status, retryable=True)
        retryable = status >= 500 or status in _RETRYABLE_STATUS
        return LlmError(
            "LLM_HTTP_ERROR", f"HTTP {status}: {detail}", status=status, retryable=retryable, retry_after=retry_after
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return LlmError("LLM_BAD_RESPONSE", texts.LLM_BAD_SHAPE.format(detail=exc))
    if isinstance(exc, json.JSONDecodeError):
        return LlmError("LLM_BAD_RESPONSE", texts.LLM_BAD_JSON.format(detail=exc.msg, pos=exc.pos))
    if isinstance(exc, BadChunk):
        return LlmError("LLM_BAD_RESPONSE", texts.LLM_BAD_CHUNK.format(detail=exc))
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        return LlmError("LLM_HTTP_ERROR", texts.LLM_REPORTED.format(detail=exc.message), retryable=True)
    raise TypeError(f"not an LLM failure: {exc!r}") from exc


def _provider_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    text = exc.response.text if exc.response is not None else ""
    return (text or exc.message)[:500]


def _provider_code(exc: openai.APIStatusError) -> str | None:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            code = inner.get("code") or inner.get("type")
            return str(code) if code else None
    return None


def _rejects_streaming(exc: openai.APIStatusError) -> bool:
    if exc.status_code not in _STREAM_REJECTED_STATUS:
        return False
    return "stream" in f"{_provider_message(exc)} {exc.message}".lower()


# wire encoding


def _codec_for(request: LlmRequest, *, enabled: bool) -> ToolNameCodec:
    names: list[str] = []
    for tool in request.tools:
        name = (tool.get("function") or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    for message in request.messages:
        for call in message.get("tool_calls") or ():
            name = (call.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
        if message.get("role") == "tool" and isinstance(message.get("name"), str):
            names.append(message["name"])
    if isinstance(request.tool_choice, Mapping):
        name = (request.tool_choice.get("function") or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return ToolNameCodec(names, enabled=enabled)


def _outgoing_message(message: Mapping[str, Any], codec: ToolNameCodec, send_reasoning: bool) -> dict[str, Any]:
    out = dict(message)
    if not send_reasoning:
        out.pop("reasoning_content", None)
    calls = out.get("tool_calls")
    if calls:
        out["tool_calls"] = [_encode_call(call, codec) for call in calls]
    if out.get("role") == "tool" and isinstance(out.get("name"), str):
        out["name"] = codec.encode(out["name"])
    return out


def _encode_call(call: Mapping[str, Any], codec: ToolNameCodec) -> dict[str, Any]:
    out = dict(call)
    function = dict(out.get("function") or {})
    if isinstance(function.get("name"), str):
        function["name"] = codec.encode(function["name"])
    out["function"] = function
    return out


def _encode_tool(tool: Mapping[str, Any], codec: ToolNameCodec) -> dict[str, Any]:
    out = dict(tool)
    function = dict(out.get("function") or {})
    if isinstance(function.get("name"), str):
        function["name"] = codec.encode(function["name"])
    out["function"] = function
    return out


def _encode_tool_choice(choice: str | Mapping[str, Any], codec: ToolNameCodec) -> Any:
    if isinstance(choice, str):
        return choice
    return _encode_tool(choice, codec)
