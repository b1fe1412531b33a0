"""The adapter over real HTTP/SSE against the scripted server: what a stream turns into."""

from __future__ import annotations

import json

from crewagent.core.llm import (
    Completed,
    LlmRequest,
    ReasoningDelta,
    StreamStarted,
    TextDelta,
    ToolCallDelta,
)
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import collect, fn_tool, user
from tests.fakes.scripted_server import (
    ScriptedServer,
    call,
    chunk,
    completion,
    no_final_delimiter,
    raw_stream,
    text,
    tool_calls,
)

TOOLS = [fn_tool("fs.read"), fn_tool("fs.list"), fn_tool("ui.ask_user")]


def _completed(events: list) -> Completed:
    assert isinstance(events[-1], Completed), events
    return events[-1]


def test_text_chunks_stream_as_deltas_then_one_completed(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(text("Hel", "lo, ", "world."))

    events, error = collect(scripted_llm.config(), LlmRequest([user("hi")]))

    assert error is None
    assert isinstance(events[0], StreamStarted) and events[0].streaming
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "world."]
    done = _completed(events)
    assert done.content == "Hello, world."
    assert done.tool_calls == []
    assert done.finish_reason == "stop"
    assert done.usage is not None and done.usage.total_tokens == 18
    assert done.assistant_message() == {"role": "assistant", "content": "Hello, world."}
    body = scripted_llm.bodies[0]
    assert body["stream"] is True and body["messages"] == [user("hi")]
    assert body["stream_options"] == {"include_usage": True}


def test_parallel_tool_calls_with_split_arguments_are_accumulated(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(
        tool_calls(
            call("call_a", "fs_read", '{"pa', 'th": "@proj', 'ect/README.md"}'),
            call("call_b", "fs_list", '{"path"', ': "@project"}'),
            call("call_c", "ui_ask_user", "", "{}"),
            text_parts=["Let me look."],
        )
    )

    events, error = collect(scripted_llm.config(), LlmRequest([user("look")], tools=TOOLS))

    assert error is None
    done = _completed(events)
    assert done.content == "Let me look."
    assert done.tool_calls == [
        {"id": "call_a", "type": "function", "function": {"name": "fs.read", "arguments": '{"path": "@project/README.md"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "fs.list", "arguments": '{"path": "@project"}'}},
        {"id": "call_c", "type": "function", "function": {"name": "ui.ask_user", "arguments": "{}"}},
    ]
    assert done.finish_reason == "tool_calls"
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    # every delta knows its call's id and original name, even though the wire sent them only once
    assert {(d.index, d.id, d.name) for d in deltas} == {(0, "call_a", "fs.read"), (1, "call_b", "fs.list"), (2, "call_c", "ui.ask_user")}
    assert "".join(d.arguments_delta for d in deltas if d.index == 0) == '{"path": "@project/README.md"}'
    assert done.assistant_message()["tool_calls"][0]["function"]["name"] == "fs.read"


def test_id_and_name_only_in_the_first_chunk_and_a_provider_repeating_them(scripted_llm: ScriptedServer) -> None:
    def tc(index: int, **fields: object) -> dict:
        return chunk({"tool_calls": [{"index": index, **fields}]})

    scripted_llm.script(
        raw_stream(
            tc(0, id="c1", type="function", function={"name": "fs_read", "arguments": ""}),
            tc(1, id="c2", type="function", function={"name": "fs_list", "arguments": '{"pa'}),
            tc(0, function={"arguments": '{"path":'}),
            # a provider that repeats id and name on every delta of the call
            tc(1, id="c2", function={"name": "fs_list", "arguments": 'th":"x"}'}),
            tc(0, function={"arguments": '"a"}'}),
            chunk({}, "tool_calls"),
        )
    )

    events, _ = collect(scripted_llm.config(), LlmRequest([user("x")], tools=TOOLS))

    calls = _completed(events).tool_calls
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("c1", "fs.read", '{"path":"a"}'),
        ("c2", "fs.list", '{"path":"x"}'),
    ]


def test_one_index_reused_for_several_calls_gives_several_calls(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(
        raw_stream(
            chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "fs_read", "arguments": '{"path":"a"}'}}]}),
            chunk({"tool_calls": [{"index": 0, "id": "c2", "function": {"name": "fs_read", "arguments": '{"path":"b"}'}}]}),
            chunk({}, "tool_calls"),
        )
    )

    events, _ = collect(scripted_llm.config(), LlmRequest([user("x")], tools=TOOLS))

    calls = _completed(events).tool_calls
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [("c1", '{"path":"a"}'), ("c2", '{"path":"b"}')]


