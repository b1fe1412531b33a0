"""Reversible tool-name encoding for providers that accept only ``^[a-zA-Z0-9_-]{1,64}$``.

Our tools are named with dots (``fs.read``, ``ui.ask_user``); OpenAI and most compatible
providers reject such names in ``tools`` and in the ``tool_calls`` of history messages.

The scheme is a per-request table, built from every tool name of the request (the offered tools
and the tool calls in the history), so that decoding is exact:

1. a name that is already valid is sent unchanged;
2. otherwise every character outside ``[a-zA-Z0-9_-]`` becomes ``_`` and the result is cut to
   64 characters: ``fs.read`` -> ``fs_read`` (readable, which helps the model use it well);
3. when that readable form would be ambiguous -- it equals a valid name of the request, or two
   names map to it (``fs.read`` and ``fs:read``) -- each such name instead gets
   ``<readable, cut to 57>_<first 6 hex of sha1(name)>``: ``fs_read_8c2e1a``.

Rule 3 depends on the set of names only, not their order, so one tool set always gives the same
wire names. Decoding a name the table does not know returns it unchanged (a hallucinated name
then reaches the tool loop as-is and becomes ``TOOL_NOT_AVAILABLE``).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

_VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_MAX = 64


def is_valid_wire_name(name: str) -> bool:
    return bool(_VALID.match(name))


def readable_wire_name(name: str) -> str:
    """Rule 2 alone: the form a name takes when nothing collides (``fs.read`` -> ``fs_read``)."""
    return (_INVALID_CHAR.sub("_", name) or "_")[:_MAX]


def _hashed(name: str) -> str:
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:6]
    return f"{readable_wire_name(name)[: _MAX - 7]}_{digest}"


class ToolNameCodec:
    """original <-> wire names for one request."""

    def __init__(self, names: Iterable[str], *, enabled: bool = True) -> None:
        self._to_wire: dict[str, str] = {}
        self._to_original: dict[str, str] = {}
        unique = sorted(set(names))
        if not enabled:
            return
        valid = {n for n in unique if is_valid_wire_name(n)}
        invalid = [n for n in unique if n not in valid]
        readable = {n: readable_wire_name(n) for n in invalid}
        shared = Counter(readable.values())
        for name in invalid:
            wire = readable[name]
            if wire in valid or shared[wire] > 1:
                wire = _hashed(name)
            self._to_wire[name] = wire
            self._to_original[wire] = name

    def encode(self, name: str) -> str:
        return self._to_wire.get(name, name)

    def decode(self, wire: str) -> str:
        return self._to_original.get(wire, wire)

    @property
    def table(self) -> dict[str, str]:
        """original -> wire for every name that is renamed."""
        return dict(self._to_wire)


def wire_name_candidates(name: str) -> tuple[str, ...]:
    """Every form ``name`` can take on the wire (unchanged, readable, hashed), for a provider to match on."""
    if is_valid_wire_name(name):
        return (name,)
    return (readable_wire_name(name), _hashed(name))


class KnownNameDecoder:
    """wire -> original for a fixed set of tool names, without the request the wire names came from.

    ``crewagent import`` reads a messages[] that ``export`` (or another tool) wrote with wire
    names; the request's table is gone, so the names are matched against the app's own tools:
    a name that is one of them stays, a readable or hashed form of exactly one of them is mapped
    back (``fs_read`` -> ``fs.read``), anything else is kept as it is.
    """

    def __init__(self, known: Iterable[str]) -> None:
        names = set(known)
        claims: dict[str, set[str]] = {}
        for name in names:
            for wire in wire_name_candidates(name):
                if wire != name:
                    claims.setdefault(wire, set()).add(name)
        self._to_original = {
            wire: next(iter(owners)) for wire, owners in claims.items() if len(owners) == 1 and wire not in names
        }

    def decode(self, wire: str) -> str:
        return self._to_original.get(wire, wire)
