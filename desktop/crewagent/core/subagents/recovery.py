"""After a crash: mark dead children interrupted, repair their sidechains, deliver notices.

Called by :meth:`ConversationSession.recover` (and at the start of every turn) while the
conversation's turn lock is held. A sidechain whose meta says ``running`` while nobody holds its
OS lock belongs to a process that died: its streaming checkpoint becomes an interrupted
assistant message, its unanswered calls get ``TOOL_INTERRUPTED`` (the main log's repair rules),
it ends with a ``SUBAGENT_INTERRUPTED`` marker, and its meta becomes ``interrupted``. The
parent's unanswered Task calls are then repaired by the session's normal repair, with the
link fields added through the returned :class:`SubagentLinks`.

Notices of finished background children are delivered from the meta files
(``noticeDelivered``), so a notice that could not be delivered before a crash is not lost.
"""

from __future__ import annotations

import logging

from crewagent.core import texts
from crewagent.core.errors import ConversationNotFound, StoreWriteError
from crewagent.core.loop.interrupted import recovered_stream_message
from crewagent.core.loop.toolloop import error_block
from crewagent.core.messages import ConversationMessage, utc_now_iso
from crewagent.core.protocol import repair_conversation
from crewagent.core.store import RuntimeStore
from crewagent.core.store.sidechain import FINAL_STATUSES, SidechainBusy, SidechainMeta, Sidechains
from crewagent.core.subagents.links import SubagentLinks, notice_message, parent_fields

log = logging.getLogger(__name__)

INTERRUPTED_CODE = "SUBAGENT_INTERRUPTED"
INTERRUPTED_MESSAGE = texts.SUBAGENT_INTERRUPTED


def marker_message(code: str, message: str) -> ConversationMessage:
    """The assistant error part a cancelled or interrupted sidechain ends with."""
    return ConversationMessage.new(
        "assistant",
        error_block(code, message, title=code),
        partType="error",
        interrupted=True,
        error={"code": code, "message": message},
        mode="agent",
    )


def recover_children(store: RuntimeStore, project_id: str, conversation_id: str) -> SubagentLinks:
    """Repair the dead sidechains of a conversation; the links for the parent's own repair."""
    chains = store.sidechains(project_id, conversation_id)
    metas = chains.metas()
    if not metas:
        return SubagentLinks()
    dead = [meta for meta in metas if meta.status == "running" and not chains.is_running(meta.sessionId)]
    recovered: dict[str, SidechainMeta] = {}
    for meta in dead:
        try:
            with chains.lock(meta.sessionId):
                recovered[meta.sessionId] = chains.update_meta(
                    meta.sessionId,
                    status="interrupted",
                    summary=INTERRUPTED_MESSAGE,
                    error={"code": "SUBAGENT_INTERRUPTED", "message": INTERRUPTED_MESSAGE},
                    finishedAt=utc_now_iso(),
                )
        except SidechainBusy:
            continue  # it came back to life (another process picked it up): leave it alone
    metas = [recovered.get(meta.sessionId, meta) for meta in metas]
    links: dict[str, SubagentLinks] = {}
    for meta in metas:
        links.setdefault(meta.parentSessionId, SubagentLinks()).by_call[meta.parentToolCallId] = parent_fields(meta)
    # Deepest first, so that a child's repair sees its own children already marked.
    for meta in sorted(recovered.values(), key=lambda m: -m.depth):
        _repair_sidechain(chains, meta, links.get(meta.sessionId, SubagentLinks()))
    return links.get(conversation_id, SubagentLinks())


def _repair_sidechain(chains: Sidechains, meta: SidechainMeta, links: SubagentLinks) -> None:
    sid = meta.sessionId
    messages = chains.load(sid).messages
    checkpoint = chains.read_checkpoint(sid)
    if checkpoint is not None:
        partial = recovered_stream_message(checkpoint)
        if partial is not None and not any(m.id == partial.id for m in messages):
            messages.append(chains.append(meta, partial))
        chains.clear_checkpoint(sid)
    repair = repair_conversation(messages, lambda m: chains.append(meta, links.annotate(m)))
    chains.append(meta, marker_message(INTERRUPTED_CODE, INTERRUPTED_MESSAGE))
    log.info("subagent %s recovered: %d call(s) answered as interrupted", sid, len(repair.appended))


def deliver_notices(store: RuntimeStore, project_id: str, conversation_id: str) -> list[ConversationMessage]:
    """Append the notice of every finished background child not yet announced (caller holds the turn lock)."""
    try:
        chains = store.sidechains(project_id, conversation_id)
        pending = [
            meta
            for meta in chains.metas()
            if meta.background
            and meta.parentSessionId == conversation_id
            and meta.status in FINAL_STATUSES
            and not meta.noticeDelivered
        ]
    except ConversationNotFound:
        return []
    appended: list[ConversationMessage] = []
    for meta in pending:
        try:
            appended.append(store.append_message(project_id, conversation_id, notice_message(meta)))
            chains.update_meta(meta.sessionId, noticeDelivered=True)
        except (ConversationNotFound, StoreWriteError) as exc:
            log.warning("could not deliver the notice of subagent %s: %s", meta.sessionId, exc)
            break
    return appended
