"""How a parent log points at a sidechain: the Task result, its app-only fields, the notice.

The parent log never holds a child's progress. It holds, for each Task call, one ``role=tool``
result whose content is the child's final answer cut to :data:`ANSWER_PREVIEW_CHARS` (with a
pointer to ``task.result`` when longer) and whose app-only fields ``subagentSessionId``,
``subagentType``, ``subagentStatus`` and ``subagentSummary`` link it to the sidechain; and, for
a background child, one notice (a synthetic ``role=user`` message with the same fields) when it
has finished.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crewagent.core.messages import ConversationMessage
from crewagent.core.store.sidechain import SidechainMeta
from crewagent.core.subagents.events import SubagentStatus, SubagentStatusChanged

#: Characters of a child's final answer kept in the parent's Task result (and in the summary).
ANSWER_PREVIEW_CHARS = 500

NOTICE_TITLE = "SUBAGENT_NOTICE"


def parent_status(status: str) -> SubagentStatus:
    """The meta status as the parent sees it: a child whose process died was cancelled."""
    if status in ("running", "completed", "failed", "cancelled"):
        return status  # type: ignore[return-value]
    return "cancelled"


def shorten(text: str, limit: int = ANSWER_PREVIEW_CHARS) -> tuple[str, bool]:
    """The first ``limit`` characters of ``text`` and whether anything was cut."""
    return (text, False) if len(text) <= limit else (text[:limit], True)


def result_pointer(session_id: str, length: int) -> str:
    return (
        f"The answer has {length} characters; this is its beginning. "
        f'Call task.result with {{"session_id": "{session_id}"}} to read all of it.'
    )


def status_event(meta: SidechainMeta) -> SubagentStatusChanged:
    """A sidechain's meta as the status its parent (and the UI) sees."""
    return SubagentStatusChanged(
        session_id=meta.sessionId,
        conversation_id=meta.conversationId,
        parent_session_id=meta.parentSessionId,
        parent_call_id=meta.parentToolCallId,
        subagent_type=meta.type,
        status=parent_status(meta.status),
        summary=meta.summary or "",
        depth=meta.depth,
        description=meta.description,
        background=meta.background,
    )


def parent_fields(meta: SidechainMeta) -> dict[str, Any]:
    """The app-only fields of the parent's Task result (and of a notice) for this child."""
    return {
        "subagentSessionId": meta.sessionId,
        "subagentType": meta.type,
        "subagentStatus": parent_status(meta.status),
        "subagentSummary": meta.summary or "",
    }


def notice_message(meta: SidechainMeta) -> ConversationMessage:
    """The message that tells the parent's model, at its next turn, that a background child ended."""
    status = parent_status(meta.status)
    lines = [
        NOTICE_TITLE,
        f"- subagent: {meta.sessionId} ({meta.type})",
        f"- description: {meta.description}",
        f"- status: {status}" + (" (the app stopped while it ran)" if meta.status == "interrupted" else ""),
    ]
    if meta.summary:
        lines.append(f"- summary: {meta.summary}")
    lines.append(
        f'This is an automatic notice, not a message from the user. Call task.result with {{"session_id": "{meta.sessionId}"}} '
        "for the full answer."
    )
    return ConversationMessage.new("user", "\n".join(lines), synthetic=True, partType="content", **parent_fields(meta))


@dataclass
class SubagentLinks:
    """Task call id → the parent fields of its child: adds them to the results a repair writes."""

    by_call: dict[str, dict[str, Any]] = field(default_factory=dict)

    def annotate(self, message: ConversationMessage) -> ConversationMessage:
        fields = self.by_call.get(message.tool_call_id or "") if message.role == "tool" else None
        return message.model_copy(update=fields) if fields else message


def task_result_payload(meta: SidechainMeta, answer: str | None) -> dict[str, Any]:
    """The content (as a dict) of the parent's Task result for a finished or started child."""
    base: dict[str, Any] = {"subagentSessionId": meta.sessionId, "type": meta.type, "status": parent_status(meta.status)}
    if meta.status == "running":
        return {
            "ok": True,
            **base,
            "message": (
                "The subagent runs in the background. You will get a SUBAGENT_NOTICE when it has finished; "
                f'check on it with task.status {{"session_id": "{meta.sessionId}"}}.'
            ),
        }
    if meta.status == "completed":
        preview, cut = shorten(answer or "")
        payload: dict[str, Any] = {"ok": True, **base, "answer": preview}
        if cut:
            payload["truncated"] = True
            payload["fullAnswer"] = result_pointer(meta.sessionId, len(answer or ""))
        return payload
    error = meta.error or {}
    code = str(error.get("code") or ("SUBAGENT_CANCELLED" if meta.status != "failed" else "SUBAGENT_FAILED"))
    message = str(error.get("message") or meta.summary or f"The subagent ended as {meta.status}.")
    return {"ok": False, "error": {"code": code, "message": message}, **base}


def dumps(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)
