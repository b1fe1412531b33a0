"""An append's encoding (issue 14): the usual message is written by orjson from its fields; the
bytes must be pydantic's, for any message, and anything orjson would write otherwise goes the
long way (pydantic's serializer)."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core import messages as messages_module
from crewagent.core.messages import ConversationMessage, from_openai
from tests.core.test_store_property import app_fields, extras, json_value, message_id, openai_message
from tests.examples import examples


def _pydantic(message: ConversationMessage, end: bytes = b"") -> bytes:
    return message.__pydantic_serializer__.to_json(message, exclude_unset=True) + end


# Declared fields set after the build (the app sets them on messages it made: an interrupted
# answer, a repair result, a subagent's status), in any order, to any plain JSON value allowed.
later = st.lists(
    st.sampled_from(
        [
            ("interrupted", st.booleans()),
            ("synthetic", st.booleans()),
            ("error", st.dictionaries(st.text(max_size=8), json_value, max_size=3)),
            ("usage", st.dictionaries(st.text(max_size=8), st.integers(0, 10**6), max_size=3)),
            ("reasoningSeconds", st.floats(0, 1e4, allow_nan=False)),
            ("subagentStatus", st.text(max_size=10)),
            ("replaces", st.none() | message_id),
            ("summaryOf", st.lists(message_id, max_size=3)),
            ("content", st.none() | st.text(max_size=20)),
        ]
    ),
    max_size=4,
)


@settings(max_examples=examples(400), deadline=None)
@given(raw=openai_message(large=False), fields=app_fields, more=extras, data=st.data(), late=later)
def test_for_any_message_the_bytes_are_pydantics(raw: dict[str, Any], fields: dict[str, Any], more: dict[str, Any], data: st.DataObject, late: list[tuple[str, st.SearchStrategy[Any]]]) -> None:
    message = from_openai(raw, message_id="msg_1", created_at="2026-02-03T04:05:06.789Z", **fields, **more)
    for name, values in late:
        setattr(message, name, data.draw(values))
    assert message.to_log_bytes(b"\n") == _pydantic(message, b"\n")
    assert message.to_log_bytes() == _pydantic(message)
    assert message.to_log_line() == _pydantic(message).decode("utf-8")
    assert ConversationMessage.model_validate_json(message.to_log_bytes(b"\n")).to_log_dict() == message.to_log_dict()


@dataclasses.dataclass
class _Point:
    x: int


class _Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        2**70,  # past orjson's 64 bits
        -(2**64),
        datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc),  # orjson's own datetime text
        _Point(3),  # orjson writes dataclasses itself
        _Text("a str subclass"),
        {1: "an int key"},  # orjson refuses keys that are not str
        math.nan,
        math.inf,
        b"bytes",
        ("a", "tuple"),
    ],
    ids=lambda value: type(value).__name__,
)
def test_what_orjson_would_write_otherwise_goes_the_long_way(value: Any) -> None:
    message = ConversationMessage.new("assistant", "hi", widget={"value": value})
    try:
        expected = _pydantic(message, b"\n")
    except Exception as exc:  # pydantic refuses it too: so does the append, with the same error
        with pytest.raises(type(exc)):
            message.to_log_bytes(b"\n")
    else:
        assert message.to_log_bytes(b"\n") == expected


def test_the_usual_message_does_not_take_pydantics_serializer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The short way is taken (else this encoder would be as slow as before, and untested)."""
    message = ConversationMessage.new("assistant", None, tool_calls=[{"id": "c1", "function": {"name": "fs.read", "arguments": "{}"}}])
    message.interrupted = True
    expected = _pydantic(message, b"\n")
    calls: list[str] = []
    real = messages_module._log_fields

    def counted(m: ConversationMessage) -> dict[str, Any]:
        calls.append(m.id)
        return real(m)

    monkeypatch.setattr(messages_module, "_log_fields", counted)
    assert message.to_log_bytes(b"\n") == expected
    assert calls == [message.id]
