"""The tool loop: call the model, run its tool calls, persist every step, until it answers.

Persistence goes through two callbacks fired in protocol order (seed 001):
``on_assistant_message`` (after any retry logic, so a retried call is never stored twice) and
``on_tool_message`` (results in call order, whatever order the calls finished in). Both return
the message as stored. Failures never leave the log invalid:

- an LLM failure is stored as an assistant message with ``partType=error``, the partial text
  and an ``LLM_ERROR`` block (it stays in context, so "continue" resumes from it);
- Stop aborts the stream (the partial text is stored as an interrupted message), cancels the
  running tools and answers their calls with ``TOOL_INTERRUPTED``;
- the engine's guards (max turns, the same failing call three times) end with an error part.

The loop imports no store and no Qt: the session wires the callbacks to the store, the worker
turns the events into signals.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from crewagent.core import texts
from crewagent.core.context import ContextResult
from crewagent.core.llm import Completed, LlmAdapter, LlmError, LlmRequest
from crewagent.core.llm import StreamStarted as LlmStreamStarted
from crewagent.core.llm.usage import usage_record
from crewagent.core.loop.events import (
    ContextBuilt,
    LoopEvent,
    MessagePersisted,
    ReasoningDelta,
    StreamStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    TurnFinished,
)
from crewagent.core.messages import ConversationMessage, Mode, Role, ToolCall, new_message_id, stamp_fields, stamped, utc_now_iso
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, OPENAI_FUNCTION_NAME, presend_check, presend_error_message
from crewagent.core.protocol.repair import interrupted_message
from crewagent.core.redact import redact
from crewagent.core.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

#: How often (seconds) the partial text of a streaming answer is checkpointed for crash recovery.
CHECKPOINT_INTERVAL_S = 0.5
#: The same failing call this many times in a row ends the turn (ENGINE_LOOP_DETECTED).
LOOP_DETECT_REPEATS = 3

Persist = Callable[[ConversationMessage], Awaitable[ConversationMessage]]
#: Persists several tool results in call order with one store hop, yielding each as stored (each
#: is durable on its own; after a failure the ones stored before it are yielded, then it raises).
PersistMany = Callable[[list[ConversationMessage]], AsyncGenerator[ConversationMessage, None]]
#: The tool_call ids the conversation has already issued (the whole log, not just the context).
IssuedCallIds = Callable[[], Iterable[str]]
BuildContext = Callable[[], Awaitable[tuple[ContextResult, list[ConversationMessage]]]]
Checkpoint = Callable[[dict[str, Any] | None], Awaitable[None]]


@dataclass
class LoopOptions:
    mode: Mode = "chat"
    max_turns: int = 50
    run_id: str | None = None
    agent_id: str | None = None
    workflow_id: str | None = None


class _Stop:
    """Queue sentinel: the user pressed Stop."""


_STOP = _Stop()


class _Thinking:
    """How long the model thought in one call: from its first reasoning to its first text (or its end)."""

    __slots__ = ("_since", "seconds")

    def __init__(self) -> None:
        self._since: float | None = None
        self.seconds: float | None = None

    def start(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    def stop(self) -> None:
        if self._since is not None and self.seconds is None:
            self.seconds = round(time.monotonic() - self._since, 2)


def _join_queued(queue: asyncio.Queue[Any], delta: type[TextDelta | ReasoningDelta], parts: list[str]) -> Any:
    """Move the texts of the ``delta`` events queued next into ``parts``; return the first other
    item taken (the caller handles it next), or None when the queue ran empty."""
    while not queue.empty():
        item = queue.get_nowait()
        if item is _STOP or item[0] != "llm" or type(item[1]) is not delta:
            return item
        parts.append(item[1].text)
    return None


def error_block(code: str, message: str, *, status: int | None = None, retryable: bool | None = None, title: str = "LLM_ERROR") -> str:
    """The structured error block put in an error part's content (the model reads it on "continue")."""
    lines = [title, f"- code: {code}"]
    if status is not None:
        lines.append(f"- status: {status}")
    lines.append(f"- message: {redact(message)}")
    if retryable is not None:
        lines.append(f"- retryable: {'true' if retryable else 'false'}")
    return "\n".join(lines)


