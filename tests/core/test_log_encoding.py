"""An append's encoding (issue 14): the usual message is written by orjson from its fields; the
bytes must be pydantic's, for any message (the property is in test_store_property.py, on the
messages it generates anyway), and anything orjson would write otherwise goes the long way
(pydantic's serializer)."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timezone
from typing import Any

import pytest
from crewagent.core import messages as messages_module
from crewagent.core.messages import ConversationMessage


def _pydantic(message: ConversationMessage, end: bytes = b"") -> bytes:
    return message.__pydantic_serializer__.to_json(message, exclude_unset=True) + end


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
