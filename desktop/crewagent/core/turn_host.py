"""The conversations of an app session: one running turn per conversation, and what serves them all.

:class:`TurnHost` is what the desktop worker adapts to Qt signals: it keeps the running turns
(what each has streamed and persisted, so that a conversation opened mid-turn shows it), starts
the provider (the demo server included), routes typed input (commands, the agent's menu, a turn),
keeps one approval gate and one subagent manager for the session, and opens conversations (a
long one's newest page first) and subagents' sidechains. Each request is an async generator of
typed items (:data:`HostItem`) or a plain coroutine; a failure the user can act on raises
:class:`CrewAgentError` before anything ran. Everything here runs on one asyncio loop's thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from crewagent.core import agent_catalog, texts
from crewagent.core.attachments import count_images, store_image, user_content
from crewagent.core.commands import global_command
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import ProviderConfig
from crewagent.core.llm.demo import start_demo_server
from crewagent.core.llm.local_server import LocalServer
from crewagent.core.loop import (
    ConversationSession,
    LoopEvent,
    MessagePersisted,
    ReasoningDelta,
    StreamStarted,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from crewagent.core.context.window import ContextWindow
from crewagent.core.loop.factory import context_window, provider_config, settings_window
from crewagent.core.loop.session import recover_and_load
from crewagent.core.mcp import McpManager
from crewagent.core.message_actions import BranchTurn, edit_turn, regenerate_turn
from crewagent.core.messages import MODES, ConversationMessage, ConversationMeta, Mode
from crewagent.core.protocol.branches import current_branch
from crewagent.core.routing import CommandDone, RunTurn, ShowAgentMenu, route_input
from crewagent.core.runs.conversation import START_TEXT, RunOverview, begin_run, conversation_runs, select_run
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents import (
    SubagentActivity,
    SubagentEvent,
    SubagentManager,
    SubagentStatusChanged,
    SubagentTypes,
)
from crewagent.core.subagents.links import parent_status
from crewagent.core.titles import generate_title
from crewagent.core.tools import ApprovalGate, Approver
from crewagent.core.tools.registry import AskUser
from crewagent.core.tuning import FIRST_PAGE_HEAD_START_S
from crewagent.core.turns import TurnHooks, next_call_usage, package_store, run_turn

log = logging.getLogger(__name__)

#: Messages of a long conversation sent ahead of the rest when it is opened (its last page and more).
FIRST_PAGE = 150
BUSY = "This conversation is still answering; stop it or wait for it."
#: What Resume sends: the /resume command (core.commands) clears a pause and continues the run.
RESUME_COMMAND = "/resume"

#: How the caller shows a stored message (the desktop: a frozen TimelineMessage); applied off the
#: loop where whole conversations are loaded.
M = TypeVar("M")

#: Builds the provider config from the settings and, for the demo, its running server's base URL.
ProviderFactory = Callable[[Settings, str | None], ProviderConfig]


def default_provider(settings: Settings, demo_base_url: str | None) -> ProviderConfig:
    return provider_config(settings, SecretStore(), demo_base_url=demo_base_url)


# -- what the requests yield ---------------------------------------------------------------------


@dataclass(frozen=True)
class Opened(Generic[M]):
    """A conversation (or a sidechain) as it is now, merged with the turn running in it."""

    messages: tuple[M, ...]
    problems: tuple[str, ...] = ()
    #: False for the newest page of a long conversation; the whole one follows.
    complete: bool = True
    running: bool = False
    streaming: bool = False
    streaming_text: str = ""
    streaming_reasoning: str = ""
    #: The children it started, as their live run (or their file) says now.
    subagents: tuple[SidechainMeta, ...] = ()
    #: The debug (``usage`` and the rest) of the context its next call would carry, built from this
    #: same load (a second load of a long log would double the memory the open needs); None on a
    #: first page, while a turn runs, or when the settings cannot be read.
    usage: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class TurnBegan:
    conversation_id: str
    mode: str


@dataclass(frozen=True)
class TurnProgress(Generic[M]):
    """An event of a running turn; ``message`` is the presented form of a MessagePersisted's message."""

    conversation_id: str
    event: LoopEvent
    message: M | None = None


