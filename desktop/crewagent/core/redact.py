"""Credentials out of every text the app stores, sends back to the model or logs.

A base URL such as ``http://user:secret@host/v1?api_key=k`` ends up in error messages
("Network error talking to ..."), which are persisted in the log, shown, and sent to the model
on "continue". :func:`redact` replaces, anywhere in a text:

- the user-info of a URL (``scheme://user:secret@host`` -> ``scheme://***@host``);
- the value of a query parameter whose name looks like a credential (``key``, ``api_key``,
  ``apikey``, ``token``, ``access_token``, ``sig``, ``signature``, ``password``, ``secret`` and
  names ending in ``_key``, ``-token``, ``_secret`` ...) -> ``name=***``;
- the credential of an ``Authorization: Bearer/Basic ...`` text.

It is applied where such texts are made: :class:`~crewagent.core.llm.errors.LlmError` (every
LLM error message), tool error results (tools/results.py), the loop's error parts, the audit's
arguments, and every log record once :func:`install_log_redaction` has run (the command line
does it first thing).
"""

from __future__ import annotations

import logging
import re
import traceback
from typing import Any

MASK = "***"

# scheme://user-info@ : up to the last '@' before the first '/', '?', '#' or whitespace (a raw
# '@' in a password is common). A quote ends neither this nor a query value (RFC 3986 allows ')
# : masking a little too much beats a leak.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#\"<>]+)@")
_PARAM = re.compile(r"([?&;]|\b)([A-Za-z0-9_.\-]{1,64})=([^&#\s\"<>]+)")
_SENSITIVE = re.compile(
    r"(?i)^(?:[a-z0-9._\-]*[_.\-])?"
    r"(?:key|apikey|api[_-]?key|token|sig|signature|password|passwd|pwd|secret|credentials?|auth)$"
)
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/\-]{8,}=*")


def redact(text: str) -> str:
    """``text`` with URL user-info, key-like query values and bearer tokens replaced by ``***``."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    text = _PARAM.sub(_param, text)
    return _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def _param(match: re.Match[str]) -> str:
    lead, name, value = match.group(1), match.group(2), match.group(3)
    if value == MASK or not _SENSITIVE.match(name):
        return match.group(0)
    # Outside a query (no '?', '&' or ';' before it) only a credential-looking assignment counts.
    return f"{lead}{name}={MASK}"


def redact_value(value: Any) -> Any:
    """``value`` with every string in it (dict keys excepted) redacted; for JSON-like data."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    return value


_installed = False


def install_log_redaction() -> None:
    """Redact every log record of the process, whatever handler writes it (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    make_record = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler to report
            return record
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[0] is not None:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            record.exc_text = redact(text)
        return record

    logging.setLogRecordFactory(factory)
