"""SubagentManager: starts, tracks, stops and reports the subagents of one app or CLI run.

Create one per run (it owns the background children: ``await manager.shutdown()`` on exit),
register its tools, and bind each session's tool context to it::

    manager = SubagentManager()
    manager.register_tools(registry)
    ctx = manager.bind(ctx, store=store, project=project, conversation_id=cid, adapter=adapter, registry=registry)
    session = ConversationSession(store, project, cid, adapter=adapter, registry=registry, tool_context=ctx)

Limits: a Task call beyond ``max_depth`` (default 2: a child may start a grandchild, a
grandchild may not) fails with ``E_SUBAGENT_DEPTH``; more than ``max_concurrent`` running
children of one parent session with ``E_SUBAGENT_LIMIT``; an unknown type with
``E_SUBAGENT_TYPE``. A child's tools are its parent's, tightened by its type (never wider),
without ``ui.*`` (nobody can answer a child's question).

Foreground: the Task call waits for the child. When the parent is stopped the Task handler is
cancelled; it stops the child, waits for it to write its interrupted parts, and re-raises, so the
parent loop answers the call with ``TOOL_INTERRUPTED`` (with the link fields, via
:meth:`annotate`). Background (top level only: a child that finished could never hear of its
own background grandchild): the Task call returns at once with status ``running``; the child
uses its own adapter (the parent's may close with its turn), and its end is announced by a
notice appended to the conversation when no turn runs (see ``recovery.deliver_notices``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from crewagent.core import texts
from crewagent.core.errors import ConversationNotFound, CrewAgentError
from crewagent.core.llm import LlmAdapter
from crewagent.core.loop.events import LoopEvent
from crewagent.core.messages import ConversationMessage, utc_now_iso
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.checkpoint import ConversationBusy
from crewagent.core.store.sidechain import SidechainMeta, Sidechains, session_id_for
from crewagent.core.subagents.child import ChildRun, ChildSettings, final_answer
from crewagent.core.subagents.events import SubagentActivity, SubagentEvent, SubagentNotice
from crewagent.core.subagents.links import parent_fields, parent_status, status_event, task_result_payload
from crewagent.core.subagents.recovery import deliver_notices
from crewagent.core.subagents.scope import SubagentScope
from crewagent.core.subagents.tools import SessionArgs, StatusArgs, TaskArgs, no_scope, task_tools
from crewagent.core.subagents.types import SubagentType, SubagentTypes
from crewagent.core.tools import Tool, ToolContext, ToolPolicy, ToolRegistry, error, ok

log = logging.getLogger(__name__)

#: How deep subagents may nest: 1 = children only, 2 = children and grandchildren.
MAX_DEPTH = 2
#: Running children one parent session may have at once.
MAX_CONCURRENT_CHILDREN = 3

Listener = Callable[[SubagentEvent], None]


def child_policy(parent: ToolPolicy, registry: ToolRegistry, subagent_type: SubagentType) -> ToolPolicy:
    """The parent's policy, tightened by the type's limits and allow-list; never wider."""
    policy = parent.tighten(dict(subagent_type.tool_policy)) if subagent_type.tool_policy else parent
    off = {name for name in registry.names() if name.startswith("ui.")}
    if subagent_type.tools is not None:
        off |= {name for name in registry.names() if name not in subagent_type.tools}
    return policy.tighten({"disabled": sorted(off)})


class SubagentManager:
    """The lifetime owner of subagents (see the module docstring). Use it on one event loop."""

    def __init__(
        self,
        types: SubagentTypes | None = None,
        *,
        max_depth: int = MAX_DEPTH,
        max_concurrent: int = MAX_CONCURRENT_CHILDREN,
    ):
        self.types = types or SubagentTypes()
        self.max_depth = max_depth
        self.max_concurrent = max_concurrent
        self._runs: dict[str, ChildRun] = {}
        #: (parent session id, Task call id) → the child, until the parent's result is written.
        self._by_call: dict[tuple[str, str], ChildRun] = {}
        #: Children being created (their meta is written in a thread) per parent session: they count
        #: against the limit already, so parallel Task calls cannot all pass the check first.
        self._starting: dict[str, int] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._listeners: list[Listener] = []
        self._closed = False

    # -- wiring ----------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        return task_tools(self.types, task=self._task_tool, status=self._status_tool, result=self._result_tool)

    async def _task_tool(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        scope = ctx.subagents
        if not isinstance(scope, SubagentScope):
            return no_scope()
        return await self.run_task(scope, TaskArgs.model_validate(args), ctx)

    async def _status_tool(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        scope = ctx.subagents
        if not isinstance(scope, SubagentScope):
            return no_scope()
        return await self.status(scope, StatusArgs.model_validate(args).session_id)

    async def _result_tool(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        scope = ctx.subagents
        if not isinstance(scope, SubagentScope):
            return no_scope()
        return await self.result(scope, SessionArgs.model_validate(args).session_id)

    def register_tools(self, registry: ToolRegistry) -> ToolRegistry:
        """Add ``task``, ``task.status`` and ``task.result`` to ``registry`` (once)."""
        for tool in self.tools():
            if registry.get(tool.name) is None:
                registry.register(tool)
        return registry

    def bind(
        self,
        ctx: ToolContext,
        *,
        store: RuntimeStore,
        project: ProjectInfo,
        conversation_id: str,
        adapter: LlmAdapter,
        registry: ToolRegistry,
        settings: ChildSettings | None = None,
    ) -> ToolContext:
        """``ctx`` with the top-level scope of a conversation: its Task calls start children here."""
        scope = SubagentScope(
            manager=self,
            store=store,
            project=project,
            conversation_id=conversation_id,
            session_id=conversation_id,
            depth=0,
            adapter=adapter,
            registry=registry,
            settings=settings or ChildSettings(),
        )
        return dataclasses.replace(ctx, subagents=scope)

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every :mod:`~crewagent.core.subagents.events` event; returns the remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: SubagentEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a listener's bug must not break the child it listens to
                log.exception("subagent listener failed on %s", event.type)

    def _status_event(self, run: ChildRun) -> None:
        self._emit(status_event(run.meta))

    def announce_notices(self, conversation_id: str, messages: list[ConversationMessage]) -> None:
        for message in messages:
            self._emit(SubagentNotice(conversation_id, message.subagentSessionId or "", message))

    def annotate(self, parent_session_id: str, message: ConversationMessage) -> ConversationMessage:
        """A parent's Task result with its child's link fields; other messages unchanged."""
        if message.role != "tool" or not message.tool_call_id:
            return message
        run = self._by_call.pop((parent_session_id, message.tool_call_id), None)
        if run is None:
            return message
        return message.model_copy(update=parent_fields(run.meta))

    # -- the Task tool ---------------------------------------------------------------------

    async def run_task(self, scope: SubagentScope, args: TaskArgs, ctx: ToolContext) -> dict[str, Any]:
        """Start a child for a Task call; wait for it unless it runs in the background."""
        subagent_type = self.types.get(args.subagent_type)
        if subagent_type is None:
            return error("E_SUBAGENT_TYPE", texts.SUBAGENT_UNKNOWN_TYPE.format(type=args.subagent_type, types=", ".join(self.types.ids())))
        depth = scope.depth + 1
        if depth > self.max_depth:
            return error(
                "E_SUBAGENT_DEPTH",
                f"Subagents nest at most {self.max_depth} level(s) deep and this agent is at depth {scope.depth}: "
                "do this work yourself with your other tools.",
            )
        siblings = [run for run in self._runs.values() if run.meta.parentSessionId == scope.session_id and not run.done]
        busy = len(siblings) + self._starting.get(scope.session_id, 0)
        if busy >= self.max_concurrent:
            return error(
                "E_SUBAGENT_LIMIT",
                f"At most {self.max_concurrent} subagents may run at once for one caller and {busy} are running "
                f"({', '.join(run.session_id for run in siblings) or 'starting'}). Wait for one to finish, or do this yourself.",
            )
        if self._closed:
            return error("E_SUBAGENT_LIMIT", texts.SUBAGENT_SHUTTING_DOWN)
        self._starting[scope.session_id] = self._starting.get(scope.session_id, 0) + 1
        released = False

        def release() -> None:  # once the child is in _runs (or failed to start), it counts there
            nonlocal released
            if not released:
                released = True
                self._starting[scope.session_id] -= 1
                if not self._starting[scope.session_id]:
                    del self._starting[scope.session_id]

        try:
            return await self._start(scope, subagent_type, depth, args, ctx, release)
        finally:
            release()

    async def _start(
        self,
        scope: SubagentScope,
        subagent_type: SubagentType,
        depth: int,
        args: TaskArgs,
        ctx: ToolContext,
        started: Callable[[], None],
    ) -> dict[str, Any]:
        background = args.run_in_background and scope.is_root
        agent_id = uuid.uuid4().hex
        now = utc_now_iso()
        meta = SidechainMeta(
            sessionId=session_id_for(agent_id),
            agentId=agent_id,
            conversationId=scope.conversation_id,
            parentSessionId=scope.session_id,
            parentToolCallId=ctx.call_id or f"call_{agent_id}",
            type=subagent_type.id,
            depth=depth,
            model=scope.adapter.config.model,
            description=args.description,
            background=background,
            createdAt=now,
            updatedAt=now,
        )
        chains = scope.store.sidechains(scope.project.id, scope.conversation_id)
        # The lock is taken before the meta says "running": a recovery elsewhere never sees a
        # running child nobody holds. Held until the child ends; a process that dies releases it.
        lock = chains.lock(meta.sessionId)
        try:
            lock.__enter__()
        except OSError as exc:
            return error("E_SUBAGENT_STORE", texts.SUBAGENT_NOT_STARTED.format(detail=exc))
        try:
            await asyncio.to_thread(chains.create, meta)
        except BaseException as exc:  # a store failure is the model's to read; a cancel propagates
            lock.__exit__(None, None, None)
            if isinstance(exc, CrewAgentError):
                return error("E_SUBAGENT_STORE", texts.SUBAGENT_NOT_STARTED.format(detail=exc))
            raise
        adapter = LlmAdapter(scope.adapter.config) if background else scope.adapter
        run = self._new_run(scope, meta, subagent_type, ctx, adapter, chains)
        self._runs[meta.sessionId] = run
        started()
        self._by_call[(scope.session_id, meta.parentToolCallId)] = run
        self._status_event(run)
        task = asyncio.create_task(
            self._drive(scope, run, args.prompt, lock, adapter if background else None), name=f"subagent-{meta.sessionId}"
        )
        run.task = task
        if background:
            self._background.add(task)
            task.add_done_callback(self._background_done)
            return task_result_payload(meta, None)
        try:
            final = await asyncio.shield(task)
        except asyncio.CancelledError:
            # The parent was stopped: stop the child, let it write its interrupted parts, re-raise
            # so that the parent's loop answers this call (TOOL_INTERRUPTED, annotated).
            run.request_stop(texts.STOP_PARENT_STOPPED)
            await asyncio.wait({task})
            raise
        return task_result_payload(final, run.answer)

    def _new_run(
        self,
        scope: SubagentScope,
        meta: SidechainMeta,
        subagent_type: SubagentType,
        ctx: ToolContext,
        adapter: LlmAdapter,
        chains: Sidechains,
    ) -> ChildRun:
        child_scope = dataclasses.replace(scope, session_id=meta.sessionId, depth=meta.depth, adapter=adapter)
        child_ctx = dataclasses.replace(
            ctx,
            policy=child_policy(ctx.policy, scope.registry, subagent_type),
            ask_user=None,
            subagents=child_scope,
            call_id=None,
            cancel_event=threading.Event(),
        )
        def emit(event: LoopEvent) -> None:
            self._emit(SubagentActivity(meta.sessionId, meta.conversationId, meta.parentToolCallId, event))

        return ChildRun(
            meta=meta,
            chains=chains,
            adapter=adapter,
            registry=scope.registry,
            tool_context=child_ctx,
            subagent_type=subagent_type,
            settings=scope.settings,
            max_depth=self.max_depth,
            emit=emit,
            annotate=lambda m: self.annotate(meta.sessionId, m),
        )

    async def _drive(
        self, scope: SubagentScope, run: ChildRun, prompt: str, lock: Any, own_adapter: LlmAdapter | None
    ) -> SidechainMeta:
        try:
            return await run.run(prompt)
        finally:
            lock.__exit__(None, None, None)
            if own_adapter is not None:
                await asyncio.shield(own_adapter.aclose())
            self._runs.pop(run.session_id, None)
            self._status_event(run)
            if run.meta.background:
                self._deliver_if_idle(scope, run.meta)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("subagent task %s failed", task.get_name(), exc_info=task.exception())

    def _deliver_if_idle(self, scope: SubagentScope, meta: SidechainMeta) -> None:
        """Append the notice now if no turn runs in the parent conversation; else its session will.

        Synchronous on purpose (one short append on the event-loop thread): a session of this
        process takes the turn lock on this thread too, so the two can never interleave and a
        turn never finds its conversation busy because a notice is being written.
        """
        store, project_id = scope.store, scope.project.id
        try:
            with store.turn_lock(project_id, meta.conversationId):
                appended = deliver_notices(store, project_id, meta.conversationId)
        except ConversationBusy:
            return  # a turn runs: it delivers when it ends (or the next one when it starts)
        except CrewAgentError as exc:  # the conversation was deleted, or the disk refuses
            log.warning("notice of subagent %s not delivered: %s", meta.sessionId, exc)
            return
        self.announce_notices(meta.conversationId, appended)

    # -- status and results ----------------------------------------------------------------

    def live(self, session_id: str) -> ChildRun | None:
        return self._runs.get(session_id)

    def running(self, conversation_id: str | None = None) -> list[SidechainMeta]:
        return [run.meta for run in self._runs.values() if conversation_id in (None, run.meta.conversationId)]

    def _describe(self, meta: SidechainMeta) -> dict[str, Any]:
        info: dict[str, Any] = {
            "subagentSessionId": meta.sessionId,
            "type": meta.type,
            "description": meta.description,
            "status": parent_status(meta.status),
            "depth": meta.depth,
            "background": meta.background,
            "createdAt": meta.createdAt,
            "updatedAt": meta.updatedAt,
        }
        run = self._runs.get(meta.sessionId)
        if run is not None:
            info.update(steps=run.steps, toolCalls=run.tool_calls, lastTool=run.last_tool)
        else:
            info.update(steps=meta.steps, toolCalls=meta.toolCalls)
        if meta.summary:
            info["summary"] = meta.summary
        return info

    async def status(self, scope: SubagentScope, session_id: str | None) -> dict[str, Any]:
        """``task.status``: one subagent of this conversation, or all of them."""
        chains = scope.store.sidechains(scope.project.id, scope.conversation_id)
        if session_id is None:
            metas = await asyncio.to_thread(chains.metas)
            live = {run.session_id: run.meta for run in self._runs.values()}
            return ok(subagents=[self._describe(live.get(m.sessionId, m)) for m in metas])
        run = self._runs.get(session_id)
        if run is not None and run.meta.conversationId == scope.conversation_id:
            return ok(**self._describe(run.meta))
        try:
            meta = await asyncio.to_thread(chains.read_meta, session_id)
        except (ConversationNotFound, CrewAgentError):
            return error("ENOENT", f"No subagent {session_id!r} in this conversation.")
        return ok(**self._describe(meta))

    async def result(self, scope: SubagentScope, session_id: str) -> dict[str, Any]:
        """``task.result``: the complete final answer of a finished subagent."""
        status = await self.status(scope, session_id)
        if status.get("ok") is not True or status.get("status") == "running":
            return status if status.get("ok") is not True else ok(**status, message="It is still running; try again later.")
        chains = scope.store.sidechains(scope.project.id, scope.conversation_id)
        try:
            meta = await asyncio.to_thread(chains.read_meta, session_id)
            messages = (await asyncio.to_thread(chains.load, session_id)).messages
        except (ConversationNotFound, CrewAgentError) as exc:
            return error("ENOENT", f"The log of subagent {session_id!r} cannot be read: {exc}")
        answer_id = meta.answerMessageId
        answer = next((m for m in messages if m.id == answer_id), None) if answer_id else None
        if answer is None and meta.status == "completed":
            answer = final_answer(messages)
        payload = task_result_payload(meta, answer.text if answer is not None else None)
        if payload.get("ok") is True and answer is not None:
            payload.pop("truncated", None)
            payload.pop("fullAnswer", None)
            payload["answer"] = answer.text
        return payload

    # -- stopping --------------------------------------------------------------------------

    async def cancel(self, session_id: str, reason: str = texts.STOP_CANCELLED) -> bool:
        """Stop a running child and wait until it has written its end; False if it was not running."""
        run = self._runs.get(session_id)
        if run is None or run.task is None:
            return False
        run.request_stop(reason)
        await asyncio.wait({run.task})
        return True

    async def wait_background(self) -> None:
        """Wait until every background child has ended (the CLI does this before it exits)."""
        while self._background:
            await asyncio.wait(set(self._background))

    async def shutdown(self) -> None:
        """Cancel every running child (the app or the CLI is closing) and wait for their ends."""
        self._closed = True
        runs = [run for run in self._runs.values() if run.task is not None]
        for run in runs:
            run.request_stop(texts.STOP_APP_SHUT_DOWN)
        tasks = {run.task for run in runs if run.task is not None}
        if tasks:
            await asyncio.wait(tasks)

