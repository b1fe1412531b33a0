"""What search sees of a message: its readable text, how text and queries are folded, the snippet.

The scan and the index both go through these functions, so they agree on every answer: a
message matches when its folded readable text contains the folded query (case-insensitive
substring, any script). A tool result is searched as the text a person reads in it, not as JSON
syntax: the string values of a JSON result, in order (a JSON string result is its text).
"""

from __future__ import annotations

import re
from typing import Any

import pydantic_core

#: Characters of context on each side of the first match in a snippet.
SNIPPET_CONTEXT = 36
#: The note store/offload.py appends to the preview of an offloaded tool output.
_FULL_OUTPUT_NOTE = "\n\n[Full output: "


def clean(text: str) -> str:
    """Text as it can be stored and matched anywhere: no NUL (SQLite's FTS parser stops at it),
    no lone surrogates (not UTF-8)."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def fold(text: str) -> str:
    """The case-insensitive form both the text and the query are compared in."""
    return text.casefold()


def needle_of(query: str) -> str:
    """The folded text a query looks for ("" when it is blank). A query is text, never syntax."""
    return clean(query).casefold().strip()


def readable_text(record: Any) -> str:
    """The readable text of one parsed log line (a message as a JSON object); "" when it has none."""
    if not isinstance(record, dict):
        return ""
    content = record.get("content")
    if isinstance(content, list):  # content parts (a message with images): their text
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text")
    if not isinstance(content, str) or not content:
        return ""
    if record.get("role") == "tool":
        return clean(_decoded(content, offloaded=bool(record.get("fullOutputPath"))))
    return clean(content)


def _decoded(content: str, *, offloaded: bool) -> str:
    """A tool result's readable text: the strings of a JSON result, else the text as it is."""
    body = content
    if offloaded:
        cut = body.rfind(_FULL_OUTPUT_NOTE)
        if cut >= 0:
            body = body[:cut]  # a preview: the first characters of the JSON, cut anywhere
    start = body.lstrip()[:1]
    if start not in ("{", "[", '"'):
        return content
    try:
        value = pydantic_core.from_json(body, allow_partial=True, cache_strings=False)
    except ValueError:
        return content
    if isinstance(value, str):
        return value
    if not isinstance(value, (dict, list)):
        return content
    return "\n".join(_strings(value))


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item:
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


def match_at(text: str, needle: str) -> int:
    """Where ``needle`` (folded) starts in ``text``'s folded form; -1 when it is not there."""
    return fold(text).find(needle) if needle else -1


def snippet(text: str, needle: str) -> str:
    """The first match of ``needle`` in ``text`` with some context, on one line ("" when none)."""
    start = match_at(text, needle)
    if start < 0:
        return ""
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), start + len(needle) + SNIPPET_CONTEXT)
    body = " ".join(text[left:right].split())
    if not _MARKUP_CHARS.intersection(needle):  # what the user typed is shown as typed
        body = _plain(body)
    return ("…" if left > 0 else "") + body + ("…" if right < len(text) else "")


#: Markdown that reads as noise in a one-line snippet: emphasis and strike marks, code ticks,
#: heading marks, and a link's target (its text is kept). Single ``*`` / ``_`` stay (snake_case).
_MARKUP_CHARS = frozenset("*_~`#[]()")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*(?:\)|$)")  # a target cut by the snippet's end goes too
_MARKS = re.compile(r"\*\*|__|~~|`+|(?:^|(?<=\s))#{1,6}\s")


def _plain(body: str) -> str:
    """``body`` without its Markdown marks, as the message reads when rendered."""
    return _MARKS.sub("", _LINK.sub(r"\1", body))
