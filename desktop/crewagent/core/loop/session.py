"""A conversation's turns: recovery on open, the user message, the tool loop wired to the store.

The session is where the pieces meet: the store (the log is the canonical history), the
context builder (a fresh system prefix for the active mode on every call), the provider
adapter and the tools. It is used the same way by the desktop worker and by ``crewagent chat``,
so a turn is persisted identically in both.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from crewagent.core import texts
from crewagent.core.context import ContextBudget, ContextError, ContextResult, RunContext, TokenCounter, default_counter
from crewagent.core.context.builder import CONTEXT_SPILL_FAILED
from crewagent.core.errors import CrewAgentError
from crewagent.core.context.summary import build_with_summary
from crewagent.core.llm import LlmAdapter, LlmRequest
from crewagent.core.loop.events import LoopEvent, MessagePersisted, TurnFinished, TurnStarted
from crewagent.core.loop.interrupted import recovered_stream_message
from crewagent.core.loop.toolloop import LoopOptions, ToolLoop
from crewagent.core.attachments import count_images, inline_images
from crewagent.core.messages import ConversationMessage, Mode, stamp_fields
from crewagent.core.protocol import repair_conversation
from crewagent.core.store import LoadResult, ProjectInfo, RuntimeStore
from crewagent.core.subagents.recovery import deliver_notices, recover_children
from crewagent.core.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

#: The summarizer gets a short timeout and no tools (issue: "no tools, short timeout").
SUMMARIZER_TIMEOUT_S = 30.0


class RunHooks(Protocol):
    """Run mode's part of a turn (core.runs.engine.RunDriver): the run blocks and the run's events."""

    def context(self) -> tuple[str | None, RunContext]:
        """The persona and the run context of the next model call."""
        ...

    def drive(self, events: AsyncIterator[LoopEvent]) -> AsyncIterator[LoopEvent]:
        """The loop's events with the run's progress and its end of turn."""
        ...


@dataclass
class TurnSettings:
    """What one turn needs to know besides the conversation itself."""

    mode: Mode = "chat"
    budget: ContextBudget = field(default_factory=ContextBudget)
    max_turns: int = 50
    merge_system: bool = False
    persona: str | None = None
    extra_system: tuple[str, ...] = ()
    run_context: RunContext | None = None
    agent_id: str | None = None
    workflow_id: str | None = None
    run_id: str | None = None
    #: Run mode: the run this turn drives (its context is rebuilt before every model call).
    run: RunHooks | None = None
    #: Earlier turns' tool results in full, or as previews (``llm.includeToolResultsInContext``).
    tool_results: bool = True
    #: The model takes images: stored image references go as data URLs; False: as text notes.
    vision: bool = True


def recover_and_load(store: RuntimeStore, project: ProjectInfo, conversation_id: str) -> LoadResult:
    """Make the log whole after a crash, a kill or a Stop, and load it (blocking; one read of the log).

    A streaming checkpoint left by a dead process becomes an interrupted assistant message, then
    every tool call without a result gets a synthetic ``TOOL_INTERRUPTED`` one. Recovers nothing
    while another process runs a turn here (it holds the turn lock): the log is only loaded.
    """
    pid, cid = project.id, conversation_id
    if store.is_turn_running(pid, cid):
        return store.load_messages(pid, cid)
    with store.turn_lock(pid, cid, turn=False):
        return _recover_locked(store, pid, cid)[1]


def _recover_locked(store: RuntimeStore, pid: str, cid: str) -> tuple[list[ConversationMessage], LoadResult]:
    """Recovery with the turn lock held: what it appended, and the conversation as it is afterwards."""
    appended: list[ConversationMessage] = []
    checkpoint = store.read_stream_checkpoint(pid, cid)
    loaded = store.load_messages(pid, cid)
    messages = loaded.messages
    if checkpoint is not None:
        recovered = recovered_stream_message(checkpoint)
        if recovered is not None and not any(m.id == recovered.id for m in messages):
            stored = store.append_message(pid, cid, recovered)
            appended.append(stored)
            messages.append(stored)
        store.clear_stream_checkpoint(pid, cid)
    # Subagents (issue 6): children a dead process left running are marked interrupted and their
    # sidechains repaired first; the parent's unanswered Task calls then get the normal
    # TOOL_INTERRUPTED result, with the link fields.
    links = recover_children(store, pid, cid)
    repair = repair_conversation(messages, lambda m: store.append_message(pid, cid, links.annotate(m)))
    messages.extend(repair.appended)
    appended.extend(repair.appended)
    # Every call is answered now: notices of finished background children can go in.
    notices = deliver_notices(store, pid, cid)
    messages.extend(notices)
    appended.extend(notices)
    return appended, LoadResult(messages, loaded.problems, loaded.migrated_from_legacy)


def _open_turn(
    store: RuntimeStore, pid: str, cid: str, user: Callable[[], ConversationMessage] | None
) -> tuple[list[ConversationMessage], LoadResult, ConversationMessage | None]:
    """A turn's first store work, in one hop: recovery, then the user message (``user`` makes it)."""
    appended, loaded = _recover_locked(store, pid, cid)
    return appended, loaded, store.append_message(pid, cid, user()) if user is not None else None