@dataclass(frozen=True)
class StreamEnded:
    conversation_id: str


@dataclass(frozen=True)
class TurnFailed:
    """The turn could not go on for a reason the user can act on (its TurnEnded follows)."""

    conversation_id: str
    message: str


@dataclass(frozen=True)
class TurnEnded:
    """Exactly one per turn, once the conversation is free again: reason and the failure (or None)."""

    conversation_id: str
    reason: str
    error: Mapping[str, Any] | None


@dataclass(frozen=True)
class ProviderChanged:
    """The provider the next turn uses (``config`` None and ``problem`` set when it cannot start)."""

    settings: Settings
    config: ProviderConfig | None
    problem: str = ""


@dataclass(frozen=True)
class ConversationChanged:
    project_id: str
    meta: ConversationMeta


@dataclass(frozen=True)
class MenuShown:
    conversation_id: str
    menu: ShowAgentMenu


@dataclass(frozen=True)
class CommandHandled:
    conversation_id: str
    done: CommandDone


@dataclass(frozen=True)
class RunsListed:
    """The runs started in a conversation, oldest first, and the one its Run-mode turns continue."""

    project_id: str
    conversation_id: str
    active_run_id: str | None
    runs: tuple[RunOverview, ...]


HostItem = (
    TurnBegan | TurnProgress[Any] | StreamEnded | TurnFailed | TurnEnded | ProviderChanged | ConversationChanged | MenuShown | CommandHandled
    | RunsListed
)


@dataclass(frozen=True)
class SubagentSnapshot(Generic[M]):
    """A sidechain opened for its tab: its meta (live when it runs) and its timeline."""

    meta: SidechainMeta
    opened: Opened[M]


@dataclass
class _Turn(Generic[M]):
    project_id: str
    conversation_id: str
    session: ConversationSession | None = None
    started: bool = False
    stop_requested: bool = False
    streaming: bool = False
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    #: Messages this turn persisted, in order (merged into a load that races with the turn).
    persisted: list[M] = field(default_factory=list)
    #: How the loop said the turn ended. Reported once the turn has let go of the conversation,
    #: so that a send right after TurnEnded never finds it busy.
    outcome: tuple[str, Mapping[str, Any] | None] | None = None

    def request_stop(self) -> None:
        self.stop_requested = True
        if self.session is not None and self.started:
            self.session.request_stop()


