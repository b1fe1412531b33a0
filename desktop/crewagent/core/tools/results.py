"""Tool results as plain dicts, and the error codes the model may see in them (PACKAGE-FORMAT.md)."""

from __future__ import annotations

import errno
import json
from enum import StrEnum
from typing import Any

from crewagent.core.redact import redact


class ErrorCode(StrEnum):
    """Codes of ``{"ok": false, "error": {"code", "message"}}`` results.

    The first group is listed in PACKAGE-FORMAT.md; the rest are this port's additions for cases
    that list does not name. OS errors keep their errno name (``ENOENT``, ``EACCES``, ``ENOSPC``...).
    """

    ENOENT = "ENOENT"
    E_SANDBOX_VIOLATION = "E_SANDBOX_VIOLATION"
    E_READ_LIMIT = "E_READ_LIMIT"
    E_WRITE_LIMIT = "E_WRITE_LIMIT"
    E_INVALID_FRONTMATTER = "E_INVALID_FRONTMATTER"
    E_SCHEMA_VALIDATION = "E_SCHEMA_VALIDATION"
    E_INVALID_TRANSITION = "E_INVALID_TRANSITION"
    TOOL_NOT_AVAILABLE = "TOOL_NOT_AVAILABLE"
    TOOL_ARGS_INVALID_JSON = "TOOL_ARGS_INVALID_JSON"
    TOOL_EXEC_FAILED = "TOOL_EXEC_FAILED"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"
    TOOL_INTERRUPTED = "TOOL_INTERRUPTED"
    # Additions of this port.
    E_CONFLICT = "E_CONFLICT"
    E_BINARY_FILE = "E_BINARY_FILE"
    E_NOT_A_FILE = "E_NOT_A_FILE"
    E_NOT_A_DIRECTORY = "E_NOT_A_DIRECTORY"
    E_PATCH_FAILED = "E_PATCH_FAILED"
    E_USER_DENIED = "E_USER_DENIED"
    E_USER_CANCELLED = "E_USER_CANCELLED"
    #: A write to the state of a completed run without the user's confirmation (Run mode).
    STATE_CHANGE_REQUIRES_CONFIRMATION = "STATE_CHANGE_REQUIRES_CONFIRMATION"
    # Command tools (terminal.run, shell.exec).
    COMMAND_NOT_FOUND = "COMMAND_NOT_FOUND"
    SHELL_NOT_AVAILABLE = "SHELL_NOT_AVAILABLE"
    CWD_NOT_ALLOWED = "CWD_NOT_ALLOWED"
    EXEC_TIMEOUT = "EXEC_TIMEOUT"
    EXEC_ABORTED = "EXEC_ABORTED"


def ok(**fields: Any) -> dict[str, Any]:
    """A success result: ``{"ok": True, **fields}``."""
    return {"ok": True, **fields}


def error(code: str, message: str, **details: Any) -> dict[str, Any]:
    """A failure result the model can read; ``details`` go next to code and message (credentials redacted)."""
    return {"ok": False, "error": {"code": str(code), "message": redact(message), **details}}


def is_error(result: dict[str, Any], code: str | None = None) -> bool:
    if result.get("ok") is not False:
        return False
    return code is None or result.get("error", {}).get("code") == code


def error_code(result: dict[str, Any]) -> str | None:
    """The error code of a result, None for a success."""
    if result.get("ok") is not False:
        return None
    code = result.get("error", {}).get("code")
    return str(code) if code is not None else None


