"""The demo provider through the real adapter and HTTP path: tools, summaries, failures, continue."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from crewagent.core.llm import Completed, LlmAdapter, LlmRequest, TextDelta
from crewagent.core.llm.demo import CHUNK_DELAY_ENV, DEFAULT_CHUNK_DELAY, DEMO_MODEL, demo_config, plan_answer, start_demo_server
from crewagent.core.llm.local_server import LocalServer
from tests.fakes.fixtures import demo_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import FakeSleep, collect, fn_tool, user

TOOLS = [fn_tool("fs.list"), fn_tool("fs.read"), fn_tool("fs.write")]


def _done(events: list) -> Completed:
    assert isinstance(events[-1], Completed), events
    return events[-1]


def test_list_files_calls_fs_list_by_its_wire_name(demo_llm: LocalServer) -> None:
    events, error = collect(demo_config(demo_llm.base_url), LlmRequest([user("list the files")], tools=TOOLS))

    assert error is None
    done = _done(events)
    assert [c["function"]["name"] for c in done.tool_calls] == ["fs.list"]
    assert json.loads(done.tool_calls[0]["function"]["arguments"]) == {"path": "@project"}
    assert done.reasoning_content and done.reasoning_content.startswith("[demo]")
    assert done.finish_reason == "tool_calls"
    assert demo_llm.requests[0].body["model"] == DEMO_MODEL


def test_chinese_requests_work_too(demo_llm: LocalServer) -> None:
    listed, _ = collect(demo_config(demo_llm.base_url), LlmRequest([user("列出文件")], tools=TOOLS))
    read, _ = collect(demo_config(demo_llm.base_url), LlmRequest([user("读取 README.md")], tools=TOOLS))

    assert _done(listed).tool_calls[0]["function"]["name"] == "fs.list"
    assert json.loads(_done(read).tool_calls[0]["function"]["arguments"]) == {"path": "@project/README.md"}


def test_read_a_file_then_summarise_the_result(demo_llm: LocalServer) -> None:
    config = demo_config(demo_llm.base_url)
    first, _ = collect(config, LlmRequest([user("please read notes.txt")], tools=TOOLS))
    assistant = _done(first).assistant_message()
    call = assistant["tool_calls"][0]
    assert call["function"] == {"name": "fs.read", "arguments": json.dumps({"path": "@project/notes.txt"})}
    result = {"ok": True, "path": "@project/notes.txt", "content": "Shopping list\nmilk\neggs\n", "sha256": "ab"}
    history: list[dict[str, Any]] = [
        user("please read notes.txt"),
        assistant,
        {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)},
    ]

    second, error = collect(config, LlmRequest(history, tools=TOOLS))

    assert error is None
    done = _done(second)
    assert done.tool_calls == []
    assert done.content is not None and done.content.startswith("[demo]")
    assert "fs.read" in done.content and "3 lines" in done.content and "Shopping list" in done.content
    assert sum(isinstance(e, TextDelta) for e in second) > 3  # streamed in small chunks
    # the history went over the wire with encoded names
    assert demo_llm.requests[1].body["messages"][1]["tool_calls"][0]["function"]["name"] == "fs_read"


def test_list_results_and_tool_errors_are_summarised(demo_llm: LocalServer) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "fs.list", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "fs.read", "arguments": "{}"}},
    ]
    history = [
        user("list"),
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": True, "entries": [{"name": "src", "type": "dir"}, {"name": "a.md", "type": "file"}]})},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"ok": False, "error": {"code": "E_SANDBOX_VIOLATION", "message": "outside the project"}})},
    ]

    events, _ = collect(demo_config(demo_llm.base_url), LlmRequest(history, tools=TOOLS))

    content = _done(events).content or ""
    assert "2 entries: src/, a.md" in content
    assert "E_SANDBOX_VIOLATION" in content


def test_fail_gives_an_llm_error_after_the_retry(demo_llm: LocalServer) -> None:
    sleep = FakeSleep()

    events, error = collect(demo_config(demo_llm.base_url), LlmRequest([user("fail")]), sleep=sleep)

    assert error is not None and (error.code, error.status) == ("LLM_HTTP_ERROR", 500)
    assert "[demo]" in error.message
    assert len(demo_llm.requests) == 2 and len(sleep.delays) == 1  # the demo config retries once


def test_fail_mid_stream_keeps_the_partial_text_and_continue_finishes_it(demo_llm: LocalServer) -> None:
    config = demo_config(demo_llm.base_url)
    events, error = collect(config, LlmRequest([user("fail mid-stream")]))

    assert error is not None and error.code == "LLM_HTTP_ERROR" and error.status is None
    partial = error.partial_text
    assert partial.startswith("[demo]") and len(partial) > 20
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == partial

    # what a context builder would send: the partial answer and its LLM_ERROR block, then "continue"
    error_message = {"role": "assistant", "content": f"{partial}\n\nLLM_ERROR {json.dumps(error.to_block())}"}
    resumed, error2 = collect(config, LlmRequest([user("fail mid-stream"), error_message, user("继续")]))

    assert error2 is None
    content = _done(resumed).content or ""
    assert content.startswith("[demo] (continuing)")
    assert content.endswith("resume from its own partial answer.")
    assert partial[-15:] not in content  # it picks up after the cut, it does not repeat


def test_continue_after_a_stop_finishes_the_answer_that_was_cut_off(demo_llm: LocalServer) -> None:
    config = demo_config(demo_llm.base_url)
    full, _ = collect(config, LlmRequest([user("hello")]))
    answer = _done(full).content or ""
    # What a Stop keeps: the part of the answer streamed so far (partType content, interrupted).
    stopped = {"role": "assistant", "content": answer[:60]}

    resumed, error = collect(config, LlmRequest([user("hello"), stopped, user("continue")]))

    assert error is None
    assert _done(resumed).content == f"[demo] (continuing) …{answer[60:]}"


def test_continue_after_a_plain_failure(demo_llm: LocalServer) -> None:
    error_message = {"role": "assistant", "content": 'LLM_ERROR {"code": "LLM_HTTP_ERROR", "status": 500}'}

    events, _ = collect(demo_config(demo_llm.base_url), LlmRequest([user("fail"), error_message, user("continue")]))

    assert "Continuing after the error" in (_done(events).content or "")


def test_without_tools_offered_the_demo_says_so_instead_of_calling(demo_llm: LocalServer) -> None:
    events, _ = collect(demo_config(demo_llm.base_url), LlmRequest([user("list the files")]))

    done = _done(events)
    assert done.tool_calls == [] and "not enabled" in (done.content or "")


def test_anything_else_gets_the_labelled_help(demo_llm: LocalServer) -> None:
    events, _ = collect(demo_config(demo_llm.base_url), LlmRequest([user("hello there")]))

    content = _done(events).content or ""
    assert content.startswith("[demo]") and "not a language model" in content


def test_the_demo_is_deterministic() -> None:
    body = {"messages": [user("list files")], "tools": TOOLS}
    assert plan_answer(body) == plan_answer(body)


def test_the_demo_answers_non_streaming_requests_and_lists_its_model(demo_llm: LocalServer) -> None:
    from crewagent.core.llm.models import list_models

    events, error = collect(demo_config(demo_llm.base_url).model_copy(update={"stream": False}), LlmRequest([user("list")], tools=TOOLS))

    assert error is None and _done(events).tool_calls[0]["function"]["name"] == "fs.list"
    assert asyncio.run(list_models(demo_config(demo_llm.base_url))) == [DEMO_MODEL]


def test_start_demo_server_streams_paced_chunks() -> None:
    server = start_demo_server(chunk_delay=0.001)
    try:
        async def main() -> list:
            async with LlmAdapter(demo_config(server.base_url)) as adapter:
                return [e async for e in adapter.stream(LlmRequest([user("hi")]))]

        events = asyncio.run(main())
    finally:
        server.stop()
    assert _done(events).content and not server.running


def test_the_demo_is_paced_as_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    delays = []
    for value in (None, "0", " 0.05 "):
        if value is None:
            monkeypatch.delenv(CHUNK_DELAY_ENV, raising=False)
        else:
            monkeypatch.setenv(CHUNK_DELAY_ENV, value)
        server = start_demo_server()
        server.stop()
        delays.append(server.responder.chunk_delay)  # type: ignore[attr-defined]
    assert delays == [DEFAULT_CHUNK_DELAY, 0.0, 0.05]
    server = start_demo_server(chunk_delay=0.001)  # a caller's own pacing wins over the variable
    server.stop()
    assert server.responder.chunk_delay == 0.001  # type: ignore[attr-defined]


def test_the_demo_names_a_conversation_from_the_first_words_the_same_way_every_time() -> None:
    from crewagent.core.llm.demo import plan_answer
    from crewagent.core.llm.title import title_request

    body = {"messages": title_request("Summarise the README of this project for me, please", "[demo] ...")}
    assert plan_answer(body).text == plan_answer(body).text == "Summarise the README of this…"
