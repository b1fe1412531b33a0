"""Edit and Regenerate (issue 18 item 12): which message a new branch replaces, checked before anything is written.

Both start a new branch of the conversation (protocol/branches.py): Edit sends the new text in
place of one of the user's messages, Regenerate sends the last question again in place of
itself, so its answer replaces the last one. Nothing is deleted: the old branch stays in the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crewagent.core import texts
from crewagent.core.attachments import count_images, image_urls, user_content
from crewagent.core.errors import CrewAgentError
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol.branches import current_branch

NOTHING_TO_REGENERATE = texts.NOTHING_TO_REGENERATE
NOT_EDITABLE = texts.NOT_EDITABLE
EMPTY_EDIT = texts.EMPTY_EDIT


@dataclass(frozen=True)
class BranchTurn:
    """A turn that starts a new branch: the user message to send, and the id of the one it replaces.

    ``text`` is list content when the message has images (they stay with an edited or
    regenerated question: core/attachments.py).
    """

    text: str | list[dict[str, Any]]
    replaces: str


def _said_by_user(message: ConversationMessage) -> bool:
    """A message the user typed (not a notice the app wrote in the user's role)."""
    return message.role == "user" and not message.synthetic and bool(message.text.strip() or count_images(message.content))


def edit_turn(messages: Sequence[ConversationMessage], message_id: str, text: str) -> BranchTurn:
    """The turn that sends ``text`` in place of the user's message ``message_id`` (CrewAgentError when it cannot)."""
    if not text.strip():
        raise CrewAgentError(EMPTY_EDIT)
    for message in current_branch(messages):
        if message.id == message_id and _said_by_user(message):
            return BranchTurn(user_content(text, image_urls(message.content)), message_id)
    raise CrewAgentError(NOT_EDITABLE)


def regenerate_turn(messages: Sequence[ConversationMessage]) -> BranchTurn:
    """The turn that asks the last question again, its new answer in place of the last one."""
    for message in reversed(current_branch(messages)):
        if _said_by_user(message):
            return BranchTurn(message.content if isinstance(message.content, list) and count_images(message.content) else message.text, message.id)
    raise CrewAgentError(NOTHING_TO_REGENERATE)
