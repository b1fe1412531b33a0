"""Parsing untrusted JSON (files on disk, user input, model output): every failure is a ValueError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crewagent.core import bigjson


class DamagedJsonError(ValueError):
    """The text is not JSON this app can hold: invalid, not UTF-8, nested too deeply, too large."""


def parse_json(data: bytes | str, *, head: int | None = None) -> Any:
    """The value of ``data``; raises :class:`DamagedJsonError` with a one-line reason.

    With ``head``, a string of megabytes comes back as its first ``head`` characters
    (:func:`bigjson.loads_heads`: for previews, which need not decode the rest).

    The parser is pydantic's (jiter): it has a nesting limit where ``json.loads`` would raise
    ``RecursionError``, and it is the same limit the message log is read back with, so a value
    accepted here can be stored and loaded again. A text of megabytes is parsed in slices
    (core/bigjson.py: same value, same errors, no long hold of the GIL).
    """
    if isinstance(data, bytes):
        raw = data
        try:
            data = bigjson.decode_utf8(raw)
        except UnicodeDecodeError:
            try:
                raw.decode("utf-8")  # the byte counted from the start, not from a slice
            except UnicodeDecodeError as exc:
                raise DamagedJsonError(f"not valid UTF-8 text (byte {exc.start})") from None
            raise
    try:
        return bigjson.loads(data) if head is None else bigjson.loads_heads(data, head)
    except ValueError as exc:
        raise DamagedJsonError(f"not valid JSON: {_first_line(exc)}") from None
    except (RecursionError, MemoryError) as exc:
        raise DamagedJsonError(f"not valid JSON: too large or nested too deeply ({type(exc).__name__})") from None


def read_json_file(path: Path) -> Any:
    """Parse the file at ``path``; OSError when it cannot be read, DamagedJsonError when not JSON."""
    with open(path, "rb") as handle:
        raw = handle.read()
    return parse_json(raw)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