def os_error(exc: OSError, shown_path: str) -> dict[str, Any]:
    """An environment failure (missing file, permission, disk full) as a result, named by errno."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    reason = exc.strerror or str(exc)
    return error(code, f"{shown_path}: {reason}")


class ToolFailure(Exception):
    """Raised inside a tool's own helpers to stop with an error result; the tool catches it.

    It never leaves a tool: handlers turn it into ``failure.result``.
    """

    def __init__(self, code: str, message: str, **details: Any):
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.details = details

    @property
    def result(self) -> dict[str, Any]:
        return error(self.code, self.message, **self.details)


#: Above this many characters an output is parsed in short steps (see _loads_in_steps).
LARGE_OUTPUT_CHARS = 1_000_000
#: String literals at least this long are decoded apart, a slice at a time.
_BIG_STRING = 65_536
_SLICE = 262_144
_MARK = "\x00crewagent-big-string-"


def _loads_in_steps(text: str) -> Any:
    """``json.loads`` for a large text that holds the GIL for milliseconds at a time, not for the whole text.

    The C parser holds the GIL from start to end: parsing a 30 MB output in the worker froze the
    GUI thread for as long (a second here). Here the big string literals (where the megabytes of
    an output are) are decoded a slice at a time, the rest of the document, now small, in one go.
    """
    spans = _big_strings(text)
    if not spans:
        return json.loads(text)
    pieces: list[str] = []
    big: list[str] = []
    last = 0
    for number, (start, end) in enumerate(spans):
        pieces.append(text[last:start])
        pieces.append(json.dumps(f"{_MARK}{number}"))
        big.append(_decode_string(text, start + 1, end - 1))
        last = end
    pieces.append(text[last:])
    return _restore(json.loads("".join(pieces)), big)


def _big_strings(text: str) -> list[tuple[int, int]]:
    """(start, end) of each string literal of ``text`` at least _BIG_STRING long, quotes included."""
    spans = []
    opened = -1
    position = text.find('"')
    while position >= 0:
        backslashes = 0
        while position - backslashes > 0 and text[position - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:  # not an escaped quote
            if opened < 0:
                opened = position
            else:
                if position + 1 - opened >= _BIG_STRING:
                    spans.append((opened, position + 1))
                opened = -1
        position = text.find('"', position + 1)
    return spans


def _decode_string(text: str, start: int, end: int) -> str:
    """The JSON string body ``text[start:end]`` decoded, a slice at a time.

    A slice ends where none of the 6 characters before it is a backslash, so that no escape
    (``\\uXXXX`` is the longest; a surrogate pair is two) is cut in two.
    """
    parts = []
    position = start
    while position < end:
        cut = min(end, position + _SLICE)
        if cut < end:
            floor = max(position + 1, cut - 4096)
            while cut > floor and "\\" in text[max(position, cut - 6):cut]:
                cut -= 1
            if cut == floor:  # backslashes everywhere: the rest in one go
                cut = end
        parts.append(json.loads('"' + text[position:cut] + '"'))
        position = cut
    return "".join(parts)


def _restore(value: Any, big: list[str]) -> Any:
    if isinstance(value, str):
        if value.startswith(_MARK):
            return big[int(value[len(_MARK):])]
        return value
    if isinstance(value, list):
        return [_restore(item, big) for item in value]
    if isinstance(value, dict):
        return {_restore(key, big): _restore(item, big) for key, item in value.items()}
    return value


def readable(text: str) -> str:
    """A stored tool output as a person reads it (the full-output viewer shows this).

    A JSON string is its text; other JSON is indented, and the multi-line text fields of an
    object (an ``fs.read``'s ``content``) follow it as text under their name, since inside JSON
    their newlines would show as ``\\n``. Anything else is returned as it is.
    """
    if not text.lstrip().startswith(("{", "[", '"')):
        return text
    try:
        value = json.loads(text) if len(text) < LARGE_OUTPUT_CHARS else _loads_in_steps(text)
    except ValueError:
        return text
    if isinstance(value, str):
        return value
    texts: dict[str, str] = {}
    if isinstance(value, dict):
        texts = {key: field for key, field in value.items() if isinstance(field, str) and "\n" in field}
        value = {key: field for key, field in value.items() if key not in texts}
    parts = [json.dumps(value, indent=2, ensure_ascii=False)]
    for key, field in texts.items():
        # ASCII rules: one wider character would widen (copy) megabytes of ASCII text.
        parts += [f"\n\n--- {key} ---\n", field]
    return "".join(parts)  # one copy of the text, not one per field
