"""One subagent run: its own tool loop, its own system prompt, every step written to its sidechain.

The child's loop is the same :class:`ToolLoop` a conversation uses, wired to the sidechain
instead of the main log, so the same rules hold: results in call order, a streaming checkpoint,
Stop answers running calls with ``TOOL_INTERRUPTED``. A child that is stopped (or whose parent
is) ends its log with a ``SUBAGENT_CANCELLED`` marker, an assistant error part that keeps the
log valid and tells a reader why it ends there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crewagent.core import texts
from crewagent.core.context import ContextBudget, ContextResult, TokenCounter, build_llm_messages
from crewagent.core.context.window import ContextWindow
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import LlmAdapter
from crewagent.core.loop.events import LoopEvent, MessagePersisted, ToolCallStarted, TurnFinished
from crewagent.core.loop.toolloop import LoopOptions, ToolLoop
from crewagent.core.messages import ConversationMessage, utc_now_iso
from crewagent.core.settings import Settings
from crewagent.core.store.sidechain import SidechainMeta, Sidechains
from crewagent.core.subagents.links import shorten
from crewagent.core.subagents.recovery import marker_message
from crewagent.core.subagents.types import SubagentType
from crewagent.core.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

CANCELLED_CODE = "SUBAGENT_CANCELLED"


@dataclass(frozen=True)
class ChildSettings:
    """The limits a child's loop runs under (the caller's, from settings)."""

    max_turns: int = 50
    budget: ContextBudget = field(default_factory=ContextBudget)
    merge_system: bool = False
    counter: TokenCounter | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, window: ContextWindow | None = None) -> ChildSettings:
        """``window``: the parent's (children use its model), else resolved from ``llm.model``."""
        return cls(
            max_turns=settings.engine.maxTurns,
            budget=ContextBudget.from_settings(settings.llm.model_dump(), window=window),
            merge_system=settings.llm.mergeSystemMessages,
        )


def subagent_block(meta: SidechainMeta, max_depth: int) -> str:
    """The system block that tells the child what it is (also the marker tests route requests by)."""
    return "\n".join(
        [
            "SUBAGENT",
            f"- session: {meta.sessionId}",
            f"- type: {meta.type}",
            f"- description: {meta.description}",
            f"- depth: {meta.depth} of at most {max_depth}",
            "- You work for another agent, not for the user directly, and nobody can answer questions: "
            "do the task with your tools, then give one final answer. That final answer is all your caller "
            "sees, so make it complete on its own (findings, exact paths, what is left undone).",
        ]
    )


def final_answer(messages: list[ConversationMessage]) -> ConversationMessage | None:
    """The child's answer: its last assistant message that is neither a tool request nor an error."""
    for message in reversed(messages):
        if message.role == "assistant" and not message.tool_calls and message.partType != "error":
            return message
    return None


Emit = Callable[[LoopEvent], None]