class ToolLoop:
    """One user turn's model ↔ tools loop; ``run()`` yields :mod:`~crewagent.core.loop.events`.

    ``request_stop()`` (called on the loop's event-loop thread) ends the turn promptly; the
    generator itself is never cancelled by Stop, so it can persist and report what it stopped.
    """

    def __init__(
        self,
        *,
        adapter: LlmAdapter,
        registry: ToolRegistry,
        tool_context: ToolContext,
        build_context: BuildContext,
        on_assistant_message: Persist,
        on_tool_message: Persist,
        checkpoint: Checkpoint | None = None,
        options: LoopOptions | None = None,
        issued_call_ids: IssuedCallIds | None = None,
        on_tool_messages: PersistMany | None = None,
    ):
        self.adapter = adapter
        self.registry = registry
        self.tool_context = tool_context
        self.build_context = build_context
        self.on_assistant_message = on_assistant_message
        self.on_tool_message = on_tool_message
        self.checkpoint = checkpoint
        self.options = options or LoopOptions()
        self.issued_call_ids = issued_call_ids
        self.on_tool_messages = on_tool_messages
        self._queue: asyncio.Queue[Any] | None = None
        self._stop_requested = False
        #: A streaming checkpoint was written since the last clear: only then is there one to clear
        #: (the turn starts with none: recovery clears what a dead process left).
        self._checkpointed = False

    # -- control ---------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Stop the turn: the stream is aborted and running tools are cancelled."""
        self._stop_requested = True
        if self._queue is not None:
            self._queue.put_nowait(_STOP)

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> AsyncGenerator[LoopEvent, None]:
        self._queue = asyncio.Queue()
        if self._stop_requested:
            yield TurnFinished("stopped")
            return
        failing_key: tuple[str, str] | None = None
        failing_count = 0
        tools = self.registry.openai_tools(self.tool_context.policy, has_ui=self.tool_context.ask_user is not None)
        for step in range(1, self.options.max_turns + 1):
            context, appended = await self.build_context()
            for message in appended:
                yield MessagePersisted(message)
            yield ContextBuilt(context.debug)
            if not context.ok:
                assert context.error is not None
                async for event in self._finish_with_error(context.error.code, context.error.message, title="CONTEXT_ERROR"):
                    yield event
                return
            request = LlmRequest(messages=context.messages, tools=tools)
            problem = self._presend(request)
            if problem is not None:
                stored = await self.on_assistant_message(stamped(presend_error_message(problem), self._stamp_fields()))
                yield MessagePersisted(stored)
                yield TurnFinished("error", {"code": "PROTOCOL_INVALID", "category": problem.code, "message": problem.message})
                return

            completed: Completed | None = None
            # The answer is stored under the id its checkpoint carries: recovery after a crash
            # between the append and clearing the checkpoint must not store it a second time.
            message_id = new_message_id()
            thinking = _Thinking()
            async for item in self._stream(step, request, message_id, thinking):
                if isinstance(item, Completed):
                    completed = item
                else:
                    yield item
                    if isinstance(item, TurnFinished):
                        return
            assert completed is not None

            calls = self._fresh_ids([ToolCall.model_validate(call) for call in completed.tool_calls], context.messages)
            assistant = self._new(
                "assistant",
                # An answer without calls always has content ("" if the model sent none).
                completed.content or (None if calls else ""),
                id=message_id,
                **({"tool_calls": calls} if calls else {}),
                **({"reasoning_content": completed.reasoning_content} if completed.reasoning_content else {}),
                **({"usage": self._usage(completed)} if completed.usage else {}),
                **({"reasoningSeconds": thinking.seconds} if thinking.seconds is not None else {}),
            )
            stored = await self.on_assistant_message(assistant)
            await self._clear_checkpoint()
            yield MessagePersisted(stored)
            if not calls:
                yield TurnFinished("completed")
                return

            results: list[tuple[ToolCall, dict[str, Any]]] = []
            async for event in self._run_tools(stored, calls, results):
                yield event
                if isinstance(event, TurnFinished):
                    return
            for call, result in results:
                if result.get("ok") is True:
                    failing_key, failing_count = None, 0
                    continue
                key = (call.function.name, call.function.arguments)
                failing_count = failing_count + 1 if key == failing_key else 1
                failing_key = key
            if failing_count >= LOOP_DETECT_REPEATS and failing_key is not None:
                reason = texts.ENGINE_LOOP_DETECTED.format(tool=failing_key[0], count=failing_count)
                async for event in self._finish_with_error("ENGINE_LOOP_DETECTED", reason, title="ENGINE_ERROR"):
                    yield event
                return
            if self._stop_requested:
                yield TurnFinished("stopped")
                return
        reason = texts.ENGINE_MAX_TURNS.format(limit=self.options.max_turns)
        async for event in self._finish_with_error("ENGINE_MAX_TURNS_EXCEEDED", reason, title="ENGINE_ERROR"):
            yield event

    def _usage(self, completed: Completed) -> dict[str, Any]:
        """The provider's usage of this call, with cached tokens and cost (core/llm/usage.py)."""
        assert completed.usage is not None
        config = self.adapter.config
        return usage_record(completed.usage, provider=config.provider, model=config.model, reported_model=completed.model)

    def _fresh_ids(self, calls: list[ToolCall], context: Sequence[Mapping[str, Any]]) -> list[ToolCall]:
        """Rename call ids an earlier message already issued to ``<id>_<n>``.

        The adapter makes ids unique within one message; a model that numbers its calls per
        message (``call_0`` every time) would still repeat an id across messages, and a log
        with an id issued twice is invalid (``duplicate_tool_call_id``).
        """
        if not calls:
            return calls
        taken: set[str] = set(self.issued_call_ids()) if self.issued_call_ids is not None else set()
        for message in context:
            for issued in message.get("tool_calls") or ():
                if isinstance(issued, Mapping) and isinstance(issued.get("id"), str):
                    taken.add(issued["id"])
        fresh: list[ToolCall] = []
        for call in calls:
            new_id, n = call.id, 1
            while new_id in taken:
                n += 1
                new_id = f"{call.id}_{n}"
            taken.add(new_id)
            fresh.append(call if new_id == call.id else call.model_copy(update={"id": new_id}))
        return fresh

    # -- one model call --------------------------------------------------------------------

    def _presend(self, request: LlmRequest) -> Any:
        payload = self.adapter.outgoing_messages(request)
        strict = self.adapter.config.encode_tool_names
        return presend_check(payload, name_pattern=OPENAI_FUNCTION_NAME if strict else DOTTED_FUNCTION_NAME)

    async def _pump(self, request: LlmRequest, queue: asyncio.Queue[Any]) -> None:
        first_delta = True
        try:
            async with aclosing(self.adapter.stream(request)) as stream:
                async for event in stream:
                    queue.put_nowait(("llm", event))
                    if first_delta and isinstance(event, TextDelta | ReasoningDelta):
                        # Let the consumer show the first token now: without this the pump parses
                        # everything already buffered (a whole burst) before it ever yields.
                        first_delta = False
                        await asyncio.sleep(0)
        except LlmError as error:
            queue.put_nowait(("llm_error", error))
            return
        queue.put_nowait(("llm_done", None))

    async def _stream(self, step: int, request: LlmRequest, message_id: str, thinking: _Thinking) -> AsyncIterator[LoopEvent | Completed]:
        """Stream one call. Yields loop events, then the ``Completed`` (or a ``TurnFinished``);
        ``thinking`` times the model's reasoning."""
        assert self._queue is not None
        queue = self._queue
        pump = asyncio.create_task(self._pump(request, queue), name=f"llm-stream-{step}")
        text: list[str] = []
        reasoning: list[str] = []
        last_checkpoint = time.monotonic()
        dirty = False
        completed: Completed | None = None
        held: Any = None  # an item taken from the queue while joining deltas, handled next
        try:
            while True:
                if held is None:
                    item = await queue.get()
                else:
                    item, held = held, None
                if item is _STOP:
                    pump.cancel()
                    await asyncio.gather(pump, return_exceptions=True)
                    thinking.stop()
                    async for event in self._persist_interrupted_stream(message_id, "".join(text), "".join(reasoning), thinking.seconds):
                        yield event
                    yield TurnFinished("stopped")
                    return
                kind, payload = item
                if kind == "llm_done":
                    thinking.stop()
                    break
                if kind == "llm_error":
                    async for event in self._persist_llm_error(message_id, payload, "".join(text), "".join(reasoning)):
                        yield event
                    return
                # Deltas the pump has already queued behind this one go on as one event with their
                # joined text: the same text, relayed through fewer generator steps (and UI
                # signals). The first delta is never held back (the pump yields right after it).
                if isinstance(payload, TextDelta):
                    thinking.stop()
                    start = len(text)
                    text.append(payload.text)
                    held = _join_queued(queue, TextDelta, text)
                    dirty = True
                    yield payload if len(text) == start + 1 else TextDelta("".join(text[start:]))
                elif isinstance(payload, ReasoningDelta):
                    thinking.start()
                    start = len(reasoning)
                    reasoning.append(payload.text)
                    held = _join_queued(queue, ReasoningDelta, reasoning)
                    dirty = True
                    yield payload if len(reasoning) == start + 1 else ReasoningDelta("".join(reasoning[start:]))
                elif isinstance(payload, LlmStreamStarted):
                    yield StreamStarted(step, payload.model)
                elif isinstance(payload, Completed):
                    completed = payload
                if dirty and self.checkpoint is not None and time.monotonic() - last_checkpoint >= CHECKPOINT_INTERVAL_S:
                    self._checkpointed = True  # before the write: a failed one is still cleared
                    await self.checkpoint(self._checkpoint_data(message_id, text, reasoning))
                    last_checkpoint, dirty = time.monotonic(), False
        finally:
            if not pump.done():
                pump.cancel()
                await asyncio.gather(pump, return_exceptions=True)
        if completed is None:  # the adapter ended without Completed: a bug there, reported as a bad response
            error = LlmError("LLM_BAD_RESPONSE", texts.LLM_NO_FINAL)
            async for event in self._persist_llm_error(message_id, error, "".join(text), "".join(reasoning)):
                yield event
            return
        yield completed

    def _checkpoint_data(self, message_id: str, text: list[str], reasoning: list[str]) -> dict[str, Any]:
        return {
            "messageId": message_id,
            "savedAt": utc_now_iso(),
            "content": "".join(text),
            "reasoning": "".join(reasoning),
            "stamp": self._stamp_fields(),
        }

    async def _clear_checkpoint(self) -> None:
        """Remove the streaming checkpoint, if this call wrote one (no store hop otherwise)."""
        if self.checkpoint is not None and self._checkpointed:
            await self.checkpoint(None)
            self._checkpointed = False

    async def _persist_interrupted_stream(
        self, message_id: str, text: str, reasoning: str, reasoning_seconds: float | None = None
    ) -> AsyncIterator[LoopEvent]:
        if text or reasoning:
            message = self._new(
                "assistant",
                text or "",
                id=message_id,
                partType="content",
                interrupted=True,
                error={"code": "LLM_INTERRUPTED", "message": texts.STREAM_STOPPED},
                **({"reasoning_content": reasoning} if reasoning else {}),
                **({"reasoningSeconds": reasoning_seconds} if reasoning_seconds is not None else {}),
            )
            yield MessagePersisted(await self.on_assistant_message(message))
        await self._clear_checkpoint()

    async def _persist_llm_error(self, message_id: str, error: LlmError, text: str, reasoning: str) -> AsyncIterator[LoopEvent]:
        partial = error.partial_text or text
        block = error_block(error.code, error.message, status=error.status, retryable=error.retryable)
        content = f"{partial}\n\n{block}" if partial else block
        message = self._new(
            "assistant",
            content,
            id=message_id,
            partType="error",
            error={**error.to_block(), "partialText": partial},
            **({"reasoning_content": error.partial_reasoning or reasoning} if (error.partial_reasoning or reasoning) else {}),
        )
        yield MessagePersisted(await self.on_assistant_message(message))
        await self._clear_checkpoint()
        yield TurnFinished("error", error.to_block())

    async def _finish_with_error(self, code: str, message: str, *, title: str) -> AsyncIterator[LoopEvent]:
        message = redact(message)
        part = self._new("assistant", error_block(code, message, title=title), partType="error", error={"code": code, "message": message})
        yield MessagePersisted(await self.on_assistant_message(part))
        yield TurnFinished("error", {"code": code, "message": message})

    # -- tools -----------------------------------------------------------------------------

    async def _run_one(self, index: int, call: ToolCall, queue: asyncio.Queue[Any]) -> None:
        started = time.perf_counter()

        def output(stream: str, text: str) -> None:
            queue.put_nowait(("tool_output", ToolCallOutput(call.id, call.function.name, stream, text)))

        result = await self.registry.execute(
            call.function.name, call.function.arguments, self.tool_context, call_id=call.id, on_output=output
        )
        queue.put_nowait(("tool_done", (index, result, (time.perf_counter() - started) * 1000)))

    async def _run_tools(
        self, assistant: ConversationMessage, calls: Sequence[ToolCall], results: list[tuple[ToolCall, dict[str, Any]]]
    ) -> AsyncIterator[LoopEvent]:
        """Run the calls concurrently; persist their results in call order."""
        assert self._queue is not None
        queue = self._queue
        for call in calls:
            yield ToolCallStarted(call.id, call.function.name, call.function.arguments)
        tasks = [
            asyncio.create_task(self._run_one(index, call, queue), name=f"tool-{call.function.name}")
            for index, call in enumerate(calls)
        ]
        done: dict[int, tuple[dict[str, Any], float]] = {}
        persisted = 0
        try:
            while persisted < len(calls):
                item = await queue.get()
                # Everything already queued is taken before anything is persisted: results that
                # finished together are then written with one store hop, still in call order.
                while True:
                    if item is _STOP:
                        async for event in self._stop_tools(assistant, calls, tasks, done, persisted):
                            yield event
                        return
                    kind, payload = item
                    if kind == "tool_output":
                        yield payload
                    elif kind == "tool_done":  # anything else is a late stream event from an aborted call
                        index, result, duration = payload
                        done[index] = (result, duration)
                        call = calls[index]
                        yield ToolCallFinished(call.id, call.function.name, result.get("ok") is True, result, duration)
                    if queue.empty():
                        break
                    item = queue.get_nowait()
                ready = range(persisted, next(i for i in range(persisted, len(calls) + 1) if i not in done))
                messages = [self._tool_message(calls[i], *done[i]) for i in ready]
                async with aclosing(self._persist_tool_messages(messages)) as persisting:
                    async for stored in persisting:
                        results.append((calls[persisted], done[persisted][0]))
                        persisted += 1
                        yield MessagePersisted(stored)
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _stop_tools(
        self,
        assistant: ConversationMessage,
        calls: Sequence[ToolCall],
        tasks: list[asyncio.Task[None]],
        done: dict[int, tuple[dict[str, Any], float]],
        persisted: int,
    ) -> AsyncIterator[LoopEvent]:
        """Stop in the tool phase: cancel the tools, answer every call not yet persisted, end the turn."""
        assert self._queue is not None
        queue = self._queue
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # Results that arrived are kept; every other call is answered as interrupted.
        while not queue.empty():
            late = queue.get_nowait()
            if late is not _STOP and late[0] == "tool_done":
                done[late[1][0]] = (late[1][1], late[1][2])
        messages = [
            self._tool_message(calls[index], *done[index])
            if index in done
            else stamped(interrupted_message(calls[index], assistant), self._stamp_fields())
            for index in range(persisted, len(calls))
        ]
        async with aclosing(self._persist_tool_messages(messages)) as persisting:
            async for stored in persisting:
                yield MessagePersisted(stored)
        yield TurnFinished("stopped")

    async def _persist_tool_messages(self, messages: list[ConversationMessage]) -> AsyncGenerator[ConversationMessage, None]:
        """Persist tool results in order, each as stored: with one hop when the owner takes a batch."""
        if self.on_tool_messages is not None and len(messages) > 1:
            async with aclosing(self.on_tool_messages(messages)) as persisting:
                async for stored in persisting:
                    yield stored
            return
        for message in messages:
            yield await self.on_tool_message(message)

    def _tool_message(self, call: ToolCall, result: dict[str, Any], duration_ms: float) -> ConversationMessage:
        return self._new(
            "tool",
            json.dumps(result, ensure_ascii=False),
            tool_call_id=call.id,
            toolName=call.function.name,
            duration=round(duration_ms, 1),
            partType="tool_result" if result.get("ok") is True else "error",
        )

    # -- stamping --------------------------------------------------------------------------

    def _stamp_fields(self) -> dict[str, Any]:
        """Mode, run, agent and workflow of every message the loop writes."""
        options = self.options
        return stamp_fields(options.mode, run_id=options.run_id, agent_id=options.agent_id, workflow_id=options.workflow_id)

    def _new(self, role: Role, content: str | None, **fields: Any) -> ConversationMessage:
        """A message the loop writes, stamped (built once)."""
        return ConversationMessage.new(role, content, **self._stamp_fields(), **fields)
