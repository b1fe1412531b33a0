"""Generated conversation titles: after the first exchange, the provider names the conversation.

A title is a convenience: a failure keeps the first-message title (``titleSource=auto``), and a
rename by the user (``titleSource=user``) is never replaced, even one made while the provider was
still answering (the store checks the source again under its lock).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from crewagent.core.llm.config import ProviderConfig
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm.title import ask_title
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.store import RuntimeStore

log = logging.getLogger(__name__)


def first_exchange(messages: list[ConversationMessage]) -> tuple[str, str] | None:
    """The text of the only user message and of the first answer to it; None unless the log holds
    exactly one user message and an answer (a title is made once, after the first exchange)."""
    users = [m for m in messages if m.role == "user" and m.text.strip()]
    answer = next(
        (m for m in messages if m.role == "assistant" and m.partType in (None, "content") and m.text.strip()),
        None,
    )
    if len(users) != 1 or answer is None:
        return None
    return users[0].text, answer.text


async def generate_title(
    store: RuntimeStore, project_id: str, conversation_id: str, config: Callable[[], Awaitable[ProviderConfig]]
) -> ConversationMeta:
    """Ask the provider (``config()``, only made when a title is wanted) for a title when the
    conversation still has its automatic one after its first exchange; the conversation's entry as
    it is afterwards (unchanged when nothing applied)."""
    meta = await asyncio.to_thread(store.get_conversation, project_id, conversation_id)
    if meta.titleSource != "auto" or meta.activeType == "run":
        return meta  # named by the user, or a workflow's conversation (its runs name it)
    loaded = await asyncio.to_thread(store.load_messages, project_id, conversation_id)
    exchange = first_exchange(loaded.messages)
    if exchange is None:
        return meta
    try:
        title = await ask_title(await config(), *exchange)
    except CrewAgentError as exc:  # the provider failed, or cannot be reached with these settings
        log.info("no generated title for %s (the first message's is kept): %s", conversation_id, exc)
        return meta
    updated = await asyncio.to_thread(store.set_generated_title, project_id, conversation_id, title)
    if updated is not None:
        return updated
    return await asyncio.to_thread(store.get_conversation, project_id, conversation_id)  # renamed meanwhile
