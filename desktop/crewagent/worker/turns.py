"""The TurnWorker: runs conversation turns off the GUI thread and reports them as Qt signals.

Turns run on an asyncio loop in a thread of their own (:class:`AsyncLoopThread`); the
TurnWorker QObject lives with the Worker in the worker QThread and takes the UI's requests as
slots there. Every request becomes a task on the loop, kept in a set whose failures are reported
(``error``); every turn ends with exactly one ``turn_finished``, whatever happened, so the UI can
always reset its busy state.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import importlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from PySide6.QtCore import QObject, QThread, Signal, Slot

from crewagent.core import agent_catalog, agent_menu
from crewagent.core.agents import Agent
from crewagent.core.commands import global_command
from crewagent.core.routing import RunTurn, ShowAgentMenu, route_input
from crewagent.core.context import default_counter
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.llm.demo import start_demo_server
from crewagent.core.llm.local_server import LocalServer
from crewagent.core.loop import (
    ContextBuilt,
    ConversationSession,
    LoopEvent,
    MessagePersisted,
    ReasoningDelta,
    StreamStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from crewagent.core.loop.factory import provider_config
from crewagent.core.messages import MODES, Mode
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents import (
    SubagentActivity,
    SubagentEvent,
    SubagentManager,
    SubagentNotice,
    SubagentStatusChanged,
    SubagentTypes,
)
from crewagent.core.tools import default_registry
from crewagent.core.turns import TurnHooks, run_turn
from crewagent.worker.asyncloop import AsyncLoopThread
from crewagent.worker.prompts import PromptBroker
from crewagent.worker.turn_values import (
    AgentMenu,
    AgentMenuEntry,
    ContextUsage,
    FullOutput,
    LoadedConversation,
    LoadedSubagent,
    ProviderInfo,
    SubagentInfo,
    SubagentProgress,
    TimelineMessage,
    ToolCallRef,
    ToolFinish,
    frozen_json,
)
from crewagent.worker.values import ConversationSummary

log = logging.getLogger(__name__)

#: Seconds a shutdown waits for stopped turns to persist what they stopped.
SHUTDOWN_TIMEOUT_S = 5.0
DEMO_LABEL = "Demo (offline script)"
#: Messages of a long conversation sent ahead of the rest when it is opened (its last page and more).
FIRST_PAGE = 150
#: Seconds the whole load of a long conversation waits after its first page was sent.
FIRST_PAGE_HEAD_START_S = 0.15

_P = ParamSpec("_P")
_T = TypeVar("_T", bound="TurnWorker")

#: Builds the provider config from the settings and, for the demo, its running server's base URL.
ProviderFactory = Callable[[Settings, str | None], ProviderConfig]


def _default_provider(settings: Settings, demo_base_url: str | None) -> ProviderConfig:
    return provider_config(settings, SecretStore(), demo_base_url=demo_base_url)


def _request(method: Callable[Concatenate[_T, _P], None]) -> Callable[Concatenate[_T, _P], None]:
    """A slot that must run on the worker thread: called from elsewhere, it fails loudly."""

    @functools.wraps(method)
    def wrapper(self: _T, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        if QThread.currentThread() is not self.thread():
            raise RuntimeError(
                f"TurnWorker.{method.__name__} was called directly from another thread; "
                "connect a signal to it so that Qt queues the call onto the worker thread."
            )
        method(self, *args, **kwargs)

    return wrapper


@dataclass
class _Turn:
    """A running turn (touched only on the loop's thread)."""

    project_id: str
    conversation_id: str
    mode: str
    session: ConversationSession | None = None
    started: bool = False
    stop_requested: bool = False
    streaming: bool = False
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    #: Messages this turn persisted, in order (merged into a load that races with the turn).
    persisted: list[TimelineMessage] = field(default_factory=list)
    #: How the loop said the turn ended: (reason, error). Reported once the turn has let go of
    #: the conversation, so that a send right after ``turn_finished`` never finds it busy.
    outcome: tuple[str, Mapping[str, Any] | None] | None = None

    def request_stop(self) -> None:
        self.stop_requested = True
        if self.session is not None and self.started:
            self.session.request_stop()


class TurnWorker(QObject):
    """Runs turns and answers conversation requests; the UI talks to it only through signals.

    Requests (slots, queued onto the worker thread): ``open_conversation(project_id, cid)``,
    ``send(project_id, cid, text, mode)``, ``continue_turn(project_id, cid, mode)``,
    ``retry(project_id, cid, mode)``, ``stop(cid)``, ``stop_all()``,
    ``set_mode(project_id, cid, mode)``, ``set_agent(project_id, cid, agent_id)``,
    ``load_full_output(project_id, cid, message_id)``,
    ``answer_approval(request_id, decision)``, ``answer_ask_user(request_id, payload)``,
    ``describe_provider()``, ``open_subagent(project_id, cid, session_id)``,
    ``cancel_subagent(session_id)``.

    In Agent mode ``send`` first routes the text through the agent's menu (core.agent_menu): the
    menu, a question which item, or an item that needs a package is answered with ``agent_menu``
    and no turn; a picked prompt runs as the user message. Agent and Run turns carry the
    conversation's agent: its persona in the system prefix, its id on the messages.

    A turn reports, in order: ``turn_started``; per model call ``context_usage``,
    ``stream_started``, ``stream_chunk``/``reasoning_chunk``, ``stream_ended``; then
    ``message_persisted`` for every message written to the log; per tool call ``tool_started``
    and ``tool_finished``; and always exactly one ``turn_finished``.

    Subagents (issue 6): one :class:`SubagentManager` serves every turn (its Task tool is in each
    turn's registry) and outlives them, so a background child runs on after its parent's turn.
    Its reports: ``subagent_status_changed`` when a child starts or ends,
    ``subagent_message_persisted`` / ``subagent_progress`` while it runs (its read-only tab
    follows them), and ``subagent_notice`` when a finished background child's notice was
    appended to its idle conversation.
    """

    #: A conversation opened for the timeline: the :class:`LoadedConversation`.
    conversation_loaded = Signal(object)

    #: ``(conversation_id, mode)``: a turn began; the conversation is busy until ``turn_finished``.
    turn_started = Signal(str, str)

    #: ``(conversation_id, step, model)``: a model answer starts streaming (step counts calls, 1-based).
    stream_started = Signal(str, int, str)

    #: ``(conversation_id, text)``: more of the streaming answer.
    stream_chunk = Signal(str, str)

    #: ``(conversation_id, text)``: more of the streaming answer's reasoning.
    reasoning_chunk = Signal(str, str)

    #: ``(conversation_id)``: the answer stopped streaming; its stored form follows (if any).
    stream_ended = Signal(str)

    #: ``(conversation_id, ToolCallRef)``: a tool call began running.
    tool_started = Signal(str, object)

    #: ``(conversation_id, ToolFinish)``: a tool call ended; its result message follows.
    tool_finished = Signal(str, object)

    #: ``(conversation_id, TimelineMessage)``: a message is durable in the log.
    message_persisted = Signal(str, object)

    #: ``(conversation_id, ContextUsage)``: how full the next model call's context is.
    context_usage = Signal(str, object)

    #: ``(conversation_id, reason, error)``: the turn is over; reason is completed, stopped,
    #: error or waiting_user; ``error`` is the ``{code, message}`` mapping of a failure or None.
    turn_finished = Signal(str, str, object)

    #: ``(project_id, ConversationSummary)``: a conversation's title, mode, count or activity changed.
    conversation_changed = Signal(str, object)

    #: An :class:`ApprovalPrompt`: a write tool waits; answer with ``answer_approval``.
    approval_requested = Signal(object)

    #: An :class:`AskUserPrompt`: ``ui.ask_user`` waits; answer with ``answer_ask_user``.
    ask_user_requested = Signal(object)

    #: ``(request_id)``: a question is no longer waiting (its turn was stopped); close it.
    prompt_withdrawn = Signal(str)

    #: A :class:`FullOutput`: the complete content of an offloaded tool result.
    full_output_loaded = Signal(object)

    #: An :class:`AgentMenu`: Agent-mode input showed the agent's menu instead of starting a turn.
    agent_menu = Signal(object)

    #: ``(conversation_id, command, message)``: a global command (/stop, /pause, /dismiss ...) was
    #: handled without a turn; ``message`` says what happened.
    command_done = Signal(str, str, str)

    #: A :class:`ProviderInfo`: the provider and model the next turn uses.
    provider_changed = Signal(object)

    #: A :class:`SubagentInfo`: a subagent started or ended (its Task part's type, status, summary).
    subagent_status_changed = Signal(object)

    #: ``(conversation_id, session_id, TimelineMessage)``: a subagent's message is durable in its sidechain.
    subagent_message_persisted = Signal(str, str, object)

    #: ``(session_id, SubagentProgress)``: a running subagent streams or runs a tool.
    subagent_progress = Signal(str, object)

    #: ``(conversation_id, TimelineMessage)``: the notice of a finished background subagent was
    #: appended to the conversation (while no turn ran there, or as its turn ended).
    subagent_notice = Signal(str, object)

    #: A :class:`LoadedSubagent`: a sidechain opened for its read-only tab.
    subagent_loaded = Signal(object)

    #: ``(request, message)``: a request failed for a reason the user can act on (no provider
    #: configured, the conversation is busy elsewhere, a full disk), or a bug was reported.
    error = Signal(str, str)

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
        self._store_of = store
        self._provider_factory = provider_factory or _default_provider
        self._settings_store = settings_store
        self._projects: dict[str, ProjectInfo] = {}
        self._turns: dict[str, _Turn] = {}
        self._demo: LocalServer | None = None
        self._async: AsyncLoopThread | None = None
        self._closed = False
        self._warmed_up = False  # see _warm_up
        #: Created on the loop at the first turn (reading the subagent types is disk work).
        self._subagents: SubagentManager | None = None
        #: conversation id -> project id, for reports about a conversation no turn runs in.
        self._conversation_projects: dict[str, str] = {}
        #: session id -> (text, reasoning) a running subagent has streamed of its current answer,
        #: so that its tab, opened mid-stream, starts with it (as ``_Turn.text`` does for a turn).
        self._child_streams: dict[str, tuple[list[str], list[str]]] = {}
        self._prompts = PromptBroker(
            lambda: self._async.loop if self._async is not None else None,
            on_approval=self.approval_requested.emit,
            on_ask_user=self.ask_user_requested.emit,
            on_withdrawn=self.prompt_withdrawn.emit,
        )

    # -- plumbing -------------------------------------------------------------------------------

    def _loop_thread(self) -> AsyncLoopThread:
        if self._async is None:
            self._async = AsyncLoopThread("crewagent-turns", self._report)
        return self._async

    def _report(self, task: str, exc: BaseException) -> None:
        self.error.emit(task, f"Internal error in {task}: {exc!r}. Please report it.")

    def _start(self, name: str, factory: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        if self._closed:
            log.info("%s ignored: the turn worker is shut down", name)
            return
        self._loop_thread().start(factory, name)

    def _call(self, callback: Callable[[], None]) -> None:
        if self._async is not None:  # no loop yet: no turn to act on
            self._async.call(callback)

    def add_project(self, project: ProjectInfo) -> None:
        """Remember an opened project (the Worker calls this on its thread when it opens one)."""
        self._projects[project.id] = project

    def _project(self, project_id: str) -> ProjectInfo:
        try:
            return self._projects[project_id]
        except KeyError:
            raise CrewAgentError(f"The project {project_id!r} is not open.") from None

    @property
    def running(self) -> frozenset[str]:
        """Ids of the conversations with a running turn (a snapshot; for tests and diagnostics)."""
        return frozenset(self._turns)

    # -- requests (slots) -----------------------------------------------------------------------

    @Slot(str, str)
    @_request
    def open_conversation(self, project_id: str, conversation_id: str) -> None:
        """Load a conversation (recovering an interrupted turn first) → ``conversation_loaded``."""
        store = self._store_of()
        self._start("open_conversation", lambda: self._open(store, project_id, conversation_id))

    @Slot(str, str, str, str)
    @_request
    def send(self, project_id: str, conversation_id: str, text: str, mode: str) -> None:
        """Route ``text`` typed in ``mode`` (chat, agent or run) and run the turn it asks for.

        Routing is core.routing's: a global command (/menu /pause /stop /resume /dismiss) first
        (``command_done`` when it needs no turn), then in Agent mode the agent's menu
        (``agent_menu`` may answer; a workflow item starts its run), else a turn in ``mode``.
        """
        store = self._store_of()
        if global_command(text) in ("stop", "pause"):
            self._call(lambda: self._stop_on_loop(conversation_id))  # now, not after the routing
        self._start("send", lambda: self._send(store, project_id, conversation_id, text, mode))

    @Slot(str, str, str)
    @_request
    def continue_turn(self, project_id: str, conversation_id: str, mode: str) -> None:
        """Ask the model to go on from where it stopped (after an error or a Stop)."""
        self.send(project_id, conversation_id, "continue", mode)

    @Slot(str, str, str)
    @_request
    def retry(self, project_id: str, conversation_id: str, mode: str) -> None:
        """Send the last user message again."""
        store = self._store_of()
        self._start("retry", lambda: self._retry(store, project_id, conversation_id, mode))

    @Slot(str)
    @_request
    def stop(self, conversation_id: str) -> None:
        """Stop the conversation's turn: the stream is aborted, running tools are interrupted."""
        self._call(lambda: self._stop_on_loop(conversation_id))

    @Slot()
    @_request
    def stop_all(self) -> None:
        self._call(self._stop_all_on_loop)

    @Slot(str, str, str)
    @_request
    def set_mode(self, project_id: str, conversation_id: str, mode: str) -> None:
        """Change the conversation's active mode in place (its history stays)."""
        if mode not in MODES:
            raise ValueError(f"Unknown mode {mode!r}; expected one of {MODES}")
        store = self._store_of()
        self._start("set_mode", lambda: self._set_mode(store, project_id, conversation_id, cast(Mode, mode)))

    @Slot(str, str, str)
    @_request
    def set_agent(self, project_id: str, conversation_id: str, agent_id: str) -> None:
        """Choose the agent Agent mode (and a run) answers with; saved with the conversation."""
        store = self._store_of()
        self._start("set_agent", lambda: self._set_agent(store, project_id, conversation_id, agent_id))

    @Slot(str, str, str)
    @_request
    def load_full_output(self, project_id: str, conversation_id: str, message_id: str) -> None:
        """Read the complete output of an offloaded tool result → ``full_output_loaded``."""
        store = self._store_of()
        self._start("load_full_output", lambda: self._full_output(store, project_id, conversation_id, message_id))

    @Slot(str, str)
    @_request
    def answer_approval(self, request_id: str, decision: str) -> None:
        """``decision``: allow_once, allow_conversation, allow_always or deny."""
        self._prompts.answer(request_id, decision)

    @Slot(str, object)
    @_request
    def answer_ask_user(self, request_id: str, payload: object) -> None:
        """The user's ``WIDGET_SUBMIT`` payload (a mapping), or None when the widget was dismissed."""
        self._prompts.answer(request_id, payload)

    @Slot()
    @_request
    def describe_provider(self) -> None:
        self._start("describe_provider", self._describe_provider)

    @Slot(str, str, str)
    @_request
    def open_subagent(self, project_id: str, conversation_id: str, session_id: str) -> None:
        """Load a subagent's sidechain for its read-only tab → ``subagent_loaded`` (live events follow)."""
        store = self._store_of()
        self._start("open_subagent", lambda: self._open_subagent(store, project_id, conversation_id, session_id))

    @Slot(str)
    @_request
    def cancel_subagent(self, session_id: str) -> None:
        """Stop a running subagent (e.g. a background one); its log ends with a cancelled marker."""
        self._start("cancel_subagent", lambda: self._cancel_subagent(session_id))

    # -- shutdown -------------------------------------------------------------------------------

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> bool:
        """Stop every turn, let it persist what it stopped, then end the loop and the demo server.

        Callable from any thread but the loop's; blocks for at most about ``timeout`` seconds.
        Returns False when a turn had to be cancelled instead of stopping cleanly.
        """
        self._closed = True
        loop_thread, self._async = self._async, None
        if loop_thread is None:
            return True
        deadline = time.monotonic() + timeout
        loop_thread.call(self._stop_all_on_loop)
        clean = self._shutdown_subagents(loop_thread, timeout)
        clean = loop_thread.stop(max(0.5, deadline - time.monotonic())) and clean
        if self._demo is not None:
            self._demo.stop()
            self._demo = None
        return clean

    def _shutdown_subagents(self, loop_thread: AsyncLoopThread, timeout: float) -> bool:
        """Cancel every running subagent (background ones too) and wait, bounded, for their ends."""
        manager = self._subagents
        if manager is None:
            return True
        try:
            loop_thread.run(asyncio.wait_for(manager.shutdown(), timeout), timeout + 1.0)
        except (TimeoutError, RuntimeError) as exc:  # concurrent.futures.TimeoutError is TimeoutError
            log.warning("subagents did not stop within %.1f s: %r", timeout, exc)
            return False
        return True

    # -- on the loop ----------------------------------------------------------------------------

    def _stop_on_loop(self, conversation_id: str) -> None:
        turn = self._turns.get(conversation_id)
        if turn is not None:
            turn.request_stop()

    def _stop_all_on_loop(self) -> None:
        for turn in self._turns.values():
            turn.request_stop()

    async def _open(self, store: RuntimeStore, project_id: str, conversation_id: str) -> None:
        try:
            project = self._project(project_id)
            if conversation_id not in self._turns:
                # A long conversation's newest messages go first, straight from the end of its log:
                # the timeline shows its last page while the whole log is recovered and loaded.
                first = await asyncio.to_thread(_first_page, store, project.id, conversation_id)
                if first:
                    self.conversation_loaded.emit(LoadedConversation(project_id, conversation_id, first, complete=False))
                    # A head start: the GUI lays out and paints the page while nothing here
                    # competes with it for the GIL (the whole load is ~0.3 s of Python).
                    await asyncio.sleep(FIRST_PAGE_HEAD_START_S)
            messages, problems = await asyncio.to_thread(_load_recovered, store, project, conversation_id)
            metas = await asyncio.to_thread(_child_metas, store, project.id, conversation_id, conversation_id)
        except CrewAgentError as exc:
            self.error.emit("open_conversation", str(exc))
            return
        self._conversation_projects[conversation_id] = project_id
        # Merge with a turn running here: nothing happens on the loop between these lines and
        # the emit, so every event after this one reaches the UI after the snapshot.
        turn = self._turns.get(conversation_id)
        if turn is not None:
            known = {message.id for message in messages}
            messages += [message for message in turn.persisted if message.id not in known]
        self.conversation_loaded.emit(
            LoadedConversation(
                project_id=project_id,
                conversation_id=conversation_id,
                messages=tuple(messages),
                problems=tuple(problems),
                running=turn is not None,
                streaming=turn is not None and turn.streaming,
                streaming_text="".join(turn.text) if turn is not None else "",
                streaming_reasoning="".join(turn.reasoning) if turn is not None else "",
                subagents=self._live_infos(metas),
            )
        )
        if not self._warmed_up:
            self._warmed_up = True
            await asyncio.to_thread(_warm_up)

    async def _retry(self, store: RuntimeStore, project_id: str, conversation_id: str, mode: str) -> None:
        try:
            self._project(project_id)
            result = await asyncio.to_thread(store.load_messages, project_id, conversation_id)
        except CrewAgentError as exc:
            self.error.emit("retry", str(exc))
            return
        last = next((m for m in reversed(result.messages) if m.role == "user" and m.text.strip()), None)
        if last is None:
            self.error.emit("retry", "There is no message to send again in this conversation.")
            return
        await self._turn(store, project_id, conversation_id, last.text, mode)

    async def _send(self, store: RuntimeStore, project_id: str, conversation_id: str, text: str, mode: str) -> None:
        if mode not in MODES:
            self.error.emit("send", f"Unknown mode {mode!r}.")
            return
        if conversation_id in self._turns and global_command(text) is None:
            self.error.emit("send", "This conversation is still answering; stop it or wait for it.")
            return
        try:
            routed = await asyncio.to_thread(route_input, store, self._project(project_id), conversation_id, text, cast(Mode, mode))
        except CrewAgentError as exc:
            self.error.emit("send", str(exc))
            return
        if isinstance(routed, RunTurn):
            if routed.mode != mode:  # a run started, or /resume: the conversation changed mode
                await self._emit_summary(store, project_id, conversation_id)
            await self._turn(store, project_id, conversation_id, routed.text, routed.mode)
        elif isinstance(routed, ShowAgentMenu):
            entries = _menu_entries(routed.agent)
            shown = tuple(entries[index] for index in routed.items)
            self.agent_menu.emit(AgentMenu(conversation_id, routed.agent.id, routed.agent.metadata.name, routed.reason, shown, routed.query))
        else:
            await self._emit_summary(store, project_id, conversation_id)
            self.command_done.emit(conversation_id, routed.command, routed.message)

    async def _turn(self, store: RuntimeStore, project_id: str, conversation_id: str, text: str | None, mode: str) -> None:
        if conversation_id in self._turns:
            self.error.emit("send", "This conversation is still answering; stop it or wait for it.")
            return
        if mode not in MODES:
            self.error.emit("send", f"Unknown mode {mode!r}.")
            return
        turn = _Turn(project_id, conversation_id, mode)
        self._turns[conversation_id] = turn
        self.turn_started.emit(conversation_id, mode)
        try:
            await self._run(store, turn, text, cast(Mode, mode))
        except CrewAgentError as exc:
            self.error.emit("send", str(exc))
            if turn.outcome is None:
                turn.outcome = ("error", {"code": type(exc).__name__, "message": str(exc)})
        finally:
            # The session has released the conversation (its turn lock) by now.
            del self._turns[conversation_id]
            # No outcome: a bug (reported by the task's done callback) or a cancellation.
            reason, error = turn.outcome or ("error", {"code": "INTERNAL", "message": "The turn ended unexpectedly."})
            self._finish(turn, reason, error)
        await self._emit_summary(store, project_id, conversation_id)

    async def _run(self, store: RuntimeStore, turn: _Turn, text: str | None, mode: Mode) -> None:
        """The turn itself, through the core entry point, until the session has closed."""
        project = self._project(turn.project_id)
        settings_store = self._settings_store()
        settings = await asyncio.to_thread(settings_store.load)
        config = await self._config(settings)
        self.provider_changed.emit(_provider_info(config))
        self._conversation_projects[turn.conversation_id] = project.id
        hooks = TurnHooks(
            approver=self._prompts,
            ask_user=self._prompts.ask_user_for(turn.conversation_id),
            persist_always=functools.partial(_persist_always, settings_store),
            on_session=functools.partial(setattr, turn, "session"),
        )
        events = run_turn(
            store,
            project,
            turn.conversation_id,
            text,
            mode=mode,
            settings=settings,
            config=config,
            hooks=hooks,
            subagents=await self._manager(),
            config_dir=settings_store.dir,
        )
        async with aclosing(events) as stream:
            async for event in stream:
                self._dispatch(turn, event)

    def _dispatch(self, turn: _Turn, event: LoopEvent) -> None:
        """Turn one loop event into signals (the turn's end is reported by ``_turn``)."""
        cid = turn.conversation_id
        if isinstance(event, TurnStarted):
            turn.started = True
            if turn.stop_requested and turn.session is not None:
                turn.session.request_stop()  # Stop pressed before the session could take it
        elif isinstance(event, ContextBuilt):
            self.context_usage.emit(cid, ContextUsage.from_debug(event.debug))
        elif isinstance(event, StreamStarted):
            turn.streaming, turn.text, turn.reasoning = True, [], []
            self.stream_started.emit(cid, event.step, event.model)
        elif isinstance(event, TextDelta):
            turn.text.append(event.text)
            self.stream_chunk.emit(cid, event.text)
        elif isinstance(event, ReasoningDelta):
            turn.reasoning.append(event.text)
            self.reasoning_chunk.emit(cid, event.text)
        elif isinstance(event, ToolCallStarted):
            self.tool_started.emit(cid, ToolCallRef(event.call_id, event.name, event.arguments))
        elif isinstance(event, ToolCallFinished):
            finish = ToolFinish(event.call_id, event.name, event.ok, event.duration_ms, event.error_code, frozen_json(event.result))
            self.tool_finished.emit(cid, finish)
        elif isinstance(event, MessagePersisted):
            message = TimelineMessage.from_message(event.message)
            if message.role == "assistant":
                self._end_stream(turn)
            turn.persisted.append(message)
            self.message_persisted.emit(cid, message)
        elif isinstance(event, TurnFinished):
            self._end_stream(turn)
            turn.outcome = (event.reason, event.error)

    def _end_stream(self, turn: _Turn) -> None:
        if turn.streaming:
            turn.streaming = False
            self.stream_ended.emit(turn.conversation_id)

    def _finish(self, turn: _Turn, reason: str, error: Mapping[str, Any] | None) -> None:
        self._end_stream(turn)
        self.turn_finished.emit(turn.conversation_id, reason, frozen_json(dict(error)) if error else None)

    # -- subagents (on the loop) ----------------------------------------------------------------

    async def _manager(self) -> SubagentManager:
        if self._subagents is None:
            types = await asyncio.to_thread(SubagentTypes)
            if self._subagents is None:  # another turn may have made it meanwhile
                self._subagents = SubagentManager(types)
                self._subagents.add_listener(self._on_subagent_event)
        return self._subagents

    def _on_subagent_event(self, event: SubagentEvent) -> None:
        """The manager's events (on the loop's thread) as signals carrying frozen values."""
        if isinstance(event, SubagentStatusChanged):
            if event.status != "running":
                self._child_streams.pop(event.session_id, None)
            self.subagent_status_changed.emit(SubagentInfo.from_status(event))
        elif isinstance(event, SubagentActivity):
            self._subagent_activity(event)
        elif isinstance(event, SubagentNotice):
            cid = event.conversation_id
            self.subagent_notice.emit(cid, TimelineMessage.from_message(event.message))
            project_id = self._conversation_projects.get(cid)
            if project_id is not None and cid not in self._turns:  # a running turn reports its summary itself
                store = self._store_of()
                self._start("subagent_notice", lambda: self._emit_summary(store, project_id, cid))

    def _subagent_activity(self, activity: SubagentActivity) -> None:
        sid, event = activity.session_id, activity.event
        if isinstance(event, MessagePersisted):
            if event.message.role == "assistant":
                self._child_streams.pop(sid, None)
            self.subagent_message_persisted.emit(activity.conversation_id, sid, TimelineMessage.from_message(event.message))
        elif isinstance(event, StreamStarted):
            self._child_streams[sid] = ([], [])
            self.subagent_progress.emit(sid, SubagentProgress("stream_started"))
        elif isinstance(event, TextDelta):
            self._child_streams.setdefault(sid, ([], []))[0].append(event.text)
            self.subagent_progress.emit(sid, SubagentProgress("stream_chunk", event.text))
        elif isinstance(event, ReasoningDelta):
            self._child_streams.setdefault(sid, ([], []))[1].append(event.text)
            self.subagent_progress.emit(sid, SubagentProgress("reasoning_chunk", event.text))
        elif isinstance(event, ToolCallStarted):
            self.subagent_progress.emit(sid, SubagentProgress("tool_started", call=ToolCallRef(event.call_id, event.name, event.arguments)))
        elif isinstance(event, ToolCallFinished):
            finish = ToolFinish(event.call_id, event.name, event.ok, event.duration_ms, event.error_code, frozen_json(event.result))
            self.subagent_progress.emit(sid, SubagentProgress("tool_finished", finish=finish))
        elif isinstance(event, TurnFinished):
            self._child_streams.pop(sid, None)
            self.subagent_progress.emit(sid, SubagentProgress("finished"))

    def _live_infos(self, metas: list[SidechainMeta]) -> tuple[SubagentInfo, ...]:
        """The children's statuses: a live child's meta as its run holds it, the others' as stored."""
        manager = self._subagents
        infos = []
        for meta in metas:
            run = manager.live(meta.sessionId) if manager is not None else None
            infos.append(SubagentInfo.from_meta(run.meta if run is not None else meta))
        return tuple(infos)

    async def _open_subagent(self, store: RuntimeStore, project_id: str, conversation_id: str, session_id: str) -> None:
        try:
            self._project(project_id)
            meta, messages, problems, children = await asyncio.to_thread(_load_sidechain, store, project_id, conversation_id, session_id)
        except CrewAgentError as exc:
            empty = LoadedConversation(project_id, session_id, ())
            self.subagent_loaded.emit(LoadedSubagent(project_id, conversation_id, session_id, None, empty, str(exc)))
            return
        # As in _open: nothing runs on the loop between here and the emit, so every message the
        # child stores after this snapshot reaches the tab after it (a repeat is merged by id).
        run = self._subagents.live(session_id) if self._subagents is not None else None
        if run is not None:
            meta = run.meta
            known = {message.id for message in messages}
            messages += [TimelineMessage.from_message(m) for m in run.messages if m.id not in known]
        info = SubagentInfo.from_meta(meta)
        stream = self._child_streams.get(session_id) if info.running else None
        timeline = LoadedConversation(
            project_id=project_id,
            conversation_id=session_id,
            messages=tuple(messages),
            problems=tuple(problems),
            running=info.running,
            streaming=stream is not None,
            streaming_text="".join(stream[0]) if stream is not None else "",
            streaming_reasoning="".join(stream[1]) if stream is not None else "",
            subagents=self._live_infos(children),
        )
        self.subagent_loaded.emit(LoadedSubagent(project_id, conversation_id, session_id, info, timeline))

    async def _cancel_subagent(self, session_id: str) -> None:
        if self._subagents is not None:
            await self._subagents.cancel(session_id, "the user stopped it")

    async def _config(self, settings: Settings) -> ProviderConfig:
        demo_url = None
        if settings.llm.provider == "demo":
            if self._demo is None:
                self._demo = await asyncio.to_thread(start_demo_server)
            demo_url = self._demo.base_url
        return await asyncio.to_thread(self._provider_factory, settings, demo_url)

    async def _describe_provider(self) -> None:
        try:
            settings = await asyncio.to_thread(self._settings_store().load)
        except CrewAgentError as exc:  # settings.json unreadable: say so, change nothing
            self.error.emit("describe_provider", str(exc))
            return
        try:
            config = await self._config(settings)
        except CrewAgentError as exc:
            self.provider_changed.emit(ProviderInfo(settings.llm.provider, settings.llm.model, settings.llm.provider, str(exc)))
            return
        self.provider_changed.emit(_provider_info(config))

    async def _set_mode(self, store: RuntimeStore, project_id: str, conversation_id: str, mode: Mode) -> None:
        try:
            meta = await asyncio.to_thread(store.update_conversation, project_id, conversation_id, activeType=mode)
        except CrewAgentError as exc:
            self.error.emit("set_mode", str(exc))
            return
        self.conversation_changed.emit(project_id, ConversationSummary.from_meta(meta))

    async def _set_agent(self, store: RuntimeStore, project_id: str, conversation_id: str, agent_id: str) -> None:
        try:
            if await asyncio.to_thread(agent_catalog.find, store.data_dir, agent_id) is None:
                raise CrewAgentError(f"There is no agent {agent_id!r}; pick one of the list.")
            meta = await asyncio.to_thread(store.update_conversation, project_id, conversation_id, agentId=agent_id)
        except CrewAgentError as exc:
            self.error.emit("set_agent", str(exc))
            return
        self.conversation_changed.emit(project_id, ConversationSummary.from_meta(meta))

    async def _emit_summary(self, store: RuntimeStore, project_id: str, conversation_id: str) -> None:
        try:
            meta = await asyncio.to_thread(store.get_conversation, project_id, conversation_id)
        except CrewAgentError as exc:
            log.info("no summary for %s: %s", conversation_id, exc)
            return
        self.conversation_changed.emit(project_id, ConversationSummary.from_meta(meta))

    async def _full_output(self, store: RuntimeStore, project_id: str, conversation_id: str, message_id: str) -> None:
        try:
            text = await asyncio.to_thread(_read_full_output, store, project_id, conversation_id, message_id)
        except CrewAgentError as exc:
            self.full_output_loaded.emit(FullOutput(conversation_id, message_id, "", str(exc)))
            return
        self.full_output_loaded.emit(FullOutput(conversation_id, message_id, text))


# -- blocking helpers (run in asyncio.to_thread) ---------------------------------------------------


def _warm_up() -> None:
    """Load now what the first turn would load while it runs: the model client library (~0.4 s of
    imports) and the token counter (~0.1 s, mostly holding the GIL, which stalls the GUI thread);
    then freeze what the garbage collector has to walk. Done once, after a conversation has been
    opened: the user is reading it, no answer streams."""
    importlib.import_module("crewagent.core.llm._client")
    default_counter()
    # What is alive now lives about as long as the app (modules, the window, the conversation
    # shown, whose rows leave no reference cycles behind): full garbage collections stop walking
    # it. They held the GIL for ~100 ms with 10,000 messages open, stalling the GUI thread.
    gc.freeze()


def _first_page(store: RuntimeStore, project_id: str, conversation_id: str) -> tuple[TimelineMessage, ...]:
    """The newest FIRST_PAGE messages of a long conversation; () for one short enough to load whole at once."""
    newest = store.load_newest(project_id, conversation_id, FIRST_PAGE)
    if len(newest) < FIRST_PAGE:
        return ()
    # A result whose call is above the page would show as a part of its own: start after it.
    start = next((n for n, message in enumerate(newest) if message.role != "tool"), len(newest))
    return tuple(TimelineMessage.from_message(message) for message in newest[start:])


def _load_recovered(store: RuntimeStore, project: ProjectInfo, conversation_id: str) -> tuple[list[TimelineMessage], list[str]]:
    # recover() touches only the store: a session without adapter or tools is enough for it.
    session = ConversationSession(
        store, project, conversation_id, adapter=cast(LlmAdapter, None), registry=default_registry(), tool_context=cast(Any, None)
    )
    _, result = session.recover_and_load()
    problems = [f"line {problem.line}: {problem.reason}" for problem in result.problems]
    return [TimelineMessage.from_message(message) for message in result.messages], problems


def _child_metas(store: RuntimeStore, project_id: str, conversation_id: str, parent_session_id: str) -> list[SidechainMeta]:
    """The metas of the subagents ``parent_session_id`` started (the conversation, or a subagent)."""
    metas = store.sidechains(project_id, conversation_id).metas()
    return [meta for meta in metas if meta.parentSessionId == parent_session_id]


def _load_sidechain(
    store: RuntimeStore, project_id: str, conversation_id: str, session_id: str
) -> tuple[SidechainMeta, list[TimelineMessage], list[str], list[SidechainMeta]]:
    chains = store.sidechains(project_id, conversation_id)
    meta = chains.read_meta(session_id)
    result = chains.load(session_id)
    problems = [f"line {problem.line}: {problem.reason}" for problem in result.problems]
    children = [m for m in chains.metas() if m.parentSessionId == session_id]
    return meta, [TimelineMessage.from_message(m) for m in result.messages], problems, children


def _menu_entries(agent: Agent) -> tuple[AgentMenuEntry, ...]:
    return tuple(
        AgentMenuEntry(number, item.trigger, item.description, agent_menu.item_kind(item))
        for number, item in enumerate(agent.menu, start=1)
    )


def _read_full_output(store: RuntimeStore, project_id: str, conversation_id: str, message_id: str) -> str:
    for message in store.load_messages(project_id, conversation_id).messages:
        if message.id == message_id:
            return store.read_full_output(project_id, message)
    raise CrewAgentError("That tool result is no longer in the conversation.")


def _persist_always(settings_store: SettingsStore, tool: str) -> None:
    current = settings_store.load()
    allowed = sorted({*current.tools.alwaysAllow, tool})
    settings_store.update(tools={"alwaysAllow": allowed})


def _provider_info(config: ProviderConfig) -> ProviderInfo:
    if config.provider == "demo":
        return ProviderInfo(config.provider, config.model, DEMO_LABEL)
    return ProviderInfo(config.provider, config.model, f"{config.model} · {config.provider}")
