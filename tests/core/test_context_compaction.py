"""Compaction inside the current turn, item by item (issue 15, item 9)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core import bigjson
from crewagent.core.context import ContextBudget, EstimateCounter, build_llm_messages
from crewagent.core.context.compaction import shorten_arguments
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages
from tests.core.context_helpers import calls, msg, result

EST = EstimateCounter()
ALIAS = "@state/logs/tool-results/c/x.json"


def test_large_argument_values_become_previews_and_the_object_keeps_its_keys() -> None:
    arguments = json.dumps({"path": "@project/a.md", "content": "x" * 10_000, "edits": [{"old": "y" * 5_000}], "mode": "w"})
    short = json.loads(shorten_arguments(arguments, 500, ALIAS))
    assert short["path"] == "@project/a.md" and short["mode"] == "w"
    assert short["content"].startswith("x" * 500) and ALIAS in short["content"] and len(short["content"]) < 700
    assert isinstance(short["edits"], str) and ALIAS in short["edits"]


def test_arguments_that_are_not_a_json_object_become_a_preview_object() -> None:
    for arguments in ("not json " * 1_000, json.dumps(["a" * 5_000])):
        short = json.loads(shorten_arguments(arguments, 500, None))
        assert short["argumentsPreview"] == arguments[:500] and "omitted from this request" in short["note"]


def test_an_offloaded_result_keeps_its_own_file_and_nothing_is_spilled() -> None:
    ids = [f"c{i}" for i in range(30)]
    offloaded = "o" * 500 + f"\n\n[Full output: {ALIAS}]"
    log = [
        msg("user", "go"),
        calls(*ids),
        *(result(i, offloaded, fullOutputPath=ALIAS, fullOutputBytes=80_000) for i in ids),
    ]
    r = build_llm_messages(log, budget=ContextBudget(max_chars=12_000), counter=EST, conversation_id="c")
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    notes = [m["content"] for m in r.messages if m["role"] == "tool"]
    assert notes[0] == f"[Shortened for this request: 80000 bytes in all. The full output is at {ALIAS}; read it with fs.read if you need more.]"
    assert notes[-1] == offloaded  # the newest, as stored, once the request fits
    assert r.spills == []


def test_older_results_previewed_by_compression_name_a_file_too() -> None:
    log = [msg("user", "first"), calls("a"), result("a", "r" * 9_000), msg("assistant", "done"), msg("user", "next")]
    r = build_llm_messages(log, budget=ContextBudget(max_chars=12_000), counter=EST, conversation_id="c")
    assert r.ok and r.debug["compression"]["stages"] == ["previews"]
    alias = f"@state/logs/tool-results/c/{log[2].id}.json"
    tool = next(m for m in r.messages if m["role"] == "tool")
    assert tool["content"].startswith("r" * 500) and f"Full output: {alias}" in tool["content"]
    assert [(s.alias, s.text) for s in r.spills] == [(alias, "r" * 9_000)]
    assert r.debug["spilledAliases"] == [alias]


_LEAF = st.text(st.sampled_from(list('ab"\\\n中😀')), max_size=700) | st.integers() | st.none()


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.dictionaries(st.sampled_from(["path", "content", "mode", "edits"]), _LEAF | st.lists(_LEAF, max_size=3), max_size=4),
    keep=st.sampled_from([0, 5, 500]),
)
def test_shortened_arguments_are_those_of_the_whole_parse_when_long_strings_are_parsed_only_in_part(value: Any, keep: int) -> None:
    # Every text counts as large and long strings are cut after a few characters: the preview,
    # which decodes only the start of a long value, must give what the whole parse gave.
    arguments = json.dumps(value, ensure_ascii=False)
    whole = shorten_arguments(arguments, keep, ALIAS)
    saved = bigjson.LARGE_CHARS, bigjson.SLICE_CHARS
    bigjson.LARGE_CHARS, bigjson.SLICE_CHARS = 0, 3
    try:
        assert shorten_arguments(arguments, keep, ALIAS) == whole
    finally:
        bigjson.LARGE_CHARS, bigjson.SLICE_CHARS = saved
