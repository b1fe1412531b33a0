"""The execution audit: one JSON line per tool call, refused ones included.

Where the lines go is the caller's choice (see :func:`audit_path`):

- Run mode: ``<state>/runs/<runId>/logs/execution.jsonl`` (ARCHITECTURE.md, contract);
- otherwise: ``<state>/logs/execution/<conversationId>.jsonl``.

A line is ``{"ts", "tool", "callId", "conversationId", "runId", "args", "ok", "errorCode",
"durationMs", "approval"}`` (keys with no value are left out). Arguments are truncated: each
string to :data:`MAX_ARG_CHARS` characters, the whole object to :data:`MAX_ARGS_CHARS`.

Each line is written with one ``write`` on an ``O_APPEND`` descriptor; if the previous line was
torn (a crash mid-write) the new one starts on a fresh line, and a failed write is cut back, so
a reader never sees a partial line followed by more data. The audit is not fsync'd.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from crewagent.core import paths
from crewagent.core.jsonparse import parse_json
from crewagent.core.messages import utc_now_iso
from crewagent.core.redact import redact

log = logging.getLogger(__name__)

MAX_ARG_CHARS = 300
MAX_ARGS_CHARS = 2000
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


def audit_path(state_dir: Path, *, run_id: str | None = None, conversation_id: str | None = None) -> Path:
    """The audit file of a run (when ``run_id`` is given) or of a conversation."""
    if run_id:
        return paths.run_state_dir(state_dir, _safe(run_id)) / "logs" / "execution.jsonl"
    return state_dir / "logs" / "execution" / f"{_safe(conversation_id or 'default')}.jsonl"


def _safe(name: str) -> str:
    return _SAFE_NAME.sub("_", name)[:128] or "_"


def truncate_args(args: Any) -> Any:
    """Arguments fit for an audit line: credentials masked, long strings cut, the whole object bounded."""
    shortened = _shorten(args)
    text = json.dumps(shortened, ensure_ascii=False, default=str)
    if len(text) <= MAX_ARGS_CHARS:
        return shortened
    return {"_truncated": text[:MAX_ARGS_CHARS], "_chars": len(text)}


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) <= MAX_ARG_CHARS:
            return redact(value)
        # Only the kept start is searched for credentials (a 20 MB fs.write content took seconds
        # of regular expressions holding the GIL); twice as much of it, so that a credential cut
        # at the end of the kept start is still recognised and masked.
        return f"{redact(value[: 2 * MAX_ARG_CHARS])[:MAX_ARG_CHARS]}… ({len(value)} chars)"
    if isinstance(value, dict):
        return {str(key): _shorten(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten(item) for item in value]
    return value


_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    """One lock per file for the whole process: two AuditLogs of one file must not race the torn-tail check."""
    key = os.path.abspath(path)
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(key, threading.Lock())


class AuditLog:
    """Appends audit records to one file; safe to share between threads."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = _lock_for(path)

    def record(
        self,
        *,
        tool: str,
        args: Any,
        result: dict[str, Any],
        duration_ms: float,
        call_id: str | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        approval: str | None = None,
    ) -> dict[str, Any]:
        """Build and append one record; returns it. Never raises for an I/O failure (it is logged)."""
        code = None
        if result.get("ok") is not True:
            code = (result.get("error") or {}).get("code") or "UNKNOWN"
        entry: dict[str, Any] = {
            "ts": utc_now_iso(),
            "tool": tool,
            "callId": call_id,
            "conversationId": conversation_id,
            "runId": run_id,
            "args": truncate_args(args),
            "ok": code is None,
            "errorCode": code,
            "durationMs": round(duration_ms, 3),
            "approval": approval,
        }
        entry = {key: value for key, value in entry.items() if value is not None}
        self.append(entry)
        return entry

    def append(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            try:
                _append_line(self.path, line)
            except OSError as exc:
                # The audit must never stop a tool call; a full disk is reported, not raised.
                log.warning("could not append to the tool audit %s: %s", self.path, exc)


def _append_line(path: Path, line: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o644)
    try:
        size = os.fstat(fd).st_size
        if size > 0:
            os.lseek(fd, size - 1, os.SEEK_SET)  # os.pread does not exist on Windows
            if os.read(fd, 1) != b"\n":
                line = b"\n" + line
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"short write ({written} of {len(line)} bytes)")
        except OSError:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def read_audit(path: Path) -> list[dict[str, Any]]:
    """The records of an audit file (torn lines skipped); for tests and the UI."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    records = []
    for line in text.splitlines():
        try:
            value = parse_json(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records
