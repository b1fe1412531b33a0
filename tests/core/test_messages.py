"""The message model: what is written, what survives a round trip, and the OpenAI view."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from crewagent.core.messages import ConversationMessage, ConversationMeta, from_openai, to_openai
from tests.examples import examples


def test_unknown_fields_survive_a_log_round_trip() -> None:
    line = json.dumps(
        {
            "id": "m1",
            "role": "assistant",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "content": "hi",
            "futureField": {"nested": [1, 2, {"deep": "yes"}]},
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}", "strict": True}, "extra": 1}],
        }
    )
    message = ConversationMessage.model_validate_json(line)
    assert json.loads(message.to_log_line()) == json.loads(line)


def test_null_content_is_kept_and_missing_content_is_not_invented() -> None:
    with_null = from_openai({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    assert "content" in with_null.to_log_dict() and with_null.to_log_dict()["content"] is None
    without = from_openai({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    assert "content" not in to_openai(without)


def test_tool_call_type_is_always_written() -> None:
    message = from_openai({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]})
    assert to_openai(message)["tool_calls"][0]["type"] == "function"


def test_app_fields_never_reach_the_openai_view() -> None:
    message = ConversationMessage.new(
        "tool", "preview", tool_call_id="c1", toolName="fs.read", duration=12.5, partType="tool_result",
        mode="run", runId="r1", fullOutputPath="@state/x.json", fullOutputBytes=10, fullOutputSha256="ab",
    )
    assert to_openai(message) == {"role": "tool", "content": "preview", "tool_call_id": "c1"}
    assert to_openai(message, content="full text")["content"] == "full text"


def test_new_assigns_unique_ids_and_utc_times() -> None:
    first, second = ConversationMessage.new("user", "a"), ConversationMessage.new("user", "b")
    assert first.id != second.id
    assert first.createdAt.endswith("Z")
    assert first.includeInContext is True
    assert "includeInContext" not in first.to_log_dict()


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "m", "role": "wizard", "createdAt": "t"},
        {"id": "m", "role": "assistant", "createdAt": "t", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"x": 1}}}]},
        {"role": "user", "createdAt": "t", "content": "no id"},
    ],
)
def test_invalid_messages_are_rejected(bad: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValidationError):
        ConversationMessage.model_validate(bad)


def test_text_joins_content_parts() -> None:
    message = from_openai({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "b"}]})
    assert message.text == "ab"


def test_meta_keeps_unknown_fields() -> None:
    meta = ConversationMeta.model_validate(
        {"id": "c", "title": "t", "createdAt": "a", "lastActiveAt": "b", "pinned": True}
    )
    assert meta.model_dump()["pinned"] is True


# -- typed app fields (issue 10) --------------------------------------------------------------------


class _UntypedMessage(BaseModel):
    """ConversationMessage as it was before the app fields were declared (they were extra fields)."""

    model_config = ConfigDict(extra="allow")

    id: str
    role: str
    createdAt: str
    content: str | None = None
    tool_call_id: str | None = None
    partType: str | None = None
    toolName: str | None = None
    mode: str | None = None
    runId: str | None = None
    reasoning_content: str | None = None


#: The app fields in the order the app's builders write them, with a value of each one's type.
_APP_VALUES: dict[str, object] = {
    "summaryOf": ["msg_a", "msg_b"],
    "synthetic": True,
    "answersMessageId": "msg_assistant",
    "interrupted": True,
    "error": {"code": "LLM_INTERRUPTED", "message": "stopped", "partialText": "half"},
    "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    "subagentSessionId": "agent_1",
    "subagentType": "explore",
    "subagentStatus": "completed",
    "subagentSummary": "done",
    "sessionId": "agent_2",
    "parentSessionId": "conv_1",
    "isSidechain": True,
    "parentToolCallId": "call_1",
}


@settings(max_examples=examples(200), deadline=None)
@given(
    chosen=st.lists(st.sampled_from(sorted(_APP_VALUES)), unique=True),
    unknown=st.booleans(),
    mode=st.sampled_from([None, "chat", "run"]),
)
def test_typed_app_fields_write_the_same_line_as_before(chosen: list[str], unknown: bool, mode: str | None) -> None:
    """For any set of app fields, the log line is byte for byte the one written when they were extra."""
    fields = {key: value for key, value in _APP_VALUES.items() if key in chosen}
    base: dict[str, object] = {"id": "msg_1", "role": "tool", "createdAt": "2026-01-01T00:00:00.000Z", "content": "x"}
    if mode is not None:
        base["mode"] = mode
    data = {**base, "partType": "error", **fields, **({"futureField": {"kept": [1]}} if unknown else {})}
    typed = ConversationMessage(**data)  # type: ignore[arg-type]
    assert typed.to_log_line() == _UntypedMessage(**data).model_dump_json(exclude_unset=True)
    assert ConversationMessage.model_validate_json(typed.to_log_line()).to_log_line() == typed.to_log_line()
    assert all(key not in to_openai(typed) for key in fields)


def test_app_fields_are_typed_and_not_written_when_unset() -> None:
    message = ConversationMessage.new("assistant", "half", partType="error", interrupted=True, error={"code": "X", "message": "m"})
    assert message.interrupted is True and message.error == {"code": "X", "message": "m"}
    assert message.model_extra == {}
    plain = ConversationMessage.new("user", "hi")
    assert plain.synthetic is None and plain.subagentSessionId is None
    assert set(json.loads(plain.to_log_line())) == {"id", "role", "createdAt", "content"}