def test_duplicate_tool_call_ids_from_the_model_are_made_unique(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(
        tool_calls(
            call("call_1", "fs_read", '{"path": "a"}'),
            call("call_1", "fs_read", '{"path": "b"}'),
            call(None, "fs_list", "{}"),
        )
    )

    events, error = collect(scripted_llm.config(), LlmRequest([user("x")], tools=TOOLS))

    assert error is None
    ids = [c["id"] for c in _completed(events).tool_calls]
    assert ids[0] == "call_1"
    assert ids[1] == "call_1_2"
    assert ids[2].startswith("call_")
    assert len(set(ids)) == 3 and all(ids)
    # the deltas carry the same ids as the final message
    assert {e.id for e in events if isinstance(e, ToolCallDelta)} == set(ids)


def test_invalid_tool_arguments_are_passed_through_for_the_loop_to_report(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(tool_calls(call("call_x", "fs_read", '{"path": "a.txt"', ",,}")))

    events, error = collect(scripted_llm.config(), LlmRequest([user("x")], tools=TOOLS))

    assert error is None
    arguments = _completed(events).tool_calls[0]["function"]["arguments"]
    assert arguments == '{"path": "a.txt",,}'
    try:
        json.loads(arguments)
    except ValueError:
        pass
    else:  # pragma: no cover
        raise AssertionError("the scripted arguments were meant to be invalid JSON")


def test_reasoning_content_is_kept_and_separate_from_text(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(text("The answer is 4.", reasoning=["2 + 2 ", "is 4."]))

    events, _ = collect(scripted_llm.config(), LlmRequest([user("2+2?")]))

    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["2 + 2 ", "is 4."]
    done = _completed(events)
    assert done.content == "The answer is 4."
    assert done.reasoning_content == "2 + 2 is 4."
    assert done.assistant_message()["reasoning_content"] == "2 + 2 is 4."


def test_the_reasoning_field_name_is_understood_too(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(raw_stream(chunk({"reasoning": "hmm"}), chunk({"content": "ok"}), chunk({}, "stop")))

    events, _ = collect(scripted_llm.config(), LlmRequest([user("x")]))

    assert _completed(events).reasoning_content == "hmm"


def test_reasoning_is_sent_back_only_where_the_provider_wants_it(scripted_llm: ScriptedServer) -> None:
    history = [
        user("q"),
        {"role": "assistant", "content": "a", "reasoning_content": "thought"},
        user("more"),
    ]
    scripted_llm.script(text("1"), text("2"))

    collect(scripted_llm.config(send_reasoning=False), LlmRequest(history))
    collect(scripted_llm.config(send_reasoning=True), LlmRequest(history))

    without, with_reasoning = scripted_llm.bodies
    assert "reasoning_content" not in without["messages"][1]
    assert with_reasoning["messages"][1]["reasoning_content"] == "thought"
    assert history[1]["reasoning_content"] == "thought"  # the caller's messages are not modified


def test_a_final_event_without_its_blank_line_or_done_is_not_lost(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(no_final_delimiter("Hello ", "there", " - the end."))

    events, error = collect(scripted_llm.config(), LlmRequest([user("x")]))

    assert error is None
    done = _completed(events)
    assert done.content == "Hello there - the end."
    assert done.finish_reason == "stop"


def test_a_stream_without_done_but_with_finish_reason_is_complete(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(text("fine", done=False))

    events, error = collect(scripted_llm.config(), LlmRequest([user("x")]))

    assert error is None and _completed(events).content == "fine"


def test_tool_names_are_encoded_on_the_wire_and_decoded_in_events(scripted_llm: ScriptedServer) -> None:
    history = [
        user("read it"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "fs.read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
    ]
    tools = [*TOOLS, fn_tool("fs_read"), fn_tool("already-valid_name")]
    scripted_llm.script(tool_calls(call("c1", "fs_read"), call("c2", "already-valid_name")))

    events, _ = collect(
        scripted_llm.config(),
        LlmRequest(history, tools=tools, tool_choice={"type": "function", "function": {"name": "fs.list"}}),
    )

    body = scripted_llm.bodies[0]
    wire = [t["function"]["name"] for t in body["tools"]]
    # every name satisfies the strictest provider pattern
    assert all(__import__("re").fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in wire)
    assert len(set(wire)) == len(wire)
    # fs.read collides with a real tool named fs_read, so it gets the hashed form; fs.list does not
    assert wire[1] == "fs_list" and wire[0].startswith("fs_read_") and wire[3] == "fs_read"
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == wire[0]
    assert body["tool_choice"]["function"]["name"] == "fs_list"
    # "fs_read" on the wire is the real fs_read tool, not fs.read
    names = [c["function"]["name"] for c in _completed(events).tool_calls]
    assert names == ["fs_read", "already-valid_name"]


def test_names_can_be_sent_unencoded_when_the_provider_accepts_dots(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(tool_calls(call("c1", "fs.read", "{}")))

    events, _ = collect(scripted_llm.config(encode_tool_names=False), LlmRequest([user("x")], tools=TOOLS))

    assert scripted_llm.bodies[0]["tools"][0]["function"]["name"] == "fs.read"
    assert _completed(events).tool_calls[0]["function"]["name"] == "fs.read"


def test_non_streaming_config_synthesises_the_same_events(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(completion("Plain answer.", calls=[("call_9", "fs_list", '{"path": "@project"}')], reasoning="why"))

    events, error = collect(scripted_llm.config(stream=False), LlmRequest([user("x")], tools=TOOLS))

    assert error is None
    assert isinstance(events[0], StreamStarted) and not events[0].streaming
    assert [type(e).__name__ for e in events] == [
        "StreamStarted",
        "ReasoningDelta",
        "TextDelta",
        "ToolCallDelta",
        "Completed",
    ]
    done = _completed(events)
    assert done.content == "Plain answer."
    assert done.reasoning_content == "why"
    assert done.tool_calls[0]["function"] == {"name": "fs.list", "arguments": '{"path": "@project"}'}
    assert done.usage is not None and done.usage.total_tokens == 8
    assert scripted_llm.bodies[0]["stream"] is False
    assert "stream_options" not in scripted_llm.bodies[0]


def test_model_override_and_options_reach_the_provider(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(text("x"))

    collect(
        scripted_llm.config(extra_headers={"X-Extra": "1"}),
        LlmRequest([user("x")], model="other-model", temperature=0.2, max_tokens=50, extra_body={"top_k": 3}),
    )

    body = scripted_llm.bodies[0]
    assert body["model"] == "other-model"
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50 and body["top_k"] == 3
    headers = {k.lower(): v for k, v in scripted_llm.requests[0].headers.items()}
    assert headers["x-extra"] == "1"
    assert headers["authorization"] == "Bearer sk-test-scripted"
