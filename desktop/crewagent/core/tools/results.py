"""Tool results as plain dicts, and the error codes the model may see in them (PACKAGE-FORMAT.md)."""

from __future__ import annotations

import errno
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
