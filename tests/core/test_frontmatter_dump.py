"""core/tools/frontmatter.py: the frontmatter is rendered entry by entry, byte for byte as one dump would be."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core.tools import frontmatter
from tests.examples import examples

# Texts YAML treats specially: empty, booleans and numbers of YAML 1.1, indicators, block scalars
# with kept trailing line breaks (``|+``), line breaks of every kind, long lines, plus any text.
_SPECIAL = st.sampled_from(
    ["", "yes", "No", "~", "null", "1.1", "0o7", "1e3", "- a", "a: b", "#c", "...", "---", "|", "'", '"', "\t",
     "a\n", "a\n\n", "\n", " x", "x ", "\x85", "\u2028", "é中😀", "x" * 200, "a " * 70]
)
_TEXT = _SPECIAL | st.text(max_size=30)
_SCALAR = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT
    | st.dates() | st.datetimes(timezones=st.just(datetime.timezone.utc))
)
_VALUE = st.recursive(
    _SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=12
)
# Keys: short, long (over 128 characters YAML writes an explicit ``? key``), and ones that need quotes.
_KEY = st.text(min_size=1, max_size=12) | _SPECIAL.filter(bool) | st.just("k" * 130)


def _one_dump(data: dict[Any, Any]) -> str:
    return yaml.dump(data, Dumper=frontmatter._DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096)


# Each example dumps the mapping three times; 80 draw each special text above many times over
# (HYPOTHESIS_PROFILE=thorough, 800, passed when this was written).
@pytest.mark.slow  # several seconds of CPU: hypothesis draws nested values, each dumped three times
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEY, _VALUE, min_size=1, max_size=6))
def test_the_entries_dumped_one_by_one_are_the_whole_dump(data: dict[str, Any]) -> None:
    whole = _one_dump(data)
    assert frontmatter._dump_mapping(data) == whole
    assert frontmatter._dump_mapping(data) == whole  # the second time from the remembered entries


def test_a_state_write_dumps_only_the_entries_it_changed(monkeypatch: Any) -> None:
    # Start from no remembered entries: another test of this process may have dumped these ones.
    monkeypatch.setattr(frontmatter, "_ENTRIES", {})
    state = {
        "schemaVersion": "1.1", "workflowType": "notes", "currentNodeId": "write", "stepsCompleted": [],
        "variables": {"topic": "x"}, "decisionLog": [], "runId": "run_0123", "updatedAt": "2026-11-26T10:00:00Z",
    }
    document = frontmatter.parse(frontmatter.render(frontmatter.parse("body\n"), state))
    dumped: list[dict[str, Any]] = []
    real_dump = frontmatter._dump

    def counting(data: dict[str, Any]) -> str:
        dumped.append(data)
        return real_dump(data)

    monkeypatch.setattr(frontmatter, "_dump", counting)
    new_data = frontmatter.merge(document.data, {"currentNodeId": "check", "stepsCompleted": ["write"]})
    text = frontmatter.render(document, new_data)

    assert dumped == [{"currentNodeId": "check"}, {"stepsCompleted": ["write"]}]
    assert text == "---\n" + _one_dump(new_data) + "---\n" + document.body
    assert frontmatter.parse(text).data == new_data


def test_keys_that_are_not_strings_are_dumped_whole() -> None:
    document = frontmatter.parse("---\n1: one\n2.5: half\n---\n")
    assert frontmatter.render(document, {**document.data, "a": 2}) == "---\n1: one\n2.5: half\na: 2\n---\n"
