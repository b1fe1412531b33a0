"""Large tool outputs: written in full to @state/logs/tool-results/, previewed in the log."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from crewagent.core import bigjson, paths, texts
from crewagent.core.errors import OffloadedOutputError
from crewagent.core.messages import ConversationMessage
from crewagent.core.store._fsutil import atomic_write_bytes

#: A role=tool content larger than this (UTF-8 bytes) is offloaded (seed 000: 50 KB).
TOOL_OUTPUT_THRESHOLD = 50 * 1024
#: Characters of an offloaded output kept inline in the log (seed 000).
TOOL_OUTPUT_PREVIEW_CHARS = 500

STATE_ALIAS = "@state/"
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


def safe_file_stem(identifier: str) -> str:
    """A file name for an id: the id itself when harmless, else a digest (ids can come from imports)."""
    if _SAFE_NAME.fullmatch(identifier):
        return identifier
    return "id_" + hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:40]


def offload_alias(conversation_id: str, message_id: str) -> str:
    return f"{STATE_ALIAS}{paths.TOOL_RESULTS_SUBDIR}/{safe_file_stem(conversation_id)}/{safe_file_stem(message_id)}.json"


def preview_text(content: str, alias: str) -> str:
    return content[:TOOL_OUTPUT_PREVIEW_CHARS] + f"\n\n[Full output: {alias}]"


def needs_offload(message: ConversationMessage) -> bool:
    if message.role != "tool" or not isinstance(message.content, str) or message.is_offloaded:
        return False
    # Cheap bound first: a str of n chars encodes to at most 4n bytes and at least n bytes.
    if len(message.content) * 4 <= TOOL_OUTPUT_THRESHOLD:
        return False
    return len(message.content.encode("utf-8")) > TOOL_OUTPUT_THRESHOLD


def prepare_for_storage(message: ConversationMessage, conversation_id: str, state_dir: Path) -> ConversationMessage:
    """Offload a large tool output; return the message to log (the input is not modified).

    The full payload is written (atomically, fsync'd) before the caller logs the preview, so a
    logged preview always has its file; a crash in between only leaves an unreferenced file.
    """
    if not needs_offload(message):
        return message
    assert isinstance(message.content, str)
    payload = bigjson.encode_utf8(message.content)
    digest = hashlib.sha256(payload).hexdigest()
    alias = offload_alias(conversation_id, message.id)
    target = resolve_state_alias(state_dir, alias)
    if target.exists():
        # Another message with the same id was offloaded before: never overwrite its output.
        alias = alias[: -len(".json")] + f"-{digest[:12]}.json"
        target = resolve_state_alias(state_dir, alias)
    atomic_write_bytes(target, payload)
    return message.model_copy(
        update={
            "content": preview_text(message.content, alias),
            "fullOutputPath": alias,
            "fullOutputBytes": len(payload),
            "fullOutputSha256": digest,
        }
    )


def write_spill(state_dir: Path, alias: str, text: str) -> bool:
    """Write the full text a compacted request names by ``alias``, unless it is there already.

    The context builder shortens large items of the current turn to a preview and an alias
    (issue 15); the model reads the rest with ``fs.read``. Returns whether a file was written.
    Raises :class:`StoreWriteError` (disk full, permission denied) or OffloadedOutputError.
    """
    target = resolve_state_alias(state_dir, alias)
    if target.exists():
        return False
    atomic_write_bytes(target, bigjson.encode_utf8_pieces(text))  # megabytes of arguments: in slices, not joined
    return True


def resolve_state_alias(state_dir: Path, alias: str) -> Path:
    """The file an ``@state/...`` alias names; refuses anything that leaves the state folder."""
    if not alias.startswith(STATE_ALIAS) or "\x00" in alias:
        raise OffloadedOutputError(f"Not a state path: {alias!r}")
    relative = alias[len(STATE_ALIAS) :]
    root = state_dir.resolve()
    target = (root / relative).resolve()
    if not target.is_relative_to(root):
        raise OffloadedOutputError(f"Refusing a path outside the state folder: {alias!r}")
    return target


def read_full_output(message: ConversationMessage, state_dir: Path) -> str:
    """The full content of a tool result: inline content, or the offloaded file checked by sha256."""
    if not message.is_offloaded:
        return message.text
    assert message.fullOutputPath is not None
    path = resolve_state_alias(state_dir, message.fullOutputPath)
    try:
        payload = path.read_bytes()
    except FileNotFoundError:
        raise OffloadedOutputError(
            texts.OUTPUT_MISSING.format(message_id=message.id, path=message.fullOutputPath)
        ) from None
    except OSError as exc:
        raise OffloadedOutputError(f"Cannot read {message.fullOutputPath}: {exc.strerror or exc}") from exc
    if message.fullOutputSha256 and hashlib.sha256(payload).hexdigest() != message.fullOutputSha256:
        raise OffloadedOutputError(
            texts.OUTPUT_CHANGED.format(message_id=message.id, path=message.fullOutputPath)
        )
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OffloadedOutputError(f"{message.fullOutputPath} is not valid UTF-8") from exc
