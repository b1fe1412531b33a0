"""Subagent sidechains: ``conversations/<cid>/agents/agent_<agentId>.jsonl`` and their meta files.

A sidechain is a conversation log of its own, written by one subagent, linked to its parent:

- every line is a :class:`ConversationMessage` stamped with ``sessionId`` (``agent_<agentId>``),
  ``parentSessionId`` (the conversation id of a child, the parent's ``agent_<id>`` of a
  grandchild), ``isSidechain: true`` and ``parentToolCallId`` (the Task call it answers);
- large tool outputs are offloaded like a main log's, under
  ``@state/logs/tool-results/<cid>/agents/agent_<id>/<messageId>.json``, so deleting the
  conversation's outputs folder removes them too;
- ``agent_<id>.meta.json`` beside it (atomically replaced) says what the child is and how it
  ended: type, status, depth, model, description, timestamps, the parent links;
- ``.agent_<id>.lock`` is an OS lock held while the child runs: a meta that says ``running``
  while nobody holds it belongs to a process that died (recovery marks it interrupted);
- ``agent_<id>.streaming.json`` is the child's streaming checkpoint (as ``streaming.json`` is
  the main log's).

Sidechains live inside the conversation folder, so the index (which lists only the folders
directly under ``conversations/``) never shows them, and deleting a conversation deletes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, ValidationError

from crewagent.core.errors import ConversationNotFound, CrewAgentError, StoreWriteError
from crewagent.core.jsonparse import parse_json
from crewagent.core.messages import ConversationMessage, utc_now_iso
from crewagent.core.store import offload
from crewagent.core.store._fsutil import atomic_write_bytes, atomic_write_json, read_json
from crewagent.core.store.index import DELETED_MARKER
from crewagent.core.store.log import LoadResult, append_message_line, load_log, write_quarantine

AGENTS_DIR = "agents"
SESSION_PREFIX = "agent_"
#: running → completed | failed | cancelled; ``interrupted``: the owning process died while it ran.
SidechainStatus = Literal["running", "completed", "failed", "cancelled", "interrupted"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled", "interrupted"})

_SESSION_ID = re.compile(r"agent_[A-Za-z0-9_-]{1,100}")


class SidechainBusy(CrewAgentError):
    """Another task or process already runs this subagent."""


class SidechainMeta(BaseModel):
    """``agent_<id>.meta.json``: what a subagent is, where it hangs, and how it ended."""

    model_config = ConfigDict(extra="allow")

    sessionId: str
    agentId: str
    #: The top-level conversation whose folder holds the sidechain.
    conversationId: str
    #: The conversation id (a child) or the parent's ``agent_<id>`` (a grandchild).
    parentSessionId: str
    parentToolCallId: str
    type: str
    status: SidechainStatus = "running"
    depth: int = 1
    model: str | None = None
    description: str = ""
    background: bool = False
    createdAt: str
    updatedAt: str
    #: The first characters of the final answer, or what went wrong.
    summary: str | None = None
    error: dict[str, Any] | None = None
    #: Set when the child ends (None fields are not written).
    finishedAt: str | None = None
    steps: int | None = None
    toolCalls: int | None = None
    #: The child's final answer in its sidechain (``task.result`` reads it).
    answerMessageId: str | None = None
    #: A background child's notice is in the parent's log.
    noticeDelivered: bool | None = None


def session_id_for(agent_id: str) -> str:
    return f"{SESSION_PREFIX}{agent_id}"


def is_session_id(value: str) -> bool:
    return bool(_SESSION_ID.fullmatch(value))


def link_fields(meta: SidechainMeta) -> dict[str, Any]:
    """The fields every line of the sidechain carries."""
    return {
        "sessionId": meta.sessionId,
        "parentSessionId": meta.parentSessionId,
        "isSidechain": True,
        "parentToolCallId": meta.parentToolCallId,
    }


class Sidechains:
    """The sidechains of one conversation (thread-safe; writes hold the project lock).

    Get one from :meth:`RuntimeStore.sidechains`. A sidechain has one writer (the task that
    holds its :meth:`lock`), so appends need no ordering beyond the project lock, which also
    keeps them from racing a deletion of the conversation.
    """

    def __init__(self, conversation_dir: Path, state_dir: Path, conversation_id: str, project_lock: Callable[[], AbstractContextManager[Any]]):
        self.conversation_dir = conversation_dir
        self.dir = conversation_dir / AGENTS_DIR
        self.state_dir = state_dir
        self.conversation_id = conversation_id
        self._project_lock = project_lock

    # -- paths -----------------------------------------------------------------------------

    def _stem(self, session_id: str) -> str:
        if not is_session_id(session_id):
            raise ConversationNotFound(session_id)
        return session_id

    def log_path(self, session_id: str) -> Path:
        return self.dir / f"{self._stem(session_id)}.jsonl"

    def meta_path(self, session_id: str) -> Path:
        return self.dir / f"{self._stem(session_id)}.meta.json"

    def _checkpoint_path(self, session_id: str) -> Path:
        return self.dir / f"{self._stem(session_id)}.streaming.json"

    def _lock_path(self, session_id: str) -> Path:
        return self.dir / f".{self._stem(session_id)}.lock"

    def _check_alive(self) -> None:
        if not self.conversation_dir.is_dir() or (self.conversation_dir / DELETED_MARKER).exists():
            raise ConversationNotFound(self.conversation_id)

    # -- meta ------------------------------------------------------------------------------

    def create(self, meta: SidechainMeta) -> SidechainMeta:
        """Write the meta of a new sidechain and an empty log."""
        with self._project_lock():
            self._check_alive()
            path = self.log_path(meta.sessionId)
            if path.exists():
                raise StoreWriteError(f"Sidechain {meta.sessionId} already exists.")
            atomic_write_json(self.meta_path(meta.sessionId), meta.model_dump(mode="json", exclude_none=True))
            try:
                path.touch()
            except OSError as exc:
                raise StoreWriteError.from_os_error(path, exc) from exc
        return meta

    def read_meta(self, session_id: str) -> SidechainMeta:
        try:
            return SidechainMeta.model_validate(read_json(self.meta_path(session_id)))
        except FileNotFoundError:
            raise ConversationNotFound(session_id) from None
        except (OSError, UnicodeDecodeError, ValueError, ValidationError) as exc:
            raise StoreWriteError(f"The meta file of subagent {session_id} is damaged: {exc}") from exc

    def update_meta(self, session_id: str, **changes: Any) -> SidechainMeta:
        """Change fields of the meta (``updatedAt`` is set) and replace the file atomically."""
        with self._project_lock():
            self._check_alive()
            meta = self.read_meta(session_id)
            updated = SidechainMeta.model_validate({**meta.model_dump(), **changes, "updatedAt": utc_now_iso()})
            atomic_write_json(self.meta_path(session_id), updated.model_dump(mode="json", exclude_none=True))
        return updated

    def metas(self) -> list[SidechainMeta]:
        """Every sidechain of the conversation with a readable meta, oldest first."""
        try:
            names = sorted(entry.name for entry in self.dir.iterdir() if entry.name.endswith(".meta.json"))
        except FileNotFoundError:
            return []
        metas: list[SidechainMeta] = []
        for name in names:
            try:
                metas.append(self.read_meta(name.removesuffix(".meta.json")))
            except (ConversationNotFound, StoreWriteError):
                continue  # a damaged meta hides one sidechain, never the others
        return sorted(metas, key=lambda meta: meta.createdAt)

    # -- messages --------------------------------------------------------------------------

    def append(self, meta: SidechainMeta, message: ConversationMessage) -> ConversationMessage:
        """Persist one message of the sidechain (stamped with its links, large outputs offloaded)."""
        stamped = message.model_copy(update=link_fields(meta))
        with self._project_lock():
            self._check_alive()
            path = self.log_path(meta.sessionId)
            if not path.exists():
                raise ConversationNotFound(meta.sessionId)
            stored = self._prepare(meta.sessionId, stamped)
            append_message_line(path, stored)
        return stored

    def _prepare(self, session_id: str, message: ConversationMessage) -> ConversationMessage:
        """The main log's offload rule, with the files under the conversation's ``agents/`` folder."""
        if not offload.needs_offload(message):
            return message
        assert isinstance(message.content, str)
        payload = message.content.encode("utf-8")
        digest = hashlib.sha256(payload).hexdigest()
        base = f"{offload.STATE_ALIAS}logs/tool-results/{offload.safe_file_stem(self.conversation_id)}/{AGENTS_DIR}/{session_id}"
        alias = f"{base}/{offload.safe_file_stem(message.id)}.json"
        target = offload.resolve_state_alias(self.state_dir, alias)
        if target.exists():
            alias = f"{base}/{offload.safe_file_stem(message.id)}-{digest[:12]}.json"
            target = offload.resolve_state_alias(self.state_dir, alias)
        atomic_write_bytes(target, payload)
        return message.model_copy(
            update={
                "content": offload.preview_text(message.content, alias),
                "fullOutputPath": alias,
                "fullOutputBytes": len(payload),
                "fullOutputSha256": digest,
            }
        )

    def load(self, session_id: str) -> LoadResult:
        """The sidechain's messages; damaged lines are skipped, reported and copied aside."""
        path = self.log_path(session_id)
        with self._project_lock():
            self._check_alive()
            if not path.exists():
                raise ConversationNotFound(session_id)
            size = path.stat().st_size
        result = load_log(path, limit=size)
        if result.problems:
            quarantine = self.dir / f"{session_id}.corrupt"
            quarantine.mkdir(exist_ok=True)
            write_quarantine(quarantine, result.problems)
        return result

    # -- the running child (see checkpoint.py for the main log's equivalents) ------------------

    @contextmanager
    def lock(self, session_id: str) -> Iterator[None]:
        """Hold while the child runs; the kernel releases it when the process dies."""
        path = self._lock_path(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        file_lock = FileLock(path, timeout=0, preserve_lock_file=True, thread_local=False)
        try:
            file_lock.acquire()
        except Timeout:
            raise SidechainBusy(f"Subagent {session_id} is running in another task or process.") from None
        try:
            yield
        finally:
            file_lock.release()

    def is_running(self, session_id: str) -> bool:
        try:
            with self.lock(session_id):
                return False
        except SidechainBusy:
            return True

    def save_checkpoint(self, session_id: str, data: dict[str, Any]) -> None:
        atomic_write_bytes(self._checkpoint_path(session_id), json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def read_checkpoint(self, session_id: str) -> dict[str, Any] | None:
        path = self._checkpoint_path(session_id)
        try:
            data = parse_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, ValueError):
            self.clear_checkpoint(session_id)
            return None
        return data if isinstance(data, dict) else None

    def clear_checkpoint(self, session_id: str) -> None:
        try:
            os.unlink(self._checkpoint_path(session_id))
        except FileNotFoundError:
            pass
