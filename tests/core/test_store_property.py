"""Property tests: whatever valid messages are appended, a fresh store reloads them equal."""

from __future__ import annotations

import json
import os
import string
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from crewagent.core.messages import ConversationMessage, from_openai, to_openai
from crewagent.core.store import TOOL_OUTPUT_THRESHOLD, RuntimeStore
from tests.examples import examples

SAFE = string.ascii_letters + string.digits + "_-"
MODEL_FIELDS = frozenset(ConversationMessage.model_fields)

text = st.text(max_size=80)
safe_id = st.text(alphabet=SAFE, min_size=1, max_size=24)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_value = st.recursive(
    json_scalar,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
# Keys a newer build (or another tool) might add: never one the model knows about.
extra_key = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12).map(lambda k: "x_" + k)
extras = st.dictionaries(extra_key, json_value, max_size=3)


@st.composite
def large_text(draw: st.DrawFn) -> str:
    """Tool output over 50 KB (UTF-8 bytes), built from a repeated unicode unit to stay fast."""
    unit = draw(st.text(min_size=1, max_size=12))
    repeat = TOOL_OUTPUT_THRESHOLD // len(unit.encode("utf-8")) + draw(st.integers(1, 200))
    return draw(text) + unit * repeat + draw(text)


def tool_call() -> st.SearchStrategy[dict[str, Any]]:
    arguments = st.one_of(
        json_value.map(lambda value: json.dumps(value, ensure_ascii=False)),
        st.text(max_size=40),  # models do send broken JSON; it is kept verbatim
    )
    return st.fixed_dictionaries(
        {
            "id": safe_id.map(lambda s: "call_" + s),
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": safe_id, "arguments": arguments}),
        }
    )


content_parts = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": text}),
        st.fixed_dictionaries(
            {"type": st.just("image_url"), "image_url": st.fixed_dictionaries({"url": text, "detail": st.just("auto")})}
        ),
    ),
    min_size=1,
    max_size=3,
)


def _with(base: st.SearchStrategy[dict[str, Any]], optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda b, o, x: {**b, **o, **x}, base, st.fixed_dictionaries({}, optional=optional), extras)


@cache  # built once: ``conversations`` draws from it for every message of every example
def openai_message(large: bool) -> st.SearchStrategy[dict[str, Any]]:
    """A valid OpenAI chat message (with unknown extra keys); ``large`` allows > 50 KB tool outputs."""
    system = _with(st.fixed_dictionaries({"role": st.just("system"), "content": text}), {"name": safe_id})
    user = _with(
        st.fixed_dictionaries({"role": st.just("user"), "content": text | content_parts}), {"name": safe_id}
    )
    assistant_text = st.fixed_dictionaries({"role": st.just("assistant"), "content": text})
    assistant_tools = st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.none() | text, "tool_calls": st.lists(tool_call(), min_size=1, max_size=3)}
    )
    assistant = _with(
        assistant_text | assistant_tools,
        {"reasoning_content": text, "refusal": st.none(), "name": safe_id},
    )
    tool_content = (text | large_text()) if large else text
    tool = _with(
        st.fixed_dictionaries(
            {"role": st.just("tool"), "tool_call_id": safe_id.map(lambda s: "call_" + s), "content": tool_content}
        ),
        {},
    )
    return st.one_of(system, user, assistant, tool)


app_fields = st.fixed_dictionaries(
    {},
    optional={
        "partType": st.sampled_from(["content", "thinking", "tool_start", "tool_result", "error"]),
        "toolName": safe_id,
        "duration": st.floats(0, 1e7, allow_nan=False),
        "isCollapsed": st.booleans(),
        "widget": st.dictionaries(st.text(max_size=8), json_value, max_size=3),
        "mode": st.sampled_from(["chat", "agent", "run"]),
        "includeInContext": st.booleans(),
        "agentId": safe_id,
        "subagent": st.dictionaries(st.text(max_size=8), json_value, max_size=2),  # nested extra object
    },
)
message_id = safe_id.map(lambda s: "msg_" + s) | st.text(min_size=1, max_size=30)  # imports bring odd ids


