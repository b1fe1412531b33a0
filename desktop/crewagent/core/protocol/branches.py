"""Branches of a conversation: an edited question, or a regenerated answer, supersedes what it replaces.

The log is append-only and nothing in it is ever rewritten. Editing a user message appends the
new message with ``replaces`` set to the id of the one it takes the place of; Regenerate appends
a copy of the last question the same way. The replaced message and every message after it, up
to the new one, form the old branch: still in the log (``export --format jsonl`` shows it),
shown by no timeline, sent to no model, exported by neither the OpenAI nor the Markdown export.

Read in order, one rule gives the current branch: a message whose ``replaces`` names a message
of the current branch cuts the branch there. A ``replaces`` naming anything else (an id of an
old branch, or no message at all) cuts nothing. Two exceptions keep the protocol whole: a tool
result inside the cut range that answers a call still on the current branch stays, and a
result that answers a call of a superseded message is superseded with it (a repair result that
recovery appended after the branch point). Works on ConversationMessages and raw dicts alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

#: The field of a user message that starts a new branch (messages.py, ``ConversationMessage.replaces``).
REPLACES_FIELD = "replaces"

T = TypeVar("T")


def _get(message: Any, key: str) -> Any:
    if type(message) is dict or isinstance(message, Mapping):  # the type check first: it is cheap
        return message.get(key)
    return getattr(message, key, None)


def _has_branches(messages: Sequence[Any]) -> bool:
    """Whether any message starts a branch: one cheap look per message (this runs on every request)."""
    for message in messages:
        target = message.get(REPLACES_FIELD) if type(message) is dict else getattr(message, REPLACES_FIELD, None)
        if target:
            return True
    return False


def _target(message: Any) -> str | None:
    target = _get(message, REPLACES_FIELD)
    return target if isinstance(target, str) and target else None


def _call_ids(message: Any) -> list[str]:
    calls = _get(message, "tool_calls")
    if not isinstance(calls, list):
        return []
    out = []
    for call in calls:
        call_id = _get(call, "id")
        if isinstance(call_id, str):
            out.append(call_id)
    return out


def split_branch(messages: Sequence[T], *, partial: bool = False) -> tuple[list[T], list[T]]:
    """``(current, superseded)``: the current branch in log order, and the messages it superseded.

    ``partial``: ``messages`` is the end of a log (its newest page), so a ``replaces`` naming a
    message before the page cuts everything before the branch point.
    """
    if not _has_branches(messages):
        return list(messages), []
    kept: list[T] = []
    where: dict[str, int] = {}  # message id -> its position in ``kept``
    superseded: list[T] = []
    dead_calls: set[str] = set()
    for message in messages:
        target = _target(message)
        cut = where.get(target) if target is not None else None
        if cut is None and partial and target is not None:
            cut = 0
        if cut is not None:
            head, tail = kept[:cut], kept[cut:]
            live = {call_id for m in head for call_id in _call_ids(m)}
            for old in tail:
                if _get(old, "role") == "tool" and _get(old, "tool_call_id") in live:
                    head.append(old)  # answers a call before the branch point: it stays
                else:
                    superseded.append(old)
                    dead_calls.update(_call_ids(old))
            kept = head
            where = {str(_get(m, "id")): n for n, m in enumerate(kept)}
        if _get(message, "role") == "tool" and _get(message, "tool_call_id") in dead_calls:
            superseded.append(message)
            continue
        where[str(_get(message, "id"))] = len(kept)
        kept.append(message)
    return kept, superseded


def current_branch(messages: Sequence[T], *, partial: bool = False) -> list[T]:
    """The messages of the current branch, in log order (see :func:`split_branch`)."""
    return split_branch(messages, partial=partial)[0]
