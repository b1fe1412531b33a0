"""A stored tool output as the full-output viewer shows it: decoded, never with \\n escapes for line breaks."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core.tools import results
from crewagent.core.tools.results import readable


@given(st.text())
def test_a_json_string_result_is_shown_as_its_text(text: str) -> None:
    assert readable(json.dumps(text)) == text


@given(st.text(min_size=1).map(lambda body: body + "\n" + body), st.dictionaries(st.sampled_from(["ok", "path", "size"]), st.integers() | st.booleans()))
def test_the_multi_line_text_of_an_object_follows_it_verbatim(content: str, fields: dict[str, object]) -> None:
    shown = readable(json.dumps({**fields, "content": content}))
    head, _, rest = shown.partition("\n\n--- content ---\n")
    assert rest == content  # its line breaks real, nothing escaped
    assert json.loads(head) == fields


def test_an_object_is_indented_and_single_line_strings_stay_in_it() -> None:
    shown = readable('{"ok":true,"path":"a.md","items":[1,2]}')
    assert shown == '{\n  "ok": true,\n  "path": "a.md",\n  "items": [\n    1,\n    2\n  ]\n}'


def test_text_that_is_not_json_is_shown_as_it_is() -> None:
    for text in ("plain words\nand lines", "{not json", "", "  [1, 2", "42"):
        assert readable(text) == text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_JSON, ascii_only=st.booleans())
def test_a_large_output_parsed_in_steps_is_what_json_loads_gives(monkeypatch: pytest.MonkeyPatch, value: object, ascii_only: bool) -> None:
    """Big strings are decoded a slice at a time (so the GUI thread is not frozen meanwhile); tiny
    thresholds here put slice cuts next to escapes, quotes, backslashes and surrogate pairs."""
    monkeypatch.setattr(results, "_BIG_STRING", 6)
    monkeypatch.setattr(results, "_SLICE", 7)
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert results._loads_in_steps(text) == json.loads(text)


def test_a_file_read_result_of_megabytes_shows_its_content_whole() -> None:
    # 60,000 lines: 2.0 M characters of content, 3.2 M of JSON (over twice LARGE_OUTPUT_CHARS: the
    # large path) decoded in a dozen _SLICE steps through one string. 300,000 lines (16 MB of JSON,
    # 5x the CPU) took the same path through more steps of the same code; bench_output_viewer.py
    # times a 30 MB output.
    content = "".join(f"line {n:07d} \"quoted\" \\ tab\t é 😀\n" for n in range(60_000))
    dumped = json.dumps({"ok": True, "path": "@project/big.log", "content": content})
    assert len(dumped) > 2 * results.LARGE_OUTPUT_CHARS and len(dumped) > 10 * results._SLICE
    shown = readable(dumped)
    assert len(shown) > results.LARGE_OUTPUT_CHARS
    assert shown.endswith("\n--- content ---\n" + content)
