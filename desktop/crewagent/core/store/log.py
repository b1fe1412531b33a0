"""The append-only conversation log (messages.jsonl): streaming load, quarantine, legacy migration."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crewagent.core import bigjson
from crewagent.core.jsonparse import parse_json
from crewagent.core.messages import ConversationMessage, new_message_id, share_fields_set, utc_now_iso
from crewagent.core.store._fsutil import append_line, append_records_span, atomic_write_bytes
from crewagent.core.store.gcpause import gc_paused

LOG_NAME = "messages.jsonl"
LEGACY_NAME = "messages.json"
LEGACY_BACKUP_NAME = "messages.json.bak"
QUARANTINE_NAME = "messages.corrupt.jsonl"


@dataclass(frozen=True)
class LogProblem:
    """A log line that could not be loaded; it stays in the log and is copied to the side file."""

    line: int
    reason: str
    raw: bytes = field(repr=False)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"line": self.line, "reason": self.reason}
        try:
            record["raw"] = self.raw.decode("utf-8")
        except UnicodeDecodeError:
            record["rawBase64"] = base64.b64encode(self.raw).decode("ascii")
        return record


@dataclass
class LoadResult:
    """A loaded conversation: the messages in log order and what had to be skipped."""

    messages: list[ConversationMessage]
    problems: list[LogProblem] = field(default_factory=list)
    migrated_from_legacy: bool = False

    @property
    def skipped_lines(self) -> list[int]:
        return [problem.line for problem in self.problems]

    def problem_summary(self) -> str:
        if not self.problems:
            return ""
        lines = ", ".join(str(n) for n in self.skipped_lines[:20])
        more = "" if len(self.problems) <= 20 else f" and {len(self.problems) - 20} more"
        return (
            f"{len(self.problems)} damaged line(s) skipped (line {lines}{more}); "
            f"they are kept in {QUARANTINE_NAME}"
        )


def encode_message(message: ConversationMessage) -> bytes:
    return message.to_log_bytes(b"\n")


def _validate(body: bytes) -> ConversationMessage:
    """One log line as a message; a line of megabytes (the arguments of an fs.write of a big file)
    is decoded and parsed in slices (bigjson.py), not in one call that holds the GIL throughout."""
    if len(body) > bigjson.LARGE_CHARS:
        return share_fields_set(ConversationMessage.model_validate(bigjson.loads(bigjson.decode_utf8(body))))
    return share_fields_set(ConversationMessage.model_validate_json(body))


def append_message_line(log_path: Path, message: ConversationMessage) -> int:
    """Append one message; returns the log's new size."""
    return append_line(log_path, encode_message(message))


def append_message_span(
    log_path: Path | str, message: ConversationMessage, *, create: bool = True, known_end: int = -1
) -> tuple[int, int]:
    """Append one message to an existing conversation folder; the log's size before and after.

    FileNotFoundError when the folder is gone (deleted by another process); it is not recreated.
    ``create=False``: FileNotFoundError when the log itself is missing too (not created).
    ``known_end``: see :func:`append_records_span`.
    """
    return append_records_span(log_path, encode_message(message), make_parents=False, create=create, known_end=known_end)


def count_records(log_path: Path, start: int, end: int) -> int:
    """Non-blank, newline-terminated lines between two offsets (a cheap message count)."""
    count = 0
    pending = False  # inside a non-blank line whose newline is in a later chunk
    with open(log_path, "rb") as handle:
        handle.seek(start)
        remaining = end - start
        while remaining > 0:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)
            parts = chunk.split(b"\n")
            for line in parts[:-1]:
                if pending or line.strip():
                    count += 1
                pending = False
            pending = pending or bool(parts[-1].strip())
    return count


def _classify(raw: bytes, exc: BaseException) -> str:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    try:
        parse_json(raw)
    except ValueError as damaged:
        return f"{damaged} (torn or corrupt line)"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"not a valid message: {where}: {first.get('msg')}" if where else f"not a valid message: {first.get('msg')}"
    return f"not a valid message: {exc}"


