"""The TurnWorker: the UI's requests about conversations as calls to core's TurnHost, its items as signals.

The host (:mod:`crewagent.core.turn_host`) and all it keeps live on an asyncio loop in a thread of its own
(:class:`AsyncLoopThread`); every request becomes a task there, whose failure is reported as ``error``.
The TurnWorker keeps no mutable state: its loop thread is made once, in ``__init__``.

As the Worker's child it shares the Worker's QThread: its slots run there and hand the request to the loop.
That hop is kept (one thread for every request the UI queues to the worker side); it costs ~0.06 ms at the
median and ~0.2-3 ms at p95 on this shared 2-core machine (benchmarks/bench_turn_hop.py), before a request
that then reads the disk or the network.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Slot

from crewagent.core import tuning
from crewagent.core.errors import CrewAgentError
from crewagent.core.loop import ContextBuilt, MessagePersisted, ReasoningDelta, RunProgress, StreamStarted, TextDelta, ToolCallFinished, ToolCallStarted
from crewagent.core.loop import ToolCallOutput
from crewagent.core.settings import SettingsStore
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents import SubagentActivity, SubagentEvent, SubagentNotice, SubagentStatusChanged
from crewagent.core.turn_host import FIRST_PAGE, CommandHandled, ConversationChanged, HostItem, MenuShown, ProviderChanged, ProviderFactory
from crewagent.core.turn_host import RunsListed, StreamEnded, TurnBegan, TurnEnded, TurnFailed, TurnHost, TurnProgress
from crewagent.worker import turn_events as to
from crewagent.worker.asyncloop import AsyncLoopThread
from crewagent.worker.mcp_ops import McpLog
from crewagent.worker.prompts import PromptBroker
from crewagent.worker.threads import on_own_thread
from crewagent.worker.turn_signals import TurnSignals
from crewagent.worker.turn_values import ContextUsage, SubagentInfo, TimelineMessage, ToolOutputChunk, TurnError, TurnRequest, frozen_json
from crewagent.worker.values import ConversationRuns, ConversationSummary

__all__ = ["FIRST_PAGE", "SHUTDOWN_TIMEOUT_S", "ProviderFactory", "TurnWorker"]

log = logging.getLogger(__name__)

#: Seconds a shutdown waits for stopped turns to persist what they stopped.
SHUTDOWN_TIMEOUT_S = 5.0

_V = TypeVar("_V")


class TurnWorker(TurnSignals):
    """Runs turns and answers conversation requests; the UI talks to it only through signals.

    Requests (slots): ``open_conversation(project_id, cid)`` (recovered first; a long one's newest page first),
    ``send(project_id, cid, text, mode)``, ``continue_turn(project_id, cid, mode)`` (go on after an error or a Stop),
    ``retry(project_id, cid, mode)`` (the last user message again), ``edit_message(project_id, cid, message_id,
    text, mode)`` and ``regenerate(project_id, cid, mode)`` (a new branch, core/message_actions.py), ``stop(cid)``, ``stop_all()``,
    ``set_mode(project_id, cid, mode)``, ``set_agent(project_id, cid, agent_id)``, ``load_full_output(project_id, cid,
    message_id)``, ``load_tool_images(project_id, cid, key, paths)``, ``read_mcp_log(server_id)``, ``answer_approval(request_id, decision)`` (allow_once, allow_conversation, allow_always or deny),
    ``answer_ask_user(request_id, payload)`` (None: dismissed), ``describe_provider()``, ``open_subagent(project_id,
    cid, session_id)``, ``cancel_subagent(session_id)``; Run mode: ``load_runs(project_id, cid)``,
    ``start_run(project_id, cid, package_id, workflow_id)``, ``resume_run(project_id, cid, run_id)``.
    Its reports are the signals of :class:`TurnSignals`.
    """

    def __init__(
        self,
        store: Callable[[], RuntimeStore],
        parent: QObject | None = None,
        *,
        provider_factory: ProviderFactory | None = None,
        settings_store: Callable[[], SettingsStore] = SettingsStore,
    ):
        super().__init__(parent)
        self.setObjectName("crewagent-turns")
        self._store = store
        #: Turns begun per conversation (counted on the loop's thread): what was read before one began is stale.
        self._turns_begun: collections.Counter[str] = collections.Counter()
        self._runs_in_order = asyncio.Lock()  # FIFO: the runs listings go out in the order they were asked for
        self._async = AsyncLoopThread("crewagent-turns")
        self._prompts = PromptBroker(
            lambda: self._async.loop,
            on_approval=self.approval_requested.emit,
            on_ask_user=self.ask_user_requested.emit,
            on_withdrawn=self.prompt_withdrawn.emit,
        )
        self._host: TurnHost[TimelineMessage] = TurnHost(
            store,
            TimelineMessage.from_message,
            approver=self._prompts,
            ask_user=self._prompts.ask_user_for,
            on_subagent=self._on_subagent_event,
            provider_factory=provider_factory,
            settings_store=settings_store,
        )
        self._host.mcp.watch(self.mcp_state_changed.emit)  # the live status of Settings → MCP

    def add_project(self, project: ProjectInfo) -> None:
        """Remember an opened project (the Worker calls this when it opens one)."""
        self._async.call(functools.partial(self._host.add_project, project))

    @property
    def running(self) -> frozenset[str]:
        """Ids of the conversations with a running turn (a snapshot; for tests and diagnostics)."""
        return self._host.running

    # -- requests -------------------------------------------------------------------------------

    def _start(self, request: TurnRequest, conversation_id: str, work: Callable[[], Awaitable[None]]) -> None:
        async def run() -> None:
            try:
                await work()
            except CrewAgentError as exc:
                self.error.emit(TurnError(request, conversation_id, str(exc)))

        def report(exc: BaseException) -> None:
            self.error.emit(TurnError(request, conversation_id, f"Internal error in {request}: {exc!r}. Please report it."))

        if not self._async.start(run, request.value, report):
            log.info("%s ignored: the turn worker is shut down", request)

    def _relay(
        self, request: TurnRequest, conversation_id: str, items: Callable[[], AsyncGenerator[HostItem, None]], then: Callable[[], None] | None = None
    ) -> None:
        async def work() -> None:
            async with aclosing(items()) as stream:
                async for item in stream:
                    self._emit(request, item)
            if then is not None:
                then()

        self._start(request, conversation_id, work)

    def _deliver(self, request: TurnRequest, conversation_id: str, call: Callable[[], Awaitable[_V]], emit: Callable[[_V], None]) -> None:
        async def work() -> None:
            emit(await call())

        self._start(request, conversation_id, work)

    def _answer(self, request: TurnRequest, conversation_id: str, call: Callable[[], Awaitable[HostItem | None]]) -> None:
        self._deliver(request, conversation_id, call, functools.partial(self._emit, request))

    @Slot(str, str)
    @on_own_thread
    def open_conversation(self, project_id: str, conversation_id: str) -> None:
        async def work() -> None:
            before = self._turns_begun[conversation_id]
            usage: Mapping[str, Any] | None = None
            async with aclosing(self._host.open(project_id, conversation_id)) as pages:
                async for opened in pages:
                    self.conversation_loaded.emit(to.loaded(project_id, conversation_id, opened))
                    usage = opened.usage
            # Loading reconciled the index with the log (a kill can leave its count behind, and
            # recovery may have added the interrupted answer): the Works row shows what the log holds.
            # Both reports are read off this thread while a turn may start here (the user sends as
            # soon as the conversation shows): a turn begun since reports its own, newer ones.
            begun = self._turns_begun[conversation_id]
            meta = await asyncio.to_thread(self._store().get_conversation, project_id, conversation_id)
            if self._turns_begun[conversation_id] == begun:
                self.conversation_counted.emit(project_id, ConversationSummary.from_meta(meta))
            # The context meter, measured by the open on the same load; a turn begun since reports its own.
            if usage is not None and self._turns_begun[conversation_id] == before:
                self.context_usage.emit(conversation_id, ContextUsage.from_debug(usage))
            await asyncio.to_thread(tuning.warm_up_once)
            await asyncio.to_thread(tuning.release_free_memory)  # the previous conversation's pages

        self._start(TurnRequest.OPEN_CONVERSATION, conversation_id, work)

    @Slot(str, str, str, str)
    @on_own_thread
    def send(self, project_id: str, conversation_id: str, text: str, mode: str) -> None:
        title = functools.partial(self._title, project_id, conversation_id)
        self._relay(TurnRequest.SEND, conversation_id, lambda: self._host.send(project_id, conversation_id, text, mode), title)

    @Slot(str, str, str, str, object)
    @on_own_thread
    def send_images(self, project_id: str, conversation_id: str, text: str, mode: str, images: object) -> None:
        """``send`` with images attached in the composer (a tuple of encoded image bytes), stored by the core."""
        attached = tuple(image for image in images if isinstance(image, bytes)) if isinstance(images, (tuple, list)) else ()
        title = functools.partial(self._title, project_id, conversation_id)
        self._relay(TurnRequest.SEND, conversation_id, lambda: self._host.send(project_id, conversation_id, text, mode, attached), title)

    def _title(self, project_id: str, conversation_id: str) -> None:
        """Name the conversation after its first exchange, as a task of its own: the turn is over
        and never waits for it; a failure keeps the first message's title and is only logged."""

        async def work() -> None:
            source = ""
            try:
                changed = await self._host.title(project_id, conversation_id)
                source = changed.meta.titleSource or ""
                if source == "generated":
                    self._emit(TurnRequest.TITLE, changed)
            except CrewAgentError as exc:
                log.info("no title generated for %s: %s", conversation_id, exc)
            finally:
                self.title_finished.emit(conversation_id, source)

        self._start(TurnRequest.TITLE, conversation_id, work)

    @Slot(str, str, str)
    @on_own_thread
    def continue_turn(self, project_id: str, conversation_id: str, mode: str) -> None:
        self._relay(TurnRequest.CONTINUE, conversation_id, lambda: self._host.send(project_id, conversation_id, "continue", mode))

    @Slot(str, str, str)
    @on_own_thread
    def retry(self, project_id: str, conversation_id: str, mode: str) -> None:
        self._relay(TurnRequest.RETRY, conversation_id, lambda: self._host.retry(project_id, conversation_id, mode))

    @Slot(str, str, str, str, str)
    @on_own_thread
    def edit_message(self, project_id: str, conversation_id: str, message_id: str, text: str, mode: str) -> None:
        host = self._host
        self._relay(TurnRequest.EDIT, conversation_id, lambda: host.edit(project_id, conversation_id, message_id, text, mode))

    @Slot(str, str, str)
    @on_own_thread
    def regenerate(self, project_id: str, conversation_id: str, mode: str) -> None:
        self._relay(TurnRequest.REGENERATE, conversation_id, lambda: self._host.regenerate(project_id, conversation_id, mode))

    @Slot(str)
    @on_own_thread
    def stop(self, conversation_id: str) -> None:
        self._async.call(functools.partial(self._host.stop, conversation_id))

    @Slot()
    @on_own_thread
    def stop_all(self) -> None:
        self._async.call(self._host.stop_all)

    @Slot(str, str, str)
    @on_own_thread
    def set_mode(self, project_id: str, conversation_id: str, mode: str) -> None:
        self._answer(TurnRequest.SET_MODE, conversation_id, lambda: self._host.set_mode(project_id, conversation_id, mode))

    @Slot(str, str, str)
    @on_own_thread
    def set_agent(self, project_id: str, conversation_id: str, agent_id: str) -> None:
        self._answer(TurnRequest.SET_AGENT, conversation_id, lambda: self._host.set_agent(project_id, conversation_id, agent_id))

    @Slot(str, str, str)
    @on_own_thread
    def load_full_output(self, project_id: str, conversation_id: str, message_id: str) -> None:
        call = functools.partial(to.full_output, self._host, project_id, conversation_id, message_id)
        self._deliver(TurnRequest.LOAD_FULL_OUTPUT, conversation_id, call, self.full_output_loaded.emit)

    @Slot(str, str, str, object)
    @on_own_thread
    def load_tool_images(self, project_id: str, conversation_id: str, key: str, shown: object) -> None:
        """Thumbnails of the ``@state/...`` images (a tuple of str) of the tool part ``key``: ``tool_images_loaded``."""
        wanted = tuple(str(one) for one in shown) if isinstance(shown, tuple | list) else ()
        call = functools.partial(to.tool_images, self._host, project_id, conversation_id, key, wanted)
        self._deliver(TurnRequest.LOAD_TOOL_IMAGES, conversation_id, call, self.tool_images_loaded.emit)

    @Slot(str)
    @on_own_thread
    def read_mcp_log(self, server_id: str) -> None:
        """The bounded stderr log of a server the turns started (``mcp_log_read``), read on the loop that owns the servers."""

        async def read() -> McpLog:
            server = self._host.mcp.server(server_id)
            return McpLog(server_id, tuple(server.stderr.lines()), True) if server is not None else McpLog(server_id)

        self._deliver(TurnRequest.READ_MCP_LOG, "", read, self.mcp_log_read.emit)

    @Slot(str, str)
    @on_own_thread
    def answer_approval(self, request_id: str, decision: str) -> None:
        self._prompts.answer(request_id, decision)

    @Slot(str, object)
    @on_own_thread
    def answer_ask_user(self, request_id: str, payload: object) -> None:
        self._prompts.answer(request_id, payload)

    @Slot()
    @on_own_thread
    def describe_provider(self) -> None:
        self._answer(TurnRequest.DESCRIBE_PROVIDER, "", self._host.describe_provider)

    @Slot(str, str, str)
    @on_own_thread
    def open_subagent(self, project_id: str, conversation_id: str, session_id: str) -> None:
        call = functools.partial(to.loaded_subagent, self._host, project_id, conversation_id, session_id)
        self._deliver(TurnRequest.OPEN_SUBAGENT, conversation_id, call, self.subagent_loaded.emit)

    @Slot(str)
    @on_own_thread
    def cancel_subagent(self, session_id: str) -> None:
        self._start(TurnRequest.CANCEL_SUBAGENT, "", lambda: self._host.cancel_subagent(session_id))

    @Slot(str, str)
    @on_own_thread
    def load_runs(self, project_id: str, conversation_id: str) -> None:
        async def listed() -> HostItem | None:
            # Answered in the order asked: a slow read begun mid-run never lands after a newer one.
            async with self._runs_in_order:
                return await self._host.runs(project_id, conversation_id)

        self._answer(TurnRequest.LOAD_RUNS, conversation_id, listed)

    @Slot(str, str, str, str)
    @on_own_thread
    def start_run(self, project_id: str, conversation_id: str, package_id: str, workflow_id: str) -> None:
        self._relay(TurnRequest.START_RUN, conversation_id, lambda: self._host.start_run(project_id, conversation_id, package_id, workflow_id))

    @Slot(str, str, str)
    @on_own_thread
    def resume_run(self, project_id: str, conversation_id: str, run_id: str) -> None:
        self._relay(TurnRequest.RESUME_RUN, conversation_id, lambda: self._host.resume_run(project_id, conversation_id, run_id))

    # -- core items as signals (on the loop's thread) ---------------------------------------------

    def _emit(self, request: TurnRequest, item: HostItem | None) -> None:
        if isinstance(item, TurnProgress):
            self._progress(item)
        elif isinstance(item, TurnBegan):
            self._turns_begun[item.conversation_id] += 1
            self.turn_started.emit(item.conversation_id, item.mode)
        elif isinstance(item, StreamEnded):
            self.stream_ended.emit(item.conversation_id)
        elif isinstance(item, TurnFailed):
            self.error.emit(TurnError(request, item.conversation_id, item.message))
        elif isinstance(item, TurnEnded):
            self.turn_finished.emit(item.conversation_id, item.reason, frozen_json(dict(item.error)) if item.error else None)
        elif isinstance(item, ConversationChanged):
            self.conversation_changed.emit(item.project_id, ConversationSummary.from_meta(item.meta))
        elif isinstance(item, ProviderChanged):
            self.provider_changed.emit(to.provider_info(item))
        elif isinstance(item, MenuShown):
            self.agent_menu.emit(to.agent_menu_of(item.conversation_id, item.menu))
        elif isinstance(item, CommandHandled):
            self.command_done.emit(item.conversation_id, item.done.command, item.done.message)
        elif isinstance(item, RunsListed):
            self.runs_loaded.emit(ConversationRuns(item.project_id, item.conversation_id, item.runs, item.active_run_id))

    def _progress(self, item: TurnProgress[Any]) -> None:
        cid, event = item.conversation_id, item.event
        if isinstance(event, ContextBuilt):
            self.context_usage.emit(cid, ContextUsage.from_debug(event.debug))
        elif isinstance(event, StreamStarted):
            self.stream_started.emit(cid, event.step, event.model)
        elif isinstance(event, TextDelta):
            self.stream_chunk.emit(cid, event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning_chunk.emit(cid, event.text)
        elif isinstance(event, ToolCallStarted):
            self.tool_started.emit(cid, to.call_ref(event))
        elif isinstance(event, ToolCallFinished):
            self.tool_finished.emit(cid, to.tool_finish(event))
        elif isinstance(event, ToolCallOutput):
            self.tool_output.emit(cid, ToolOutputChunk(event.call_id, event.stream, event.text))
        elif isinstance(event, MessagePersisted):
            self.message_persisted.emit(cid, item.message)
        elif isinstance(event, RunProgress):
            self.run_progress.emit(cid, event)

    def _on_subagent_event(self, event: SubagentEvent) -> None:
        if isinstance(event, SubagentStatusChanged):
            self.subagent_status_changed.emit(SubagentInfo.from_status(event))
        elif isinstance(event, SubagentNotice):
            cid = event.conversation_id
            self.subagent_notice.emit(cid, TimelineMessage.from_message(event.message))
            self._answer(TurnRequest.SUBAGENT_NOTICE, cid, lambda: self._host.notice_summary(cid))
        elif isinstance(event, SubagentActivity):
            sid, inner = event.session_id, event.event
            if isinstance(inner, MessagePersisted):
                self.subagent_message_persisted.emit(event.conversation_id, sid, TimelineMessage.from_message(inner.message))
            elif (progress := to.subagent_progress(inner)) is not None:
                self.subagent_progress.emit(sid, progress)

    # -- shutdown ---------------------------------------------------------------------------------

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> bool:
        """Stop every turn and subagent, let them persist what they stopped, then end the loop and the demo server.
        Callable from any thread but the loop's; blocks for about ``timeout`` s at most; False when a turn had to be cancelled."""
        deadline = time.monotonic() + timeout
        if not self._async.refuse_new():
            return True  # shut down already
        self._async.call(self._host.stop_all)
        try:
            clean = self._async.run(self._host.shutdown_subagents(timeout), timeout + 1.0)
        except (TimeoutError, RuntimeError) as exc:  # concurrent.futures.TimeoutError is TimeoutError
            log.warning("subagents did not stop within %.1f s: %r", timeout, exc)
            clean = False
        try:  # the MCP servers' processes end with the app (issue 12): no orphan survives a quit
            clean = self._async.run(self._host.shutdown_mcp(timeout), timeout + 1.0) and clean
        except (TimeoutError, RuntimeError) as exc:
            log.warning("MCP servers did not stop within %.1f s: %r", timeout, exc)
            clean = False
        clean = self._async.stop(max(0.5, deadline - time.monotonic())) and clean
        self._host.close()  # the loop's thread has ended: nothing else touches the host now
        return clean