# Declared fields set after the build (the app sets them on messages it made: an interrupted
# answer, a repair result, a subagent's status), in any order, to any plain JSON value allowed.
later = st.lists(
    st.one_of(  # drawn with the message (a draw of its own per change cost a data.draw each)
        [st.tuples(st.just(name), values) for name, values in [
            ("interrupted", st.booleans()),
            ("synthetic", st.booleans()),
            ("error", st.dictionaries(st.text(max_size=8), json_value, max_size=3)),
            ("usage", st.dictionaries(st.text(max_size=8), st.integers(0, 10**6), max_size=3)),
            ("reasoningSeconds", st.floats(0, 1e4, allow_nan=False)),
            ("subagentStatus", st.text(max_size=10)),
            ("replaces", st.none() | message_id),
            ("summaryOf", st.lists(message_id, max_size=3)),
            ("content", st.none() | st.text(max_size=20)),
        ]]
    ),
    max_size=4,
)



@st.composite
def conversations(draw: st.DrawFn) -> list[ConversationMessage]:
    count = draw(st.integers(1, 10))
    ids = draw(st.lists(message_id, min_size=count, max_size=count, unique=True))
    messages = []
    for mid in ids:
        raw = draw(openai_message(large=True))
        messages.append(from_openai(raw, message_id=mid, created_at="2026-02-03T04:05:06.789Z", **draw(app_fields)))
    return messages


def _fresh_data_dir() -> Path:
    # Inside the per-test data folder set up by the autouse fixture (never the real home).
    return Path(tempfile.mkdtemp(prefix="example-", dir=os.environ["CREWAGENT_DATA_DIR"]))


# 25 conversations of 1-10 messages: ~150 appends through a real store, about a third of the
# conversations with an offloaded tool output (hypothesis statistics). Generating the large
# messages is most of the cost; the message shapes themselves get 300 examples in the identity
# property below, so this one needs only enough to cover append, offload and reload together.
@settings(max_examples=examples(25), deadline=None)
@given(messages=conversations())
def test_appended_messages_reload_equal_in_a_fresh_store(messages: list[ConversationMessage]) -> None:
    data_dir = _fresh_data_dir()
    writer = RuntimeStore(data_dir)
    project = writer.create_project(data_dir / "project")
    conversation = writer.create_conversation(project.id, title="property")
    stored = [writer.append_message(project.id, conversation.id, message) for message in messages]

    reader = RuntimeStore(data_dir)
    result = reader.load_messages(project.id, conversation.id)

    assert result.problems == []
    assert len(result.messages) == len(messages)
    for original, kept, loaded in zip(messages, stored, result.messages):
        assert loaded.to_log_dict() == kept.to_log_dict()
        full = reader.read_full_output(project.id, loaded)
        if loaded.is_offloaded:
            event("an offloaded tool output")
            assert original.role == "tool"
            assert len(original.content.encode("utf-8")) > TOOL_OUTPUT_THRESHOLD  # type: ignore[union-attr]
            assert full == original.content
            assert to_openai(loaded, content=full) == to_openai(original)
            assert {k: v for k, v in loaded.to_log_dict().items() if not k.startswith("fullOutput") and k != "content"} == {
                k: v for k, v in original.to_log_dict().items() if k != "content"
            }
        else:
            assert loaded.to_log_dict() == original.to_log_dict()
            assert to_openai(loaded) == to_openai(original)
    assert reader.get_conversation(project.id, conversation.id).messageCount == len(messages)


@settings(max_examples=examples(300), deadline=None)
@given(message=openai_message(large=False), fields=app_fields, changes=later)
def test_from_openai_then_to_openai_is_the_identity(message: dict[str, Any], fields: dict[str, Any], changes: list[tuple[str, Any]]) -> None:
    wrapped = from_openai(message)
    assert to_openai(wrapped) == message
    # And the same after a trip through the log line format.
    assert to_openai(ConversationMessage.model_validate_json(wrapped.to_log_line())) == message
    assert set(message) - MODEL_FIELDS <= set(wrapped.to_log_dict())
    # An append's encoding (orjson from the fields, tests/core/test_log_encoding.py) writes
    # pydantic's bytes for any message: with the app's fields too, set when built or after.
    stamped = from_openai(message, message_id="msg_1", created_at="2026-02-03T04:05:06.789Z", **fields)
    for name, value in changes:
        setattr(stamped, name, value)
    for encoded in (wrapped, stamped):
        pydantic_bytes = encoded.__pydantic_serializer__.to_json(encoded, exclude_unset=True)
        assert encoded.to_log_bytes(b"\n") == pydantic_bytes + b"\n"
        assert encoded.to_log_bytes() == pydantic_bytes
