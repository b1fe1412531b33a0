"""Questions a running turn asks the user (tool approval, ``ui.ask_user``), answered across threads.

A question is a future on the turn's asyncio loop, keyed by a request id. The worker announces it
with a signal; the UI answers later through a worker slot, which resolves the future on the loop's
thread. A turn stopped while it waits cancels the future, and the UI is told to withdraw the
question.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from crewagent.core.tools import ApprovalDecision, ApprovalRequest
from crewagent.worker.turn_values import ARGUMENTS_PREVIEW_CHARS, ApprovalPrompt, AskUserPrompt, frozen_json, previewed_json, thawed_json


class PromptBroker:
    """Pending questions of every running turn. All methods but :meth:`answer` run on the loop."""

    def __init__(
        self,
        loop: Callable[[], asyncio.AbstractEventLoop | None],
        *,
        on_approval: Callable[[ApprovalPrompt], None],
        on_ask_user: Callable[[AskUserPrompt], None],
        on_withdrawn: Callable[[str], None],
    ):
        self._loop = loop
        self._on_approval = on_approval
        self._on_ask_user = on_ask_user
        self._on_withdrawn = on_withdrawn
        self._pending: dict[str, asyncio.Future[Any]] = {}

    # -- the Approver protocol (core/tools/policy.py) -------------------------------------------

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        """Relay the question to the user; remembering grants is the session's ApprovalGate's job."""
        conversation = call.conversation_id or ""
        request_id = f"approval_{uuid.uuid4().hex}"
        prompt = ApprovalPrompt(
            request_id=request_id,
            conversation_id=conversation,
            tool=call.tool,
            summary=call.summary or call.tool,
            # The dialog shows a few thousand characters: 20 MB of content stay here (issue 14).
            arguments=previewed_json(dict(call.args), ARGUMENTS_PREVIEW_CHARS),
            call_id=call.call_id,
            scope_label=call.scope_label,
        )
        answer = await self._wait(request_id, lambda: self._on_approval(prompt))
        try:
            return ApprovalDecision(answer)
        except ValueError:
            return ApprovalDecision.DENY  # an unknown answer never becomes a write nobody allowed

    # -- ui.ask_user (ToolContext.ask_user) -----------------------------------------------------

    def ask_user_for(self, conversation_id: str) -> Callable[[dict[str, Any]], Any]:
        async def ask_user(widget: dict[str, Any]) -> dict[str, Any] | None:
            request_id = f"ask_{uuid.uuid4().hex}"
            prompt = AskUserPrompt(
                request_id=request_id,
                conversation_id=conversation_id,
                call_id=str(widget.get("callId") or ""),
                widget=frozen_json(widget),
            )
            answer = await self._wait(request_id, lambda: self._on_ask_user(prompt))
            return thawed_json(answer) if isinstance(answer, Mapping) else None

        return ask_user

    # -- answers --------------------------------------------------------------------------------

    def answer(self, request_id: str, value: Any) -> None:
        """Resolve a question (from any thread); an unknown or withdrawn request is ignored."""
        loop = self._loop()
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._resolve, request_id, value)

    def _resolve(self, request_id: str, value: Any) -> None:
        future = self._pending.get(request_id)
        if future is not None and not future.done():
            future.set_result(value)

    async def _wait(self, request_id: str, announce: Callable[[], None]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            announce()
            return await future
        except asyncio.CancelledError:
            self._on_withdrawn(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    @property
    def pending(self) -> int:
        return len(self._pending)
