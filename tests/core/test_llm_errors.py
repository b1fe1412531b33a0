"""Failures over real HTTP: error codes, partial output, retries and backoff, fallback, cancellation."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest

from crewagent.core.llm import (
    LlmAdapter,
    LlmError,
    LlmRequest,
    RetryPolicy,
    RetryScheduled,
    StreamStarted,
    TextDelta,
)
from crewagent.core.llm.retry import parse_retry_after
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import FakeSleep, collect, user
from tests.fakes.scripted_server import (
    ScriptedServer,
    completion,
    drop,
    hangup,
    http_error,
    malformed,
    rate_limited,
    server_error,
    slow_text,
    stall,
    text,
    unauthorized,
)

REQUEST = LlmRequest([user("hello")])


def _texts(events: list) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


# error codes


def test_401_is_auth_failed_and_not_retried(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(unauthorized())
    sleep = FakeSleep()

    events, error = collect(scripted_llm.config(), REQUEST, sleep=sleep)

    assert error is not None
    assert (error.code, error.status, error.retryable, error.attempts) == ("LLM_AUTH_FAILED", 401, False, 1)
    assert "Incorrect API key" in error.message
    assert sleep.delays == [] and events == []
    assert len(scripted_llm.requests) == 1


@pytest.mark.parametrize(("status", "code"), [(400, "LLM_HTTP_ERROR"), (403, "LLM_AUTH_FAILED"), (404, "LLM_HTTP_ERROR")])
def test_client_errors_are_not_retried(scripted_llm: ScriptedServer, status: int, code: str) -> None:
    scripted_llm.script(http_error(status, "no such thing"))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and (error.code, error.status, error.retryable) == (code, status, False)
    assert len(scripted_llm.requests) == 1  # the scripted server also fails the test on a second one


def test_the_api_key_never_appears_in_an_error_message(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(http_error(400, "bad key sk-test-scripted in request"))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and "sk-test-scripted" not in error.message and "***" in error.message


def test_a_dropped_connection_keeps_the_partial_text_and_is_a_network_error(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(drop("Once upon ", "a time", reasoning=["plotting"]))

    events, error = collect(scripted_llm.config(), REQUEST)

    assert _texts(events) == ["Once upon ", "a time"]
    assert error is not None
    assert (error.code, error.status, error.retryable) == ("LLM_HTTP_ERROR", None, True)
    assert error.partial_text == "Once upon a time"
    assert error.partial_reasoning == "plotting"
    assert error.attempts == 1  # text was shown: never retried (it would be duplicated)
    assert error.to_block() == {"code": "LLM_HTTP_ERROR", "message": error.message, "status": None, "retryable": True}


def test_a_stall_longer_than_the_timeout_is_llm_timeout_with_partial_text(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(stall(5.0, "Thinking about ", "it"))

    started = time.monotonic()
    events, error = collect(scripted_llm.config(timeout=0.3), REQUEST)
    elapsed = time.monotonic() - started

    assert error is not None and error.code == "LLM_TIMEOUT" and error.retryable
    assert error.partial_text == "Thinking about it"
    assert _texts(events) == ["Thinking about ", "it"]
    assert elapsed < 2.0  # the client gave up after its timeout, not after the stall


def test_malformed_json_in_the_stream_is_bad_response(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(malformed("Partial "))

    events, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None
    assert (error.code, error.retryable) == ("LLM_BAD_RESPONSE", False)
    assert error.partial_text == "Partial "
    assert "malformed JSON" in error.message


def test_a_stream_ending_before_finish_reason_is_not_taken_as_complete(scripted_llm: ScriptedServer) -> None:
    from tests.fakes.scripted_server import chunk, raw_stream

    scripted_llm.script(raw_stream(chunk({"content": "half an ans"}), done=False))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and error.code == "LLM_HTTP_ERROR" and error.partial_text == "half an ans"


def test_an_error_event_inside_the_stream_keeps_the_provider_message(scripted_llm: ScriptedServer) -> None:
    from tests.fakes.scripted_server import chunk, raw_stream

    scripted_llm.script(raw_stream(chunk({"content": "Hal"}), {"error": {"message": "Upstream overloaded", "code": 502}}))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and error.code == "LLM_HTTP_ERROR"
    assert "Upstream overloaded" in error.message and error.partial_text == "Hal"


def test_malformed_non_streaming_response_is_bad_response(scripted_llm: ScriptedServer) -> None:
    from crewagent.core.llm.local_server import JsonReply
    from tests.fakes.scripted_server import Step

    scripted_llm.script(Step("no choices", JsonReply(200, {"id": "x", "object": "chat.completion", "choices": []})))

    _, error = collect(scripted_llm.config(stream=False), REQUEST)

    assert error is not None and error.code == "LLM_BAD_RESPONSE"


# retries


def test_429_honours_retry_after_seconds_then_succeeds(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(rate_limited("7"), text("ok"))
    sleep = FakeSleep()

    events, error = collect(scripted_llm.config(), REQUEST, sleep=sleep)

    assert error is None
    assert sleep.delays == [7.0]
    retry = next(e for e in events if isinstance(e, RetryScheduled))
    assert (retry.attempt, retry.delay, retry.code, retry.status) == (1, 7.0, "LLM_RATE_LIMITED", 429)
    assert [type(e).__name__ for e in events][:2] == ["RetryScheduled", "StreamStarted"]
    assert _texts(events) == ["ok"]


def test_retry_after_as_an_http_date_and_retry_after_ms(scripted_llm: ScriptedServer) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    scripted_llm.script(rate_limited(when), rate_limited(retry_after_ms="1500"), text("ok"))
    sleep = FakeSleep()

    _, error = collect(scripted_llm.config(), REQUEST, sleep=sleep)

    assert error is None
    assert 27 <= sleep.delays[0] <= 30
    assert sleep.delays[1] == 1.5


def test_retry_after_is_capped(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(rate_limited("86400"), text("ok"))
    sleep = FakeSleep()

    _, error = collect(scripted_llm.config(), REQUEST, sleep=sleep, retry=RetryPolicy(retry_after_cap=42, random=lambda: 0))

    assert error is None and sleep.delays == [42]


def test_5xx_and_connection_errors_back_off_exponentially_then_give_up(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(server_error(500), hangup(), server_error(503), server_error(502))
    sleep = FakeSleep()

    events, error = collect(scripted_llm.config(max_retries=3), REQUEST, sleep=sleep)

    assert sleep.delays == [0.5, 1.0, 2.0]
    assert [e.code for e in events if isinstance(e, RetryScheduled)] == ["LLM_HTTP_ERROR"] * 3
    assert error is not None
    assert (error.code, error.status, error.retryable, error.attempts) == ("LLM_HTTP_ERROR", 502, True, 4)


def test_backoff_has_jitter_within_bounds(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(server_error(), server_error(), text("ok"))
    sleep = FakeSleep()
    rolls = iter([1.0, 0.5])

    collect(scripted_llm.config(), REQUEST, sleep=sleep, retry=RetryPolicy(base_delay=1.0, jitter=0.5, random=lambda: next(rolls)))

    assert sleep.delays == [0.5, 1.5]  # 1 * (1 - 0.5 * 1.0), 2 * (1 - 0.5 * 0.5)


def test_rate_limit_after_all_retries_is_llm_rate_limited(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(rate_limited("1"), rate_limited("1"))

    _, error = collect(scripted_llm.config(max_retries=1), REQUEST)

    assert error is not None and (error.code, error.status, error.retryable) == ("LLM_RATE_LIMITED", 429, True)
    assert error.retry_after == 1.0


def test_an_exhausted_quota_is_not_retried(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(rate_limited(code="insufficient_quota"))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and error.code == "LLM_RATE_LIMITED" and not error.retryable


def test_a_timeout_before_any_text_is_retried(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(stall(5.0), text("second try"))
    sleep = FakeSleep()

    events, error = collect(scripted_llm.config(timeout=0.3), REQUEST, sleep=sleep)

    assert error is None and _texts(events) == ["second try"]
    assert len(sleep.delays) == 1
    assert sum(isinstance(e, StreamStarted) for e in events) == 1


def test_a_second_timeout_is_not_retried_each_already_cost_a_full_timeout(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(stall(5.0), stall(5.0))
    sleep = FakeSleep()

    _, error = collect(scripted_llm.config(timeout=0.2, max_retries=3), REQUEST, sleep=sleep)

    assert error is not None and error.code == "LLM_TIMEOUT" and error.attempts == 2
    assert len(sleep.delays) == 1


def test_a_request_timeout_overrides_the_config(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(stall(5.0, "slow"))

    started = time.monotonic()
    _, error = collect(scripted_llm.config(timeout=30), LlmRequest([user("summarise")], timeout=0.2))

    assert error is not None and error.code == "LLM_TIMEOUT"
    assert time.monotonic() - started < 2.0


def test_no_retry_once_text_was_streamed(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(drop("already shown"))
    sleep = FakeSleep()

    events, error = collect(scripted_llm.config(max_retries=5), REQUEST, sleep=sleep)

    assert error is not None and error.attempts == 1 and sleep.delays == []
    assert _texts(events) == ["already shown"]


# non-streaming fallback


def test_a_provider_rejecting_streaming_gets_the_same_request_without_it(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(
        http_error(400, "Streaming is not supported by this model", code="unsupported_value"),
        completion("Non-streamed answer."),
        completion("Second call goes straight to non-streaming."),
    )
    sleep = FakeSleep()

    async def main() -> tuple[list, list]:
        async with LlmAdapter(scripted_llm.config(), sleep=sleep) as adapter:
            first = [e async for e in adapter.stream(REQUEST)]
            assert not adapter.streaming
            second = [e async for e in adapter.stream(REQUEST)]
            return first, second

    first, second = asyncio.run(main())

    assert _texts(first) == ["Non-streamed answer."]
    assert _texts(second) == ["Second call goes straight to non-streaming."]
    assert [b["stream"] for b in scripted_llm.bodies] == [True, False, False]
    assert sleep.delays == []


def test_a_plain_400_is_not_mistaken_for_a_streaming_refusal(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(http_error(400, "messages[2]: invalid role"))

    _, error = collect(scripted_llm.config(), REQUEST)

    assert error is not None and error.status == 400 and len(scripted_llm.requests) == 1


# cancellation


def test_cancelling_the_consumer_closes_the_http_stream_promptly(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(slow_text(*[f"word{i} " for i in range(200)], interval=0.05))
    seen: list[str] = []

    async def consume(adapter: LlmAdapter) -> None:
        async for event in adapter.stream(REQUEST):
            if isinstance(event, TextDelta):
                seen.append(event.text)

    async def main() -> tuple[bool, float]:
        async with LlmAdapter(scripted_llm.config()) as adapter:
            task = asyncio.create_task(consume(adapter))
            while len(seen) < 2:
                await asyncio.sleep(0.01)
            cancelled_at = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the server sees the hang-up while the adapter (and its connection pool) is still open
            gone = await asyncio.to_thread(scripted_llm.local_server.wait_for_disconnect, 1, 2.0)
            return gone, time.monotonic() - cancelled_at

    gone, after = asyncio.run(main())

    assert gone and after < 1.0
    assert 2 <= len(seen) < 50


def test_breaking_out_of_the_stream_closes_it_too(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(slow_text(*[f"w{i} " for i in range(200)], interval=0.05))

    async def main() -> None:
        async with LlmAdapter(scripted_llm.config()) as adapter:
            stream = adapter.stream(REQUEST)
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
            await stream.aclose()  # type: ignore[attr-defined]
            assert await asyncio.to_thread(scripted_llm.local_server.wait_for_disconnect, 1, 2.0)

    asyncio.run(main())


# Retry-After parsing


def test_parse_retry_after_forms() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 12, usegmt=True)
    assert parse_retry_after({"Retry-After": "3"}, now=lambda: now) == 3.0
    assert parse_retry_after({"retry-after": date}, now=lambda: now) == pytest.approx(12.0)
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=lambda: now) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "inf"}) is None
    assert parse_retry_after({}) is None


def test_llm_error_codes_are_the_contract() -> None:
    from crewagent.core.llm import LLM_ERROR_CODES

    assert set(LLM_ERROR_CODES) == {"LLM_AUTH_FAILED", "LLM_TIMEOUT", "LLM_RATE_LIMITED", "LLM_HTTP_ERROR", "LLM_BAD_RESPONSE"}
    assert isinstance(LlmError("LLM_TIMEOUT", "x"), Exception)
