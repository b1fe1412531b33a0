"""LLM failures inside a turn: each is persisted as an error part that "continue" resumes from."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from crewagent.core.loop import TextDelta
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, finished, persisted, shape, turn
from tests.fakes.llm_helpers import FakeSleep
from tests.fakes.scripted_server import (
    API_KEY,
    ScriptedServer,
    Step,
    call,
    drop,
    malformed,
    rate_limited,
    server_error,
    stall,
    text,
    tool_calls,
    unauthorized,
)


@dataclass(frozen=True)
class Failure:
    name: str
    steps: tuple[Step, ...]
    code: str
    status: int | None
    partial: str
    retries: int  # backoff sleeps the adapter took before giving up
    timeout: float = 5.0


FAILURES = [
    Failure("timeout mid-stream", (stall(30, "I was saying ", "that"),), "LLM_TIMEOUT", None, "I was saying that", 0, timeout=0.4),
    Failure("401", (unauthorized(),), "LLM_AUTH_FAILED", 401, "", 0),
    Failure("500 after retries", tuple(server_error(500) for _ in range(4)), "LLM_HTTP_ERROR", 500, "", 3),
    Failure("429 after retries", tuple(rate_limited("1") for _ in range(4)), "LLM_RATE_LIMITED", 429, "", 3),
    Failure("dropped mid-stream", (drop("Once upon ", "a time"),), "LLM_HTTP_ERROR", None, "Once upon a time", 0),
    Failure("malformed SSE JSON", (malformed("Half ", "an answer"),), "LLM_BAD_RESPONSE", None, "Half an answer", 0),
]


@pytest.mark.parametrize("failure", FAILURES, ids=[f.name for f in FAILURES])
def test_failure_is_persisted_and_continue_resumes_from_it(
    failure: Failure, scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(*failure.steps)
    config = scripted_llm.config(timeout=failure.timeout)
    sleep = FakeSleep()

    events = turn(store, project, conversation.id, config, "Tell me a story", sleep=sleep)

    end = finished(events)
    assert end.reason == "error"
    assert end.error is not None and (end.error["code"], end.error["status"]) == (failure.code, failure.status)
    assert len(sleep.delays) == failure.retries
    assert len(scripted_llm.requests) == len(failure.steps)
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == failure.partial  # what the user saw ...
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant!error"]
    part = log[-1]
    assert part.id == persisted(events)[-1].id
    assert part.error["code"] == failure.code and part.error["partialText"] == failure.partial
    assert part.text.startswith(failure.partial)  # ... is kept, followed by the LLM_ERROR block
    assert "LLM_ERROR" in part.text and f"- code: {failure.code}" in part.text
    assert (f"- status: {failure.status}" in part.text) == (failure.status is not None)
    assert API_KEY not in part.text
    assert store.read_stream_checkpoint(project.id, conversation.id) is None

    scripted_llm.script(text("Resuming: and they lived happily."))
    events = turn(store, project, conversation.id, config, "continue")

    assert finished(events).reason == "completed"
    request = assert_request_valid(scripted_llm.bodies[-1])
    history = [m for m in request if m["role"] != "system"]
    assert shape(history) == ["user", "assistant", "user"]
    assert history[1]["content"] == part.text  # the partial text and the LLM_ERROR block, in context
    assert "partType" not in history[1] and "error" not in history[1]
    assert history[-1]["content"] == "continue"
    assert shape(assert_log_valid(store, project.id, conversation.id)) == ["user", "assistant!error", "user", "assistant"]


def test_429_with_retry_after_then_success_persists_one_answer(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(rate_limited("7"), text("Fine ", "now."))
    sleep = FakeSleep()

    events = turn(store, project, conversation.id, scripted_llm.config(), "hi", sleep=sleep)

    assert finished(events).reason == "completed"
    assert sleep.delays == [7.0]  # Retry-After honoured
    log = assert_log_valid(store, project.id, conversation.id)
    assert [(m.role, m.content) for m in log] == [("user", "hi"), ("assistant", "Fine now.")]  # persisted once, after the retry
    assert scripted_llm.bodies[0] == scripted_llm.bodies[1]  # the retry sent the same request


def test_failure_after_tool_results_keeps_the_tool_chain_and_resumes(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "a.txt").write_text("alpha\n", encoding="utf-8")
    scripted_llm.script(
        tool_calls(call("c1", "fs_read", '{"path": "@project/a.txt"}')),
        drop("The file says ", reasoning=["it is short"]),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "read a.txt")

    assert finished(events).error["code"] == "LLM_HTTP_ERROR"  # type: ignore[index]
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant!error"]
    assert log[-1].text.startswith("The file says \n\nLLM_ERROR")
    assert log[-1].reasoning_content == "it is short"

    scripted_llm.script(text("The file says alpha."))
    assert finished(turn(store, project, conversation.id, scripted_llm.config(), "继续")).reason == "completed"
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert shape(history) == ["user", "assistant+calls", "tool", "assistant", "user"]
    assert "The file says" in history[3]["content"] and "LLM_ERROR" in history[3]["content"]


def test_continue_without_a_user_message_resumes_after_an_error(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """send(None): Retry runs the failed turn again without adding a user message; the request is
    the failed one again (the error part stays in the log, out of the request: issue 18, item 5)."""
    scripted_llm.script(unauthorized(), text("Back."))
    turn(store, project, conversation.id, scripted_llm.config(), "hello")

    events = turn(store, project, conversation.id, scripted_llm.config(), None)

    assert finished(events).reason == "completed"
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert history == [{"role": "user", "content": "hello"}]
    assert shape(assert_log_valid(store, project.id, conversation.id)) == ["user", "assistant!error", "assistant"]