class TurnHost(Generic[M]):
    """See the module docstring. ``approver`` and ``ask_user`` reach the person (the worker's
    broker); ``on_subagent(event)`` reports the subagents, whose events no request waits for."""

    def __init__(
        self,
        store_of: Callable[[], RuntimeStore],
        present: Callable[[ConversationMessage], M],
        *,
        approver: Approver,
        ask_user: Callable[[str], AskUser],
        on_subagent: Callable[[SubagentEvent], None],
        provider_factory: ProviderFactory | None = None,
        settings_store: Callable[[], SettingsStore] = SettingsStore,
    ):
        self._store_of = store_of
        self._present = present
        self._ask_user = ask_user
        self._on_subagent = on_subagent
        self._provider_factory = provider_factory or default_provider
        self._settings_store = settings_store
        self._projects: dict[str, ProjectInfo] = {}
        self._turns: dict[str, _Turn[M]] = {}
        self._demo: LocalServer | None = None
        self._subagents: SubagentManager | None = None  # made at the first turn (reading the types is disk work)
        #: conversation id -> project id, for reports about a conversation no turn runs in.
        self._conversation_projects: dict[str, str] = {}
        #: session id -> (text, reasoning) a running subagent has streamed of its current answer.
        self._child_streams: dict[str, tuple[list[str], list[str]]] = {}
        #: One gate for the session: "allow for this conversation" holds across its turns.
        self._gate = ApprovalGate(approver, persist_always=self._persist_always)
        #: The session's MCP servers: started by the first turn that needs their tools, stopped at quit.
        self.mcp = McpManager()

    def add_project(self, project: ProjectInfo) -> None:
        self._projects[project.id] = project

    def project(self, project_id: str) -> ProjectInfo:
        try:
            return self._projects[project_id]
        except KeyError:
            raise CrewAgentError(f"The project {project_id!r} is not open.") from None

    @property
    def running(self) -> frozenset[str]:
        return frozenset(self._turns)

    def stop(self, conversation_id: str) -> None:
        turn = self._turns.get(conversation_id)
        if turn is not None:
            turn.request_stop()

    def stop_all(self) -> None:
        for turn in self._turns.values():
            turn.request_stop()

    # -- opening ----------------------------------------------------------------------------------

    async def open(self, project_id: str, conversation_id: str) -> AsyncGenerator[Opened[M], None]:
        """A long conversation's newest page (when no turn runs in it), then the whole of it, recovered,
        with the context its next call would carry (``Opened.usage``: when no turn runs)."""
        store, project = self._store_of(), self.project(project_id)
        window: tuple[Settings, ContextWindow] | None = None
        if conversation_id not in self._turns:
            first = await asyncio.to_thread(self._first_page, store, project.id, conversation_id)
            if first:
                yield Opened(first, complete=False)
                await asyncio.sleep(FIRST_PAGE_HEAD_START_S)
            # The settings and the window of the context meter (after the head start: starting the
            # demo provider holds the GIL a while, and the first page's paint comes first).
            window = await self._usage_window()
        loaded, problems, usage = await asyncio.to_thread(self._recovered, store, project, conversation_id, window)
        metas = await asyncio.to_thread(_child_metas, store, project.id, conversation_id, conversation_id)
        self._conversation_projects[conversation_id] = project_id
        # Merge with a turn running here: nothing happens on the loop between these lines and the
        # caller's report of this item, so every event after it reaches the caller after the snapshot.
        turn = self._turns.get(conversation_id)
        yield self._snapshot(loaded, problems, turn, metas, usage if turn is None else None)

    def _first_page(self, store: RuntimeStore, project_id: str, conversation_id: str) -> tuple[M, ...]:
        newest = store.load_newest(project_id, conversation_id, FIRST_PAGE)
        if len(newest) < FIRST_PAGE:
            return ()
        newest = current_branch(newest, partial=True)  # an edit's old branch is not shown
        # A result whose call is above the page would show as a part of its own: start after it.
        start = next((n for n, message in enumerate(newest) if message.role != "tool"), len(newest))
        return tuple(self._present(message) for message in newest[start:])

    def _recovered(
        self, store: RuntimeStore, project: ProjectInfo, conversation_id: str, window: tuple[Settings, ContextWindow] | None
    ) -> tuple[list[M], list[str], dict[str, Any] | None]:
        """The conversation recovered and presented, and (with ``window``) its next call's context
        debug, from one load: at 10^5 messages a second load for the context meter, made while the
        timeline held the first, took the window's process from ~450 to ~730 MB (docs/benchmarks.md)."""
        result = recover_and_load(store, project, conversation_id)
        problems = [f"line {problem.line}: {problem.reason}" for problem in result.problems]
        messages, usage = result.messages, None
        del result
        if window is not None:
            try:
                usage = next_call_usage(store, project, conversation_id, settings=window[0], window=window[1], messages=messages)
            except (CrewAgentError, OSError) as exc:  # the meter stays as it was; the conversation shows
                log.info("no context usage for %s on open: %s", conversation_id, exc)
        return self._present_all(messages), problems, usage

    def _present_all(self, messages: list[ConversationMessage]) -> list[M]:
        """The current branch of ``messages`` presented, each message let go as soon as its presented
        form exists (``messages`` is emptied): the two forms of a long conversation are never both
        whole in memory, and the presented one shares the stored one's texts."""
        shown: list[Any] = current_branch(messages)
        messages.clear()
        present = self._present
        for index, message in enumerate(shown):
            shown[index] = present(message)
        return shown

    def _snapshot(
        self, messages: list[M], problems: list[str], turn: _Turn[M] | None, metas: list[SidechainMeta], usage: Mapping[str, Any] | None = None
    ) -> Opened[M]:
        if turn is not None:
            known = {getattr(message, "id", None) for message in messages}
            messages = messages + [m for m in turn.persisted if getattr(m, "id", None) not in known]
        return Opened(
            messages=tuple(messages),
            problems=tuple(problems),
            running=turn is not None,
            streaming=turn is not None and turn.streaming,
            streaming_text="".join(turn.text) if turn is not None else "",
            streaming_reasoning="".join(turn.reasoning) if turn is not None else "",
            subagents=self._live_metas(metas),
            usage=usage,
        )

    # -- turns --------------------------------------------------------------------------------------

    async def send(
        self, project_id: str, conversation_id: str, text: str, mode: str, images: Sequence[bytes] = ()
    ) -> AsyncGenerator[HostItem, None]:
        """Route ``text`` typed in ``mode``: a global command, the agent's menu, or a turn.

        ``images`` (attached in the composer) are stored under the conversation's attachments
        folder and the user message names them (core/attachments.py); never with a command.
        """
        store = self._store_of()
        if mode not in MODES:
            raise CrewAgentError(f"Unknown mode {mode!r}.")
        command = global_command(text)
        if images and command is not None:
            raise CrewAgentError(texts.IMAGES_WITH_COMMAND)
        if command in ("stop", "pause"):
            self.stop(conversation_id)  # now, not after the routing
        if conversation_id in self._turns and command is None:
            raise CrewAgentError(BUSY)
        routed = await asyncio.to_thread(route_input, store, self.project(project_id), conversation_id, text, cast(Mode, mode))
        if isinstance(routed, RunTurn):
            if routed.mode != mode:  # a run started, or /resume: the conversation changed mode
                yield await self._summary(store, project_id, conversation_id)
            content: str | list[dict[str, Any]] = routed.text
            if images:
                content = await asyncio.to_thread(_with_images, store, project_id, conversation_id, routed.text, images)
            async with aclosing(self._turn(store, project_id, conversation_id, content, routed.mode)) as items:
                async for item in items:
                    yield item
        elif images:
            raise CrewAgentError(texts.IMAGES_WITH_COMMAND)
        elif isinstance(routed, ShowAgentMenu):
            yield MenuShown(conversation_id, routed)
        else:
            yield await self._summary(store, project_id, conversation_id)
            yield CommandHandled(conversation_id, routed)

    async def retry(self, project_id: str, conversation_id: str, mode: str) -> AsyncGenerator[HostItem, None]:
        """Run the failed last turn again: no new user message; the request leaves the failed
        attempt out (see the context builder), so the model answers the user's message afresh."""
        store = self._store_of()
        self.project(project_id)
        result = await asyncio.to_thread(store.load_messages, project_id, conversation_id)
        if not any(m.role == "user" and (m.text.strip() or count_images(m.content)) for m in result.messages):
            raise CrewAgentError("There is no message to send again in this conversation.")
        async with aclosing(self._turn(store, project_id, conversation_id, None, mode)) as items:
            async for item in items:
                yield item

    async def edit(self, project_id: str, conversation_id: str, message_id: str, text: str, mode: str) -> AsyncGenerator[HostItem, None]:
        """Send ``text`` in place of the user's message ``message_id``: a new branch, the old one
        kept in the log (core/message_actions.py)."""
        async with aclosing(self._branch(project_id, conversation_id, mode, lambda ms: edit_turn(ms, message_id, text))) as items:
            async for item in items:
                yield item

    async def regenerate(self, project_id: str, conversation_id: str, mode: str) -> AsyncGenerator[HostItem, None]:
        """Answer the last question again, the new answer in place of the last one (the old one kept in the log)."""
        async with aclosing(self._branch(project_id, conversation_id, mode, regenerate_turn)) as items:
            async for item in items:
                yield item

    async def _branch(
        self, project_id: str, conversation_id: str, mode: str, plan: Callable[[list[ConversationMessage]], BranchTurn]
    ) -> AsyncGenerator[HostItem, None]:
        store = self._store_of()
        self.project(project_id)
        if conversation_id in self._turns:
            raise CrewAgentError(BUSY)
        result = await asyncio.to_thread(store.load_messages, project_id, conversation_id)
        branch = plan(result.messages)  # CrewAgentError: nothing was written
        async with aclosing(self._turn(store, project_id, conversation_id, branch.text, mode, branch.replaces)) as items:
            async for item in items:
                yield item

    async def _turn(
        self,
        store: RuntimeStore,
        project_id: str,
        conversation_id: str,
        text: str | list[dict[str, Any]] | None,
        mode: str,
        replaces: str | None = None,
    ) -> AsyncGenerator[HostItem, None]:
        if conversation_id in self._turns:
            raise CrewAgentError(BUSY)
        if mode not in MODES:
            raise CrewAgentError(f"Unknown mode {mode!r}.")
        turn: _Turn[M] = _Turn(project_id, conversation_id)
        self._turns[conversation_id] = turn
        yield TurnBegan(conversation_id, mode)
        try:
            try:
                async with aclosing(self._run(store, turn, text, cast(Mode, mode), replaces)) as items:
                    async for item in items:
                        yield item
            except CrewAgentError as exc:
                yield TurnFailed(conversation_id, str(exc))
                if turn.outcome is None:
                    turn.outcome = ("error", {"code": type(exc).__name__, "message": str(exc)})
            finally:
                # The session has released the conversation (its turn lock) by now.
                del self._turns[conversation_id]
        except GeneratorExit:
            raise  # the caller closed this generator: it reports nothing more
        except BaseException:
            # A bug (the caller's task reports it) or a cancellation: the turn still ends, once.
            for item in self._ended(turn):
                yield item
            raise
        for item in self._ended(turn):
            yield item
        yield await self._summary(store, project_id, conversation_id)

    @staticmethod
    def _ended(turn: _Turn[M]) -> list[HostItem]:
        reason, error = turn.outcome or ("error", {"code": "INTERNAL", "message": "The turn ended unexpectedly."})
        ended: list[HostItem] = [StreamEnded(turn.conversation_id)] if turn.streaming else []
        turn.streaming = False
        return [*ended, TurnEnded(turn.conversation_id, reason, error)]

    async def _run(
        self, store: RuntimeStore, turn: _Turn[M], text: str | list[dict[str, Any]] | None, mode: Mode, replaces: str | None = None
    ) -> AsyncGenerator[HostItem, None]:
        """The turn itself, through the core entry point, until the session has closed."""
        project = self.project(turn.project_id)
        settings_store = self._settings_store()
        settings = await asyncio.to_thread(settings_store.load)
        config = await self._config(settings)
        yield ProviderChanged(settings, config)
        self._conversation_projects[turn.conversation_id] = project.id
        # The "always" grants are the settings' as they are now (the user may have edited them).
        self._gate.set_always_allowed(settings.tools.alwaysAllow)
        hooks = TurnHooks(
            approval=self._gate,
            ask_user=self._ask_user(turn.conversation_id),
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
            mcp=self.mcp,
            replaces=replaces,
        )
        async with aclosing(events) as stream:
            async for event in stream:
                for item in self._track(turn, event):
                    yield item

    def _track(self, turn: _Turn[M], event: LoopEvent) -> list[HostItem]:
        """What one loop event changes in the turn, and the items it reports."""
        cid = turn.conversation_id
        ended = [StreamEnded(cid)] if turn.streaming else []
        if isinstance(event, TurnStarted):
            turn.started = True
            if turn.stop_requested and turn.session is not None:
                turn.session.request_stop()  # Stop pressed before the session could take it
            return []
        if isinstance(event, StreamStarted):
            turn.streaming, turn.text, turn.reasoning = True, [], []
        elif isinstance(event, TextDelta):
            turn.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            turn.reasoning.append(event.text)
        elif isinstance(event, MessagePersisted):
            message = self._present(event.message)
            turn.persisted.append(message)
            if event.message.role != "assistant":
                ended = []
            turn.streaming = turn.streaming and not ended
            return [*ended, TurnProgress(cid, event, message)]
        elif isinstance(event, TurnFinished):
            turn.streaming = False
            turn.outcome = (event.reason, event.error)
            return list(ended)
        return [TurnProgress(cid, event)]

    # -- workflow runs (the Workflow header) --------------------------------------------------

    async def runs(self, project_id: str, conversation_id: str) -> RunsListed:
        """The runs started in the conversation, with their phase as it is now."""
        return await asyncio.to_thread(_runs_listed, self._store_of(), self.project(project_id), conversation_id)

    def start_run(self, project_id: str, conversation_id: str, package_id: str, workflow_id: str) -> AsyncGenerator[HostItem, None]:
        """Start a run of the package's workflow here (Run mode from now on) and run its first turn."""

        def prepare(store: RuntimeStore, project: ProjectInfo) -> None:
            begin_run(store, project, conversation_id, package_store(store.data_dir).get(package_id), workflow_id)

        return self._run_request(project_id, conversation_id, prepare, START_TEXT)

    def resume_run(self, project_id: str, conversation_id: str, run_id: str) -> AsyncGenerator[HostItem, None]:
        """Make a run that is not complete the conversation's active run, and continue it."""

        def prepare(store: RuntimeStore, project: ProjectInfo) -> None:
            select_run(store, project, conversation_id, run_id, package_store(store.data_dir))

        return self._run_request(project_id, conversation_id, prepare, RESUME_COMMAND)

    async def _run_request(
        self, project_id: str, conversation_id: str, prepare: Callable[[RuntimeStore, ProjectInfo], None], text: str
    ) -> AsyncGenerator[HostItem, None]:
        store, project = self._store_of(), self.project(project_id)
        if conversation_id in self._turns:
            raise CrewAgentError(BUSY)
        await asyncio.to_thread(prepare, store, project)  # CrewAgentError: nothing was started
        yield await self._summary(store, project_id, conversation_id)
        yield await asyncio.to_thread(_runs_listed, store, project, conversation_id)
        async with aclosing(self.send(project_id, conversation_id, text, "run")) as items:
            async for item in items:
                yield item

    # -- provider, conversation settings, outputs ------------------------------------------------

    async def _config(self, settings: Settings) -> ProviderConfig:
        demo_url = None
        if settings.llm.provider == "demo":
            if self._demo is None:
                self._demo = await asyncio.to_thread(start_demo_server)
            demo_url = self._demo.base_url
        return await asyncio.to_thread(self._provider_factory, settings, demo_url)

    async def context_usage(self, project_id: str, conversation_id: str) -> dict[str, Any]:
        """The debug (``usage`` and the rest) of the context the conversation's next call would carry."""
        store, project = self._store_of(), self.project(project_id)
        settings, window = await self._window()
        return await asyncio.to_thread(next_call_usage, store, project, conversation_id, settings=settings, window=window)

    async def _window(self) -> tuple[Settings, ContextWindow]:
        """The settings and the context window the next call would use (CrewAgentError: the settings cannot be read)."""
        settings_store = self._settings_store()
        settings = await asyncio.to_thread(settings_store.load)
        try:
            config = await self._config(settings)
            window = await asyncio.to_thread(context_window, settings, config, config_dir=settings_store.dir)
        except CrewAgentError:
            window = await asyncio.to_thread(settings_window, settings, config_dir=settings_store.dir)
        return settings, window

    async def _usage_window(self) -> tuple[Settings, ContextWindow] | None:
        """:meth:`_window` for the context meter of an open: None (logged) when it cannot be read."""
        try:
            return await self._window()
        except CrewAgentError as exc:
            log.info("no context window for the meter: %s", exc)
            return None

    async def describe_provider(self) -> ProviderChanged:
        """The provider the next turn uses (CrewAgentError when the settings cannot be read)."""
        settings = await asyncio.to_thread(self._settings_store().load)
        try:
            return ProviderChanged(settings, await self._config(settings))
        except CrewAgentError as exc:
            return ProviderChanged(settings, None, str(exc))

    async def title(self, project_id: str, conversation_id: str) -> ConversationChanged:
        """Name the conversation from its first exchange (core/titles.py); its entry afterwards."""
        store = self._store_of()
        self.project(project_id)

        async def config() -> ProviderConfig:
            return await self._config(await asyncio.to_thread(self._settings_store().load))

        return ConversationChanged(project_id, await generate_title(store, project_id, conversation_id, config))

    async def set_mode(self, project_id: str, conversation_id: str, mode: str) -> ConversationChanged:
        if mode not in MODES:
            raise ValueError(f"Unknown mode {mode!r}; expected one of {MODES}")
        meta = await asyncio.to_thread(self._store_of().update_conversation, project_id, conversation_id, activeType=mode)
        return ConversationChanged(project_id, meta)

    async def set_agent(self, project_id: str, conversation_id: str, agent_id: str) -> ConversationChanged:
        store = self._store_of()
        if await asyncio.to_thread(agent_catalog.find, store.data_dir, agent_id) is None:
            raise CrewAgentError(f"There is no agent {agent_id!r}; pick one of the list.")
        meta = await asyncio.to_thread(store.update_conversation, project_id, conversation_id, agentId=agent_id)
        return ConversationChanged(project_id, meta)

    async def full_output(self, project_id: str, conversation_id: str, message_id: str) -> str:
        return await asyncio.to_thread(_read_full_output, self._store_of(), project_id, conversation_id, message_id)

    async def _summary(self, store: RuntimeStore, project_id: str, conversation_id: str) -> ConversationChanged:
        return ConversationChanged(project_id, await asyncio.to_thread(store.get_conversation, project_id, conversation_id))

    async def notice_summary(self, conversation_id: str) -> ConversationChanged | None:
        """After a background subagent's notice: the conversation's summary, unless a turn runs
        there (it reports its summary itself) or it was never opened."""
        project_id = self._conversation_projects.get(conversation_id)
        if project_id is None or conversation_id in self._turns:
            return None
        try:
            return await self._summary(self._store_of(), project_id, conversation_id)
        except CrewAgentError as exc:
            log.info("no summary for %s: %s", conversation_id, exc)
            return None

    def _persist_always(self, tool: str) -> None:
        """Remember "allow always" in the settings file (blocking; the gate runs it in a thread)."""
        settings_store = self._settings_store()
        allowed = sorted({*settings_store.load().tools.alwaysAllow, tool})
        settings_store.update(tools={"alwaysAllow": allowed})

    # -- subagents --------------------------------------------------------------------------------

    async def _manager(self) -> SubagentManager:
        if self._subagents is None:
            types = await asyncio.to_thread(SubagentTypes)
            if self._subagents is None:  # another turn may have made it meanwhile
                self._subagents = SubagentManager(types)
                self._subagents.add_listener(self._relay)
        return self._subagents

    def _relay(self, event: SubagentEvent) -> None:
        """Keep what a running child has streamed (for its tab opened mid-answer), then pass it on."""
        if isinstance(event, SubagentStatusChanged) and event.status != "running":
            self._child_streams.pop(event.session_id, None)
        elif isinstance(event, SubagentActivity):
            sid, inner = event.session_id, event.event
            if isinstance(inner, StreamStarted):
                self._child_streams[sid] = ([], [])
            elif isinstance(inner, TextDelta):
                self._child_streams.setdefault(sid, ([], []))[0].append(inner.text)
            elif isinstance(inner, ReasoningDelta):
                self._child_streams.setdefault(sid, ([], []))[1].append(inner.text)
            elif isinstance(inner, TurnFinished) or (isinstance(inner, MessagePersisted) and inner.message.role == "assistant"):
                self._child_streams.pop(sid, None)
        self._on_subagent(event)

    def _live_metas(self, metas: list[SidechainMeta]) -> tuple[SidechainMeta, ...]:
        """The children's metas: a live child's as its run holds it, the others' as stored."""
        manager = self._subagents
        runs = [manager.live(meta.sessionId) if manager is not None else None for meta in metas]
        return tuple(run.meta if run is not None else meta for run, meta in zip(runs, metas))

    async def open_subagent(self, project_id: str, conversation_id: str, session_id: str) -> SubagentSnapshot[M]:
        self.project(project_id)
        meta, messages, problems, children = await asyncio.to_thread(self._load_sidechain, project_id, conversation_id, session_id)
        # As in open: nothing runs on the loop between here and the caller's report, so every
        # message the child stores after this snapshot reaches its tab after it (a repeat is merged by id).
        run = self._subagents.live(session_id) if self._subagents is not None else None
        if run is not None:
            meta = run.meta
            known = {getattr(message, "id", None) for message in messages}
            messages += [self._present(m) for m in run.messages if m.id not in known]
        running = parent_status(meta.status) == "running"
        stream = self._child_streams.get(session_id) if running else None
        opened = Opened(
            messages=tuple(messages),
            problems=tuple(problems),
            running=running,
            streaming=stream is not None,
            streaming_text="".join(stream[0]) if stream is not None else "",
            streaming_reasoning="".join(stream[1]) if stream is not None else "",
            subagents=self._live_metas(children),
        )
        return SubagentSnapshot(meta, opened)

    def _load_sidechain(
        self, project_id: str, conversation_id: str, session_id: str
    ) -> tuple[SidechainMeta, list[M], list[str], list[SidechainMeta]]:
        chains = self._store_of().sidechains(project_id, conversation_id)
        meta = chains.read_meta(session_id)
        result = chains.load(session_id)
        problems = [f"line {problem.line}: {problem.reason}" for problem in result.problems]
        children = [m for m in chains.metas() if m.parentSessionId == session_id]
        return meta, [self._present(m) for m in result.messages], problems, children

    async def cancel_subagent(self, session_id: str) -> None:
        if self._subagents is not None:
            await self._subagents.cancel(session_id, texts.STOP_BY_USER)

    # -- shutdown ---------------------------------------------------------------------------------

    async def shutdown_subagents(self, timeout: float) -> bool:
        """Cancel every running subagent (background ones too) and wait up to ``timeout`` s for
        their ends; False when they did not all end in time."""
        if self._subagents is None:
            return True
        try:
            await asyncio.wait_for(self._subagents.shutdown(), timeout)
        except TimeoutError:
            log.warning("subagents did not stop within %.1f s", timeout)
            return False
        return True

    async def shutdown_mcp(self, timeout: float) -> bool:
        """Stop every MCP server (their process groups) within ``timeout`` s; False when they did not all stop."""
        try:
            await asyncio.wait_for(self.mcp.aclose(), timeout)
        except TimeoutError:
            log.warning("MCP servers did not stop within %.1f s", timeout)
            return False
        return True

    def close(self) -> None:
        """Stop the demo server (after the loop has stopped)."""
        if self._demo is not None:
            self._demo.stop()
            self._demo = None


