"""core/bigjson.py: large JSON parsed and written in slices gives what the one-call forms give."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core import bigjson


@contextmanager
def tiny_slices() -> Iterator[None]:
    """Every text counts as large and is cut every few characters: each cut is exercised."""
    saved = bigjson.LARGE_CHARS, bigjson.SLICE_CHARS
    bigjson.LARGE_CHARS, bigjson.SLICE_CHARS = 0, 3
    try:
        yield
    finally:
        bigjson.LARGE_CHARS, bigjson.SLICE_CHARS = saved


# Escapes of every kind: quotes, backslashes, control characters, astral characters (surrogate
# pairs when written ASCII-only), and characters that look like the parts of an escape.
_ALPHABET = st.sampled_from(list('ab"\\/\n\t\x00\x1fu0dD8é中😀\u2028')) | st.characters(exclude_categories=("Cs",))
_TEXT = st.text(_ALPHABET, max_size=40)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, ascii_only=st.booleans())
def test_loads_in_slices_gives_the_value_of_one_call(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    with tiny_slices():
        assert bigjson.loads(text) == pydantic_core.from_json(text, cache_strings=False) == value


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON)
def test_dumps_in_slices_loads_back_to_the_value(value: Any) -> None:
    with tiny_slices():
        text = bigjson.dumps(value)
        assert json.loads(text) == value
        assert bigjson.encode_utf8(text) == b"".join(bigjson.encode_utf8_pieces(text)) == text.encode("utf-8")
        assert bigjson.decode_utf8(text.encode("utf-8")) == text


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.sampled_from(list('{}[]:,"\\u0dD8 a1\n')), max_size=30))
def test_not_json_is_refused_as_one_call_refuses_it(text: str) -> None:
    try:
        expected: Any = pydantic_core.from_json(text, cache_strings=False)
    except ValueError as exc:
        with tiny_slices(), pytest.raises(ValueError) as raised:
            bigjson.loads(text)
        assert str(raised.value) == str(exc)
    else:
        with tiny_slices():
            assert bigjson.loads(text) == expected


def test_megabytes_of_arguments_are_parsed_and_written_in_slices_of_the_real_size() -> None:
    content = "line with \"quotes\", a tab\t, 中文 and 😀\n" * 80_000  # ~3 MB of JSON: a dozen slices
    arguments = json.dumps({"path": "@project/big.txt", "content": content})
    assert len(arguments) > 2 * bigjson.LARGE_CHARS
    assert bigjson.loads(arguments) == {"path": "@project/big.txt", "content": content}
    line = bigjson.dumps({"tool_calls": [{"function": {"name": "fs.write", "arguments": arguments}}]})
    assert json.loads(line)["tool_calls"][0]["function"]["arguments"] == arguments
    assert bigjson.utf8_size(content) == len(content.encode("utf-8"))


def test_a_log_line_of_megabytes_is_written_and_read_back_in_slices(tmp_path: Any) -> None:
    from crewagent.core.messages import ConversationMessage, ToolCall
    from crewagent.core.store.log import append_message_line, load_log, load_tail

    arguments = json.dumps({"path": "@project/a.txt", "content": "x\"y\\z é 😀\n" * 40_000})
    call = ToolCall.model_validate({"id": "call_1", "function": {"name": "fs.write", "arguments": arguments}})
    message = ConversationMessage.new("assistant", None, tool_calls=[call])
    assert len(message.to_log_line()) > bigjson.LARGE_CHARS
    assert json.loads(message.to_log_line()) == json.loads(message.model_dump_json(exclude_unset=True))
    assert message.to_log_bytes(b"\n") == message.to_log_line().encode("utf-8") + b"\n"
    log = tmp_path / "messages.jsonl"
    append_message_line(log, message)
    append_message_line(log, ConversationMessage.new("tool", "{}", tool_call_id="call_1"))
    loaded = load_log(log)
    assert loaded.problems == [] and loaded.messages[0] == message
    assert load_tail(log, 2)[0] == message


def test_bytes_of_megabytes_that_are_not_utf8_are_refused_with_the_place_counted_from_the_start() -> None:
    from crewagent.core.jsonparse import DamagedJsonError, parse_json

    with pytest.raises(DamagedJsonError, match=r"not valid UTF-8 text \(byte 2000001\)"):
        parse_json(b'"' + b"a" * 2_000_000 + b'\xff"')
    assert parse_json(json.dumps({"k": "é" * 1_500_000}).encode()) == {"k": "é" * 1_500_000}


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON)
def test_dumps_to_utf8_is_the_utf8_of_dumps(value: Any) -> None:
    with tiny_slices():
        assert bigjson.dumps_utf8(value, b"\n") == bigjson.dumps(value).encode("utf-8") + b"\n"
        assert bigjson.dumps_utf8(value) == pydantic_core.to_json(value)  # the one-call serialiser's bytes


_BODY_TEXT = st.text(st.sampled_from(list('ab"\\\\')), max_size=30)


def _closing_quote_by_regex(text: str, start: int) -> int:
    """Where the regular expression of a string body, run over the whole text in one call, ends it."""
    stop = bigjson._BODY.match(text, start).end()  # type: ignore[union-attr]
    return stop if stop < len(text) and text[stop] == '"' else -1


@settings(max_examples=150)
@given(text=_BODY_TEXT, start=st.integers(0, 30), slice_chars=st.integers(1, 8), escaped=st.integers(1, 4))
def test_the_closing_quote_is_where_the_regular_expression_ends_the_body(text: str, start: int, slice_chars: int, escaped: int) -> None:
    saved = bigjson.SLICE_CHARS, bigjson._MAX_ESCAPED_QUOTES
    # Slices that end inside escapes and right before quotes; slices finished by the regular
    # expression after a few escaped quotes.
    bigjson.SLICE_CHARS, bigjson._MAX_ESCAPED_QUOTES = slice_chars, escaped
    try:
        assert bigjson._closing_quote(text, min(start, len(text))) == _closing_quote_by_regex(text, min(start, len(text)))
    finally:
        bigjson.SLICE_CHARS, bigjson._MAX_ESCAPED_QUOTES = saved


def _cut(value: Any, head: int) -> Any:
    """``value`` with every string value (not key) longer than ``head`` cut to its first ``head`` characters."""
    if isinstance(value, str):
        return value[:head]
    if isinstance(value, dict):
        return {key: _cut(item, head) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item, head) for item in value]
    return value


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, ascii_only=st.booleans(), head=st.integers(3, 12))
def test_loads_heads_cuts_long_string_values_and_keeps_everything_else(value: Any, ascii_only: bool, head: int) -> None:
    # With slices of 3 characters every string longer than ``head`` has a long body: all are cut.
    text = json.dumps(value, ensure_ascii=ascii_only)
    with tiny_slices():
        assert bigjson.loads_heads(text, head) == _cut(value, head)
