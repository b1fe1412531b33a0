"""YAML frontmatter of Markdown files: split, parse, deep-merge an update, render with the body untouched."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from crewagent.core.tools.results import ErrorCode, ToolFailure

#: libyaml's safe dumper too (Run mode writes the state on every step): the same YAML, faster.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_OPEN = "---"
#: libyaml's parser when PyYAML was built with it (the wheels are): the same safe loader, ~10x faster,
#: which a package of 200 step files notices (benchmarks/bench_packages.py).
_FAST_SAFE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CLOSE = ("---", "...")


class FrontmatterError(ToolFailure):
    def __init__(self, message: str):
        super().__init__(ErrorCode.E_INVALID_FRONTMATTER, message)


@dataclass(frozen=True)
class Document:
    """A Markdown file cut in two: ``data`` from the frontmatter, and everything after it verbatim."""

    data: dict[str, Any]
    body: str
    newline: str
    bom: bool
    had_frontmatter: bool


def parse(text: str) -> Document:
    """Split and parse ``text``; a file without frontmatter has ``data == {}`` and the whole text as body."""
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    first, sep, rest = text.partition("\n")
    newline = "\r\n" if first.endswith("\r") else "\n"
    if first.rstrip() != _OPEN:
        return Document({}, text, _guess_newline(text), bom, had_frontmatter=False)
    position = len(first) + len(sep)
    while position <= len(text):
        end = text.find("\n", position)
        line = text[position:] if end < 0 else text[position:end]
        if line.rstrip() in _CLOSE:
            yaml_text = text[len(first) + len(sep) : position]
            body = "" if end < 0 else text[end + 1 :]
            return Document(load_mapping(yaml_text), body, newline, bom, had_frontmatter=True)
        if end < 0:
            break
        position = end + 1
    raise FrontmatterError("The frontmatter starts with '---' but has no closing '---' line.")


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader without aliases: ``*name`` lets a few hundred bytes stand for billions of values.

    PyYAML shares the aliased object, so loading is cheap, but merging, rendering and turning
    the result into JSON expand it (the "billion laughs"): a model-written frontmatter of 300
    bytes took the process's memory. Run state never needs anchors.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in frontmatter; write the values out", event.start_mark
            )
        return super().compose_node(parent, index)


#: Frontmatter texts up to this size are remembered, parsed (see :func:`load_mapping`).
CACHE_MAX_CHARS = 16_384


def load_mapping(yaml_text: str) -> dict[str, Any]:
    """Parse YAML that must be a mapping (an empty document is ``{}``); aliases are refused.

    The last texts parsed are remembered by their content, and each call gets its own copy:
    a run's state is parsed up to four times a turn (the turn's start, the patch, the check that
    the patched text reads back the same, the re-read after the write), nearly always as a text
    seen just before. libyaml parses, but PyYAML builds the values in Python: ~0.3 ms a time.
    """
    if len(yaml_text) > CACHE_MAX_CHARS:
        return _load_mapping(yaml_text)
    return _copy(_load_remembered(yaml_text))


@lru_cache(maxsize=64)
def _load_remembered(yaml_text: str) -> dict[str, Any]:
    return _load_mapping(yaml_text)  # never handed out: load_mapping returns copies


def _copy(value: Any) -> Any:
    """A copy of parsed YAML that shares nothing mutable with ``value`` (scalars are immutable)."""
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    if isinstance(value, set):
        return set(value)
    return value


def _load_mapping(yaml_text: str) -> dict[str, Any]:
    try:
        # An alias is always written '*name': text without a '*' has none, and libyaml's parser (the
        # same safe loader, ~10x faster) can read it. Anything else goes through the alias check.
        loader = _FAST_SAFE_LOADER if "*" not in yaml_text else _NoAliasLoader
        value = yaml.load(yaml_text, Loader=loader)  # noqa: S506 - safe loaders only
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"The frontmatter is not valid YAML: {_yaml_problem(exc)}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError(f"The frontmatter must be a mapping of keys to values, not a {type(value).__name__}.")
    return value


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else str(problem)


def _guess_newline(text: str) -> str:
    return "\r\n" if "\r\n" in text[:4096] else "\n"


def merge(current: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, anything else (lists too) replaces, ``None`` deletes."""
    merged = dict(current)
    for key, value in update.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = _without_nones(value)
    return merged


def _without_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_nones(item) for key, item in value.items() if item is not None}
    return value


def render(document: Document, data: dict[str, Any]) -> str:
    """The file with ``data`` as its frontmatter and the original body, newline style and BOM."""
    try:
        dumped = _dump_mapping(data)
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"The new frontmatter cannot be written as YAML: {exc}") from None
    if data and load_mapping(dumped) != data:
        raise FrontmatterError("The new frontmatter does not survive a YAML round trip.")
    block = "" if not data else dumped
    nl = document.newline
    text = f"{_OPEN}{nl}{block.replace(chr(10), nl)}{_OPEN}{nl}"
    if not document.had_frontmatter and document.body and not document.body.startswith(("\n", "\r\n")):
        text += nl  # keep a blank line between a new frontmatter and existing text
    return ("\ufeff" if document.bom else "") + text + document.body


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096)


#: The YAML of one top-level ``key: value`` entry, by the key and the value's ``repr``.
_ENTRIES: dict[tuple[str, str], str] = {}
_ENTRIES_MAX = 512
#: Values whose ``repr`` is longer are dumped every time (a long list is not kept twice).
_ENTRY_MAX_CHARS = 2048


def _dump_mapping(data: dict[str, Any]) -> str:
    """``yaml.dump(data)`` in block style, made from the YAML of each top-level entry.

    A block mapping's top-level entries are dumped independently of each other (the whole dump is
    the entries' dumps one after the other: tests/core/test_frontmatter_dump.py checks it for any
    mapping), so an entry whose key and value were dumped before is not dumped again: a state
    write changes two or three keys of a dozen, and PyYAML's representer and emitter cost about
    0.4 ms for a run's state. The ``repr`` of a value tells apart what YAML writes differently
    (``1``, ``1.0``, ``True`` and ``'1'``; the order of a mapping's keys).
    """
    if not all(type(key) is str for key in data):
        return _dump(data)
    chunks = []
    for key, value in data.items():
        marker = repr(value)
        if len(marker) > _ENTRY_MAX_CHARS:
            chunks.append(_dump({key: value}))
            continue
        chunk = _ENTRIES.get((key, marker))
        if chunk is None:
            chunk = _dump({key: value})
            if len(_ENTRIES) >= _ENTRIES_MAX:
                _ENTRIES.clear()
            _ENTRIES[(key, marker)] = chunk
        chunks.append(chunk)
    return "".join(chunks)


def jsonable(value: Any) -> Any:
    """YAML values as JSON values (dates become ISO strings), for tool results."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime.date | datetime.datetime | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value