# -- blocking helpers (run in asyncio.to_thread) ----------------------------------------------------


def _child_metas(store: RuntimeStore, project_id: str, conversation_id: str, parent_session_id: str) -> list[SidechainMeta]:
    """The metas of the subagents ``parent_session_id`` started (the conversation, or a subagent)."""
    metas = store.sidechains(project_id, conversation_id).metas()
    return [meta for meta in metas if meta.parentSessionId == parent_session_id]


def _runs_listed(store: RuntimeStore, project: ProjectInfo, conversation_id: str) -> RunsListed:
    meta = store.get_conversation(project.id, conversation_id)
    runs = conversation_runs(store, project, conversation_id, package_store(store.data_dir))
    return RunsListed(project.id, conversation_id, meta.activeRunId, runs)


def _read_full_output(store: RuntimeStore, project_id: str, conversation_id: str, message_id: str) -> str:
    for message in store.load_messages(project_id, conversation_id).messages:
        if message.id == message_id:
            return store.read_full_output(project_id, message)
    raise CrewAgentError("That tool result is no longer in the conversation.")


def _with_images(store: RuntimeStore, project_id: str, conversation_id: str, text: str, images: Sequence[bytes]) -> list[dict[str, Any]]:
    """Store the attached images (blocking) and give the user message's list content naming them."""
    state = store.state_dir(project_id)
    references = [store_image(state, conversation_id, data) for data in images]
    content = user_content(text, references)
    assert isinstance(content, list)
    return content