class ChildRun:
    """A running (or finished) child; :meth:`run` drives it, :meth:`request_stop` stops it."""

    def __init__(
        self,
        *,
        meta: SidechainMeta,
        chains: Sidechains,
        adapter: LlmAdapter,
        registry: ToolRegistry,
        tool_context: ToolContext,
        subagent_type: SubagentType,
        settings: ChildSettings,
        max_depth: int,
        emit: Emit,
        annotate: Callable[[ConversationMessage], ConversationMessage],
    ):
        self.meta = meta
        self.chains = chains
        self.adapter = adapter
        self.registry = registry
        self.tool_context = tool_context
        self.subagent_type = subagent_type
        self.settings = settings
        self.max_depth = max_depth
        self._emit = emit
        self._annotate = annotate
        self.messages: list[ConversationMessage] = []
        self.answer: str | None = None
        self.steps = 0
        self.tool_calls = 0
        self.last_tool: str | None = None
        self.stop_reason: str | None = None
        self._loop: ToolLoop | None = None
        self.task: asyncio.Task[SidechainMeta] | None = None

    @property
    def session_id(self) -> str:
        return self.meta.sessionId

    @property
    def done(self) -> bool:
        return self.meta.status != "running"

    def request_stop(self, reason: str) -> None:
        """Stop the child's loop (its stream is aborted, its tools cancelled); idempotent."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self._loop is not None:
            self._loop.request_stop()

    # -- persistence -------------------------------------------------------------------------

    async def _append(self, message: ConversationMessage) -> ConversationMessage:
        stored = await asyncio.to_thread(self.chains.append, self.meta, self._annotate(message))
        self.messages.append(stored)
        return stored

    async def _checkpoint(self, data: dict[str, Any] | None) -> None:
        if data is None:
            await asyncio.to_thread(self.chains.clear_checkpoint, self.session_id)
        else:
            await asyncio.to_thread(self.chains.save_checkpoint, self.session_id, data)

    async def _build(self) -> tuple[ContextResult, list[ConversationMessage]]:
        result = build_llm_messages(
            self.messages,
            mode="agent",
            budget=self.settings.budget,
            persona=self.subagent_type.prompt,
            extra_system=(subagent_block(self.meta, self.max_depth),),
            merge_system=self.settings.merge_system,
            counter=self.settings.counter,
        )
        return result, []

    # -- the run ---------------------------------------------------------------------------

    async def run(self, prompt: str) -> SidechainMeta:
        """Run the child to its end and return its final meta (the caller holds its lock)."""
        finished: TurnFinished | None = None
        failure: dict[str, Any] | None = None
        try:
            first = await self._append(ConversationMessage.new("user", prompt, mode="agent"))
            self._emit(MessagePersisted(first))
            self._loop = ToolLoop(
                adapter=self.adapter,
                registry=self.registry,
                tool_context=self.tool_context,
                build_context=self._build,
                on_assistant_message=self._append,
                on_tool_message=self._append,
                checkpoint=self._checkpoint,
                issued_call_ids=lambda: (call.id for m in self.messages for call in m.tool_calls or ()),
                options=LoopOptions(mode="agent", max_turns=self.settings.max_turns),
            )
            if self.stop_reason is not None:
                self._loop.request_stop()
            async for event in self._loop.run():
                if isinstance(event, ToolCallStarted):
                    self.tool_calls += 1
                    self.last_tool = event.name
                elif isinstance(event, MessagePersisted) and event.message.role == "assistant":
                    self.steps += 1
                elif isinstance(event, TurnFinished):
                    finished = event
                self._emit(event)
        except asyncio.CancelledError:
            # A hard cancel (the task itself, not Stop): record it, then let it propagate.
            await self._finish(None, None, cancelled_hard=True)
            raise
        except CrewAgentError as exc:  # the sidechain could not be written (disk full, deleted)
            log.warning("subagent %s failed: %s", self.session_id, exc)
            failure = {"code": type(exc).__name__, "message": str(exc)}
        finally:
            self._loop = None
        return await self._finish(finished, failure)

    async def _finish(self, finished: TurnFinished | None, failure: dict[str, Any] | None, *, cancelled_hard: bool = False) -> SidechainMeta:
        changes: dict[str, Any] = {"finishedAt": utc_now_iso(), "steps": self.steps, "toolCalls": self.tool_calls}
        if finished is not None and finished.reason == "completed":
            answer = final_answer(self.messages)
            self.answer = answer.text if answer is not None else ""
            changes.update(status="completed", summary=shorten(self.answer)[0], answerMessageId=answer.id if answer else None)
        elif failure is None and (cancelled_hard or finished is None or finished.reason == "stopped"):
            message = texts.SUBAGENT_CANCELLED.format(reason=self.stop_reason or texts.STOP_CANCELLED)
            changes.update(status="cancelled", summary=message, error={"code": CANCELLED_CODE, "message": message})
            try:
                marker = await asyncio.shield(self._append(marker_message(CANCELLED_CODE, message)))
                self._emit(MessagePersisted(marker))
            except CrewAgentError as exc:
                log.warning("could not mark subagent %s as cancelled: %s", self.session_id, exc)
        else:
            error = failure or (finished.error if finished is not None else None) or {}
            message = str(error.get("message") or texts.SUBAGENT_FAILED)
            code = str(error.get("code") or "SUBAGENT_FAILED")
            changes.update(status="failed", summary=shorten(f"{code}: {message}")[0], error={"code": code, "message": message})
        try:
            self.meta = await asyncio.shield(asyncio.to_thread(self.chains.update_meta, self.session_id, **changes))
        except CrewAgentError as exc:
            log.warning("could not update the meta of subagent %s: %s", self.session_id, exc)
            self.meta = self.meta.model_copy(update=changes)
        return self.meta
