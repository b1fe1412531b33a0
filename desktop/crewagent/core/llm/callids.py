"""Tool-call ids on the wire for providers that accept only 9-character alphanumeric ids (Mistral).

The log keeps its own ids (``call_...`` from OpenAI, ids the app generated for Ollama's id-less
calls). For such a provider every id of a request is mapped to a 9-character ``[a-zA-Z0-9]``
id: an id that already has that form is kept, any other is derived from a hash of it, so the
same log id always gets the same wire id, and a call and its result always agree. Ids in the
answer are mapped back, so a wire id the provider echoes becomes the log's id again; a new id
the provider makes up (already in its form) is kept as it is.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

_ALNUM9 = re.compile(r"^[a-zA-Z0-9]{9}$")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _derived(log_id: str, attempt: int) -> str:
    number = int.from_bytes(hashlib.sha256(f"{attempt}:{log_id}".encode()).digest()[:8], "big")
    out = []
    for _ in range(9):
        number, digit = divmod(number, len(_DIGITS))
        out.append(_DIGITS[digit])
    return "".join(out)


class Alnum9Ids:
    """The id mapping of one request: log id <-> wire id, one to one."""

    def __init__(self, log_ids: Iterable[str]) -> None:
        self._wire: dict[str, str] = {}
        self._log: dict[str, str] = {}
        ids = list(dict.fromkeys(log_ids))
        # Ids already in the provider's form keep it (first), so a derived id never takes theirs.
        for log_id in sorted(ids, key=lambda i: not _ALNUM9.match(i)):
            wire = log_id if _ALNUM9.match(log_id) and log_id not in self._log else None
            attempt = 0
            while wire is None or wire in self._log:
                wire = _derived(log_id, attempt)
                attempt += 1
            self._wire[log_id], self._log[wire] = wire, log_id

    def encode(self, log_id: str) -> str:
        return self._wire.get(log_id, log_id)

    def decode(self, wire_id: str) -> str:
        return self._log.get(wire_id, wire_id)

    @classmethod
    def for_messages(cls, messages: Iterable[Mapping[str, Any]]) -> Alnum9Ids:
        ids: list[str] = []
        for message in messages:
            for tool_call in message.get("tool_calls") or ():
                if isinstance(tool_call, Mapping) and isinstance(tool_call.get("id"), str):
                    ids.append(tool_call["id"])
            if isinstance(message.get("tool_call_id"), str):
                ids.append(message["tool_call_id"])
        return cls(ids)

    def apply(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` (an outgoing copy) with its ids in wire form."""
        calls = message.get("tool_calls")
        if calls:
            message["tool_calls"] = [
                {**c, "id": self.encode(c["id"])} if isinstance(c.get("id"), str) else c for c in calls
            ]
        if isinstance(message.get("tool_call_id"), str):
            message["tool_call_id"] = self.encode(message["tool_call_id"])
        return message
