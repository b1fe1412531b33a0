"""An MCP ``CallToolResult`` as a tool result: text for the model, images and binaries as files in @state."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crewagent.core import paths
from crewagent.core.mcp.connection import McpCode
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.tools.results import error, ok

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
STATE_ALIAS = "@state/"


@dataclass(frozen=True)
class SaveTarget:
    """Where a call's binary content goes: a folder under @state, and how the model names it."""

    folder: Path
    shown: str  # "@state/..." for the same folder

    @classmethod
    def for_call(cls, state_dir: Path, *, conversation_id: str | None, run_id: str | None, call_id: str | None) -> SaveTarget:
        """A run's calls save under its state folder (state/runs/<runId>/mcp), others under state/mcp/<conversationId>."""
        if run_id:
            folder = paths.run_state_dir(state_dir, _safe(run_id)) / "mcp" / _safe(call_id or "call")
        else:
            folder = state_dir / "mcp" / _safe(conversation_id or "default") / _safe(call_id or "call")
        return cls(folder, STATE_ALIAS + folder.relative_to(state_dir).as_posix())


def _safe(name: str) -> str:
    return _SAFE.sub("_", name)[:100] or "_"


def convert(result: Any, *, server_id: str, tool: str, target: SaveTarget | None) -> dict[str, Any]:
    """The result dict of one call (blocking: it may write files). ``result`` is the SDK's CallToolResult."""
    texts: list[str] = []
    files: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for number, block in enumerate(result.content or (), start=1):
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            files.append(_save(block.data, block.mime_type, kind, number, target))
        elif kind == "resource":
            resource = block.resource
            if getattr(resource, "text", None) is not None:
                texts.append(resource.text)
            else:
                saved = _save(resource.blob, resource.mime_type or "application/octet-stream", "resource", number, target)
                files.append({**saved, "uri": str(resource.uri)})
        elif kind == "resource_link":
            links.append({"uri": str(block.uri), "name": block.name, **({"mimeType": block.mime_type} if block.mime_type else {})})
    text = "\n".join(texts)
    if result.is_error:
        return error(McpCode.MCP_TOOL_ERROR, text or f"{tool} reported an error.", server=server_id, tool=tool)
    fields: dict[str, Any] = {"content": text}
    if result.structured_content is not None and not text:
        fields["structuredContent"] = result.structured_content
    if files:
        fields["files"] = files
    if links:
        fields["links"] = links
    return ok(**fields)


def _save(data: str, mime_type: str, kind: str, number: int, target: SaveTarget | None) -> dict[str, Any]:
    """Decode one base64 block and write it; the entry names its path (or why it was not saved)."""
    entry: dict[str, Any] = {"type": kind, "mimeType": mime_type}
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {**entry, "error": "the server sent content that is not valid base64"}
    if target is None:
        return {**entry, "bytes": len(raw), "error": "not saved (no state folder)"}
    extension = mimetypes.guess_extension(mime_type.split(";")[0].strip()) or ".bin"
    name = f"{kind}-{number}{extension}"
    target.folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target.folder / name, raw)
    return {**entry, "bytes": len(raw), "path": f"{target.shown}/{name}"}


#: The most images of one result the timeline shows (a result naming more shows the first ones).
MAX_SHOWN_IMAGES = 8


def image_paths(result: str) -> tuple[str, ...]:
    """The ``@state/...`` paths of the images a stored MCP tool result names (its ``files``), in order.

    ``result`` is the tool message's content as stored; anything that is not such a result
    (another tool's output, an error, text that is not JSON) names none.
    """
    if '"files"' not in result:
        return ()
    try:
        value = json.loads(result)
    except ValueError:
        return ()
    files = value.get("files") if isinstance(value, dict) else None
    if not isinstance(files, list):
        return ()
    shown = [
        entry["path"]
        for entry in files
        if isinstance(entry, dict) and entry.get("type") == "image" and isinstance(entry.get("path"), str) and entry["path"].startswith(STATE_ALIAS)
    ]
    return tuple(shown[:MAX_SHOWN_IMAGES])


def state_file(state_dir: Path, shown: str) -> Path | None:
    """The file ``@state/...`` names under ``state_dir``; None for a path outside it (``..``, a
    symlink out of it, another alias or an absolute path): a result is model-reachable data."""
    if not shown.startswith(STATE_ALIAS):
        return None
    relative = shown[len(STATE_ALIAS):]
    if not relative or relative.startswith(("/", "\\")) or "\0" in relative:
        return None
    root = state_dir.resolve()
    try:
        target = (root / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return target if target != root and target.is_relative_to(root) else None
