"""The log's reading order: a repair result is read right after the tool calls it answers.

The log is append-only, so the ``TOOL_INTERRUPTED`` result that recovery writes for a call left
unanswered lands at the end of the log, possibly after later messages. Each such result names
the assistant message whose call it answers (``answersMessageId``); read with that rule, the log
is a valid chain on its own, without the context builder's regrouping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

#: The field of a repair result that names the assistant message holding the call it answers.
ANSWERS_FIELD = "answersMessageId"

T = TypeVar("T")


def _get(message: Any, key: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(key)
    return getattr(message, key, None)


def answers_message_id(message: Any) -> str | None:
    """The assistant message id a repair result answers, or ``None`` for any other entry."""
    if _get(message, "role") != "tool":
        return None
    target = _get(message, ANSWERS_FIELD)
    return target if isinstance(target, str) and target else None


def log_order(messages: Sequence[T]) -> list[T]:
    """``messages`` in reading order: every repair result moved to the end of its call's block.

    A block is the assistant message and the tool messages right after it. A repair result
    whose assistant is not earlier in the log stays where it is (and reads as the orphan it is).
    Works on ConversationMessages and on raw dicts alike; nothing is copied or changed.
    """
    seen: set[str] = set()
    movers: dict[str, list[T]] = {}
    kept: list[T] = []
    for message in messages:
        target = answers_message_id(message)
        if target is not None and target in seen:
            movers.setdefault(target, []).append(message)
            continue
        kept.append(message)
        if _get(message, "role") == "assistant":
            message_id = _get(message, "id")
            if isinstance(message_id, str):
                seen.add(message_id)
    if not movers:
        return list(messages)
    out: list[T] = []
    pending: list[T] = []
    for message in kept:
        role = _get(message, "role")
        if pending and role != "tool":
            out.extend(pending)
            pending = []
        out.append(message)
        if role == "assistant":
            pending = movers.pop(str(_get(message, "id")), [])
    out.extend(pending)
    return out