def _append_and_flush(store: RuntimeStore, pid: str, cid: str, message: ConversationMessage) -> tuple[ConversationMessage, bool]:
    """The turn's last message, then the store's flush (one hop for both); whether it flushed."""
    stored = store.append_message(pid, cid, message)
    try:
        store.flush()
    except Exception:  # noqa: BLE001 - the end of the turn flushes again and raises it there, as it always did
        return stored, False
    return stored, True


def _append_each(
    store: RuntimeStore, pid: str, cid: str, batch: list[ConversationMessage]
) -> tuple[list[ConversationMessage], Exception | None]:
    """Append the messages one by one, as the loop would (each durable when its append returns);
    stops at the first failure and returns it with what was stored before it."""
    stored: list[ConversationMessage] = []
    for message in batch:
        try:
            stored.append(store.append_message(pid, cid, message))
        except Exception as exc:  # noqa: BLE001 - raised on the loop's side, after the stored ones
            return stored, exc
    return stored, None


class ConversationSession:
    """Runs turns of one conversation. Blocking store calls go through ``asyncio.to_thread``."""

    def __init__(
        self,
        store: RuntimeStore,
        project: ProjectInfo,
        conversation_id: str,
        *,
        adapter: LlmAdapter,
        registry: ToolRegistry,
        tool_context: ToolContext,
        counter: TokenCounter | None = None,
    ):
        self.store = store
        self.project = project
        self.conversation_id = conversation_id
        self.adapter = adapter
        self.registry = registry
        self.tool_context = tool_context
        self.counter = counter
        self._loop: ToolLoop | None = None
        self._stop_requested = False
        #: The store was flushed with the turn's last write (no flush hop at the end of the turn).
        self._flushed = False
        #: Attached images as data URLs, by reference: read once per session, not once per model call.
        self._images_read: dict[str, str] = {}
        #: The tool definitions last counted and their tokens (the model calls of a turn send the same).
        self._tools_counted: tuple[list[dict[str, Any]], int] | None = None

    # -- recovery ---------------------------------------------------------------------------

    def recover(self) -> list[ConversationMessage]:
        """Make the log whole after a crash, a kill or a Stop (synchronous; call off the GUI thread).

        A streaming checkpoint left by a dead process becomes an interrupted assistant message,
        then every tool call without a result gets a synthetic ``TOOL_INTERRUPTED`` one. Does
        nothing while another process runs a turn here (it holds the turn lock).
        """
        return self.recover_and_load()[0]

    def recover_and_load(self) -> tuple[list[ConversationMessage], LoadResult]:
        """:meth:`recover`, and the conversation as it is afterwards (one read of the log, not two)."""
        pid, cid = self.project.id, self.conversation_id
        if self.store.is_turn_running(pid, cid):
            return [], self.store.load_messages(pid, cid)
        with self.store.turn_lock(pid, cid, turn=False):
            return _recover_locked(self.store, pid, cid)

    # -- a turn -----------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Stop the running turn (call on the event loop's thread)."""
        self._stop_requested = True
        if self._loop is not None:
            self._loop.request_stop()

    async def send(
        self, text: str | list[dict[str, Any]] | None, settings: TurnSettings, *, replaces: str | None = None
    ) -> AsyncGenerator[LoopEvent, None]:
        """Run one turn: persist ``text`` as the user message (None: continue without one), then loop.

        ``text`` may be list content (a text part and image references, core/attachments.py).

        ``replaces``: the user message starts a new branch in place of that message (an Edit or a
        Regenerate, protocol/branches.py); written with it, under the same lock, in one line.
        """
        pid, cid = self.project.id, self.conversation_id
        self._stop_requested = False
        self._flushed = False
        ended = False
        # The lock raises ConversationBusy before anything is written. One generator holds it and
        # runs the turn: every event of the turn passes through here, so no second layer relays it.
        with self.store.turn_lock(pid, cid):
            try:
                yield TurnStarted(cid, settings.mode)
                stamp = self._stamp(settings)

                def user() -> ConversationMessage:
                    # Made in the hop, after recovery: its time stamp follows what recovery wrote.
                    return ConversationMessage.new("user", text, **stamp, **({"replaces": replaces} if replaces else {}))

                # Recovery and the user message share one hop to the store's thread.
                appended, loaded, stored_user = await asyncio.to_thread(
                    _open_turn, self.store, pid, cid, user if text is not None else None
                )
                for message in appended:
                    yield MessagePersisted(message)
                # The log as recovery left it, kept in memory for the whole turn: every message the
                # turn writes is added to it, so the log is read once per turn, not once per call.
                messages = loaded.messages
                if stored_user is not None:
                    messages.append(stored_user)
                    yield MessagePersisted(stored_user)
                self._loop = ToolLoop(
                    adapter=self.adapter,
                    registry=self.registry,
                    tool_context=self.tool_context,
                    build_context=lambda: self._build(messages, settings),
                    on_assistant_message=lambda m: self._append_answer(m, messages),
                    on_tool_message=lambda m: self._append_tracked(self._link_subagent(m), messages),
                    on_tool_messages=lambda batch: self._append_all_tracked([self._link_subagent(m) for m in batch], messages),
                    checkpoint=self._checkpoint,
                    issued_call_ids=lambda: (call.id for m in messages for call in m.tool_calls or ()),
                    options=LoopOptions(
                        mode=settings.mode,
                        max_turns=settings.max_turns,
                        run_id=settings.run_id,
                        agent_id=settings.agent_id,
                        workflow_id=settings.workflow_id,
                    ),
                )
                if self._stop_requested:
                    self._loop.request_stop()
                events: AsyncIterator[LoopEvent] = self._loop.run()
                if settings.run is not None and settings.mode == "run":
                    events = settings.run.drive(events)
                async for event in events:
                    if isinstance(event, TurnFinished):
                        ended = True
                    yield event
            finally:
                self._loop = None
                scope = self.tool_context.subagents
                if ended and scope is not None:
                    # Subagents: background children that finished during the turn are announced
                    # now, while the turn lock is still held and no tool call is open.
                    await scope.turn_ended()
                # The store's index is flushed once the turn wrote its last message: in that
                # message's hop when it was the answer and nothing can have written since.
                if not self._flushed or scope is not None or settings.run is not None:
                    await asyncio.to_thread(self.store.flush)

    def _link_subagent(self, message: ConversationMessage) -> ConversationMessage:
        """A Task result gets its child's app-only link fields (subagentSessionId ...)."""
        scope = self.tool_context.subagents
        return scope.annotate(message) if scope is not None else message

    async def _append(self, message: ConversationMessage) -> ConversationMessage:
        self._flushed = False
        return await asyncio.to_thread(self.store.append_message, self.project.id, self.conversation_id, message)

    async def _append_answer(self, message: ConversationMessage, messages: list[ConversationMessage]) -> ConversationMessage:
        """An assistant message. One without tool calls ends the turn (an answer, an error part, a
        stopped stream): the store's flush, due at the end of the turn, shares its hop."""
        if message.tool_calls:
            return await self._append_tracked(message, messages)
        self._flushed = False
        stored, self._flushed = await asyncio.to_thread(_append_and_flush, self.store, self.project.id, self.conversation_id, message)
        messages.append(stored)
        return stored

    async def _append_tracked(self, message: ConversationMessage, messages: list[ConversationMessage]) -> ConversationMessage:
        stored = await self._append(message)
        messages.append(stored)
        return stored

    async def _append_all_tracked(
        self, batch: list[ConversationMessage], messages: list[ConversationMessage]
    ) -> AsyncGenerator[ConversationMessage, None]:
        """Append several messages in order with one hop (each its own durable append), yielding
        each as stored; when one fails, the ones before it are yielded, then its error raised."""
        self._flushed = False
        stored, error = await asyncio.to_thread(_append_each, self.store, self.project.id, self.conversation_id, batch)
        for message in stored:
            messages.append(message)
            yield message
        if error is not None:
            raise error

    async def _checkpoint(self, data: dict[str, Any] | None) -> None:
        pid, cid = self.project.id, self.conversation_id
        if data is None:
            await asyncio.to_thread(self.store.clear_stream_checkpoint, pid, cid)
        else:
            await asyncio.to_thread(self.store.save_stream_checkpoint, pid, cid, data)

    async def _build(
        self, messages: list[ConversationMessage], settings: TurnSettings
    ) -> tuple[ContextResult, list[ConversationMessage]]:
        appended: list[ConversationMessage] = []

        async def append_summary(message: ConversationMessage) -> ConversationMessage:
            stored = await self._append(message)
            appended.append(stored)
            return stored

        persona, run_context = settings.persona, settings.run_context
        if settings.run is not None and settings.mode == "run":
            persona, run_context = settings.run.context()
        result = await build_with_summary(
            list(messages),
            append=append_summary,
            summarizer=self._summarize,
            mode=settings.mode,
            budget=replace(settings.budget, tools_tokens=self._tools_tokens()),
            persona=persona if settings.mode != "chat" else None,
            extra_system=settings.extra_system,
            merge_system=settings.merge_system,
            run_context=run_context if settings.mode == "run" else None,
            counter=self.counter,
            conversation_id=self.conversation_id,
            tool_results=settings.tool_results,
        )
        messages.extend(appended)
        if result.ok and result.spills:
            result = await self._write_spills(result)
        if result.ok and any(count_images(m.get("content")) for m in result.messages):
            # Reading stored images blocks: only a request that has some makes the hop.
            result = await asyncio.to_thread(self._inline_images, result, settings.vision)
        return result, appended

    def _inline_images(self, result: ContextResult, vision: bool) -> ContextResult:
        """The request with stored images as data URLs, read at the last moment (blocking)."""
        inlined = inline_images(result.messages, self.store.state_dir(self.project.id), vision=vision, read=self._images_read)
        if inlined.messages is result.messages:
            return result
        if inlined.notes:
            result.debug["imageNotes"] = list(inlined.notes)
        return replace(result, messages=inlined.messages)

    def _tools_tokens(self) -> int:
        """Tokens of the tool definitions the loop sends with every request (they share the window)."""
        context = self.tool_context
        tools = self.registry.openai_tools(context.policy, has_ui=context.ask_user is not None)
        if not tools:
            return 0
        known = self._tools_counted
        if known is not None and known[0] == tools:  # the same definitions as the last call: no new dump
            return known[1]
        tokens = (self.counter or default_counter()).count(json.dumps(tools, ensure_ascii=False))
        self._tools_counted = (tools, tokens)
        return tokens

    async def _write_spills(self, result: ContextResult) -> ContextResult:
        """Put on disk the full texts the compacted request names, before it is sent."""
        spills = [(spill.alias, spill.text) for spill in result.spills]
        try:
            await asyncio.to_thread(self.store.write_spills, self.project.id, spills)
        except (CrewAgentError, OSError) as exc:
            error = ContextError(
                CONTEXT_SPILL_FAILED,
                texts.CONTEXT_SPILL_FAILED.format(detail=exc),
            )
            result.debug["error"] = error.as_dict()
            return replace(result, messages=[], error=error)
        return result

    async def _summarize(self, prompt: list[dict[str, Any]]) -> str:
        completed = await self.adapter.complete(LlmRequest(messages=prompt, tools=(), timeout=SUMMARIZER_TIMEOUT_S))
        return completed.content or ""

    @staticmethod
    def _stamp(settings: TurnSettings) -> dict[str, Any]:
        return stamp_fields(settings.mode, run_id=settings.run_id, agent_id=settings.agent_id, workflow_id=settings.workflow_id)
