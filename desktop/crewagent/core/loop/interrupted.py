"""The assistant message a process that died mid-stream leaves behind, rebuilt from its checkpoint."""

from __future__ import annotations

from typing import Any

from crewagent.core import texts
from crewagent.core.loop.toolloop import error_block
from crewagent.core.messages import ConversationMessage


def recovered_stream_message(data: dict[str, Any]) -> ConversationMessage | None:
    """The interrupted assistant message for a checkpoint left by a process that died mid-stream."""
    content = data.get("content") if isinstance(data.get("content"), str) else ""
    reasoning = data.get("reasoning") if isinstance(data.get("reasoning"), str) else ""
    if not content and not reasoning:
        return None
    block = error_block(
        "LLM_INTERRUPTED",
        texts.STREAM_INTERRUPTED_BLOCK,
        retryable=True,
    )
    stamp = data.get("stamp")
    fields: dict[str, Any] = {}
    if isinstance(stamp, dict):
        fields = {k: v for k, v in stamp.items() if k in {"mode", "runId", "agentId", "workflowId"}}
    if isinstance(data.get("messageId"), str):
        fields["id"] = data["messageId"]
    if reasoning:
        fields["reasoning_content"] = reasoning
    return ConversationMessage.new(
        "assistant",
        f"{content}\n\n{block}" if content else block,
        partType="error",
        interrupted=True,
        error={"code": "LLM_INTERRUPTED", "message": texts.STREAM_INTERRUPTED, "partialText": content},
        **fields,
    )