def iter_log(log_path: Path, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes without the newline) for each non-blank line in the first ``limit`` bytes.

    A final line without a newline is yielded too (it is a torn write if it does not parse).
    """
    with open(log_path, "rb") as handle:
        offset = 0
        number = 0
        for raw in handle:
            if limit is not None and offset >= limit:
                break
            if limit is not None and offset + len(raw) > limit:
                raw = raw[: limit - offset]
            offset += len(raw)
            number += 1
            body = raw.rstrip(b"\r\n")
            if body.strip():
                yield number, body


def load_log(log_path: Path, limit: int | None = None) -> LoadResult:
    """Stream the log; damaged lines are skipped and reported, never fatal."""
    messages: list[ConversationMessage] = []
    problems: list[LogProblem] = []
    validate = _validate
    try:
        with gc_paused():  # cost linear in the log's length (see gcpause.py)
            for number, body in iter_log(log_path, limit):
                try:
                    messages.append(validate(body))
                except (ValidationError, ValueError, RecursionError, MemoryError) as exc:
                    problems.append(LogProblem(number, _classify(body, exc), body))
    except FileNotFoundError:
        pass
    return LoadResult(messages, problems)


def load_tail(log_path: Path, count: int, limit: int | None = None, *, block: int = 64 * 1024) -> list[ConversationMessage]:
    """The last ``count`` valid messages among the first ``limit`` bytes, read from the end backwards.

    Only whole lines count (a last line without its newline is a write in progress); damaged lines
    are skipped without a word: this is a quick first page, and a full :func:`load_log` reports them.
    """
    try:
        handle = open(log_path, "rb")
    except FileNotFoundError:
        return []
    with handle:
        end = os.fstat(handle.fileno()).st_size if limit is None else limit
        chunks: list[bytes] = []
        newlines = 0
        start = end
        # One line more than asked for: the first one read may be cut at the block boundary.
        while start > 0 and newlines <= count:
            size = min(block, start)
            start -= size
            handle.seek(start)
            chunk = handle.read(size)
            chunks.append(chunk)
            newlines += chunk.count(b"\n")
            block *= 2
    lines = b"".join(reversed(chunks)).split(b"\n")
    lines.pop()  # after the last newline: empty, or a line still being written
    if start > 0:
        lines = lines[1:]  # may begin mid-line
    validate = _validate
    messages: list[ConversationMessage] = []
    for raw in reversed(lines):
        if len(messages) == count:
            break
        body = raw.rstrip(b"\r")
        if body.strip():
            try:
                messages.append(validate(body))
            except (ValidationError, ValueError, RecursionError, MemoryError):
                continue
    messages.reverse()
    return messages


def write_quarantine(conversation_dir: Path, problems: list[LogProblem]) -> None:
    """Keep copies of damaged lines beside the log (rewritten only when they changed)."""
    path = conversation_dir / QUARANTINE_NAME
    if not problems:
        return
    data = b"".join(
        json.dumps(problem.to_record(), ensure_ascii=False).encode("utf-8") + b"\n" for problem in problems
    )
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    try:
        atomic_write_bytes(path, data)
    except OSError:
        pass  # Reporting must not fail a load; the damaged lines are still in the log itself.


def migrate_legacy(
    conversation_dir: Path,
    prepare: Callable[[ConversationMessage], ConversationMessage],
) -> LoadResult | None:
    """Turn a legacy ``messages.json`` array into ``messages.jsonl`` once; keep the original as .bak.

    Returns None when there is nothing to migrate. The caller holds the project lock.
    """
    legacy = conversation_dir / LEGACY_NAME
    log_path = conversation_dir / LOG_NAME
    if not legacy.exists():
        return None
    if log_path.exists():
        # A previous migration wrote the log but crashed before keeping the backup.
        os.replace(legacy, conversation_dir / LEGACY_BACKUP_NAME)
        return None
    raw = legacy.read_bytes()
    problems: list[LogProblem] = []
    messages: list[ConversationMessage] = []
    try:
        items = parse_json(raw)
        if not isinstance(items, list):
            raise ValueError("not a JSON array")
    except ValueError as exc:
        problems.append(LogProblem(0, f"legacy messages.json unreadable: {exc}", raw))
        items = []
    for index, item in enumerate(items, start=1):
        body = json.dumps(item, ensure_ascii=False).encode("utf-8")
        if not isinstance(item, dict):
            problems.append(LogProblem(index, "not a valid message: not an object", body))
            continue
        data = dict(item)
        data.setdefault("id", new_message_id())
        data.setdefault("createdAt", data.get("timestamp") or utc_now_iso())
        try:
            messages.append(prepare(ConversationMessage.model_validate(data)))
        except (ValidationError, ValueError) as exc:
            problems.append(LogProblem(index, _classify(body, exc), body))
    atomic_write_bytes(log_path, b"".join(encode_message(message) for message in messages))
    os.replace(legacy, conversation_dir / LEGACY_BACKUP_NAME)
    write_quarantine(conversation_dir, problems)
    return LoadResult(messages, problems, migrated_from_legacy=True)
