"""Texts from the core (errors, notices, approval summaries) translated when they are shown.

The core writes English (``crewagent.core.texts``), and the log keeps it so: a stored text stays
the same in every language. Here a text is matched back to its template, the template is
translated (context ``core``) and filled with the fields the English text carried; a field that
is itself a catalogued text (a reason, "the provider") is translated too. Anything else, such as a
provider's own message or a tool result written by an MCP server, is shown as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QCoreApplication

from crewagent.core import texts

#: ``{name}``, ``{name!r}``, ``{timeout:g}``: a named field of a template.
_FIELD = re.compile(r"\{(\w+)(![rsa])?(:[^{}]*)?\}")
#: Longer texts are data (a tool's output), never one of the catalogued sentences.
_MAX_CHARS = 4000


@dataclass(frozen=True)
class _Template:
    source: str
    pattern: re.Pattern[str]


def _compile(source: str) -> _Template:
    parts, seen, last = [], set(), 0
    for field in _FIELD.finditer(source):
        parts.append(re.escape(source[last : field.start()]))
        name = field.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        last = field.end()
    parts.append(re.escape(source[last:]))
    return _Template(source, re.compile("".join(parts), re.DOTALL))


@lru_cache(maxsize=1)
def _templates() -> tuple[_Template, ...]:
    # The most literal text first: "Write {path} ({size} bytes)" before "Write {path}".
    ordered = sorted(texts.catalogue().values(), key=lambda source: len(_FIELD.sub("", source)), reverse=True)
    return tuple(_compile(source) for source in ordered)


@lru_cache(maxsize=2048)
def _match(text: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The template ``text`` was made from and the values of its fields (language independent)."""
    if not text or len(text) > _MAX_CHARS:
        return None
    for template in _templates():
        found = template.pattern.fullmatch(text)
        if found is not None:
            return template.source, tuple(found.groupdict().items())
    return None


def translate_core(text: str, depth: int = 2) -> str:
    """``text`` in the UI language when it is one of the core's catalogued texts, else unchanged."""
    matched = _match(text)
    if matched is None:
        return text
    source, fields = matched
    translated = QCoreApplication.translate(texts.CONTEXT, source)
    values = {name: translate_core(value, depth - 1) if depth > 0 else value for name, value in fields}
    # The field values are already formatted (quoted by !r, numbers by :g): put them in as they are.
    return _FIELD.sub(lambda field: values.get(field.group(1), field.group(0)), translated)
