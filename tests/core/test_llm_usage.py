"""Token usage per turn (issue 17): stored on the assistant message, with cached tokens and cost,
summed right across streamed and non-streamed calls and after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewagent.core.llm import ProviderConfig
from crewagent.core.llm.config import config_from_env
from crewagent.core.llm.events import Usage
from crewagent.core.llm.usage import cached_tokens, sum_usage, usage_record
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, finished, turn
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.scripted_server import API_KEY, ScriptedServer, call, chunk, completion, raw_stream, tool_calls, usage_chunk

#: gpt-4o-mini in resources/providers.json: USD per 1M tokens.
IN, CACHED_IN, OUT = 0.15, 0.075, 0.6


def _openai(server: ScriptedServer, **update: object) -> ProviderConfig:
    settings = {"provider": "openai", "baseUrl": server.base_url, "model": "gpt-4o-mini"}
    return config_from_env(settings, env={}, api_key=API_KEY).model_copy(update={"timeout": 5.0, **update})


def _streamed_with_cache(text: str, prompt: int, completion_tokens: int, cached: int) -> object:
    usage = usage_chunk(prompt, completion_tokens)
    usage["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    return raw_stream(chunk({"role": "assistant", "content": text}), chunk({}, "stop"), usage, label="streamed with usage")


def test_streamed_and_non_streamed_turns_sum_right_and_survive_a_restart(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, isolated_dirs: dict[str, Path]
) -> None:
    (project.root / "a.txt").write_text("alpha", encoding="utf-8")
    scripted_llm.script(
        _streamed_with_cache("Hello.", 1000, 20, 800),
        # A tool turn: two calls in one turn, each with its usage.
        tool_calls(call("c1", "fs_read", '{"path": "@project/a.txt"}')),
        _streamed_with_cache("It says alpha.", 1200, 30, 1000),
    )
    turn(store, project, conversation.id, _openai(scripted_llm), "hi")
    assert finished(turn(store, project, conversation.id, _openai(scripted_llm), "read a")).ok
    # tool_calls() sends no usage: that call has none, and is not counted.
    scripted_llm.script(completion("Bye."))
    turn(store, project, conversation.id, _openai(scripted_llm, stream=False), "bye")

    restarted = RuntimeStore(isolated_dirs["data"])
    log = assert_log_valid(restarted, project.id, conversation.id)
    first = log[1].usage
    assert first is not None and first["prompt_tokens"] == 1000 and first["cached_tokens"] == 800
    assert first["prompt_tokens_details"] == {"cached_tokens": 800}  # the provider's own, as sent
    assert first["cost_usd"] == pytest.approx((200 * IN + 800 * CACHED_IN + 20 * OUT) / 1e6)
    assert scripted_llm.bodies[0]["stream_options"] == {"include_usage": True}
    assert "stream_options" not in scripted_llm.bodies[-1] and log[-1].usage is not None

    totals = sum_usage(m.usage for m in log)
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens, totals.cached_tokens) == (3, 2205, 53, 1800)
    expected = (200 * IN + 800 * CACHED_IN + 20 * OUT) + (200 * IN + 1000 * CACHED_IN + 30 * OUT) + (5 * IN + 3 * OUT)
    assert totals.cost_usd == pytest.approx(expected / 1e6)
    assert totals.describe() == f"2,205 in (1,800 cached) · 53 out · ${expected / 1e6:.4f}"


def test_a_model_without_known_prices_has_tokens_but_no_cost() -> None:
    record = usage_record(Usage(100, 10, 110), provider="ollama", model="qwen3:8b")
    assert record == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    assert sum_usage([record, None, {"junk": True}]).cost_usd is None


def test_a_dated_model_id_the_provider_reports_finds_its_prices() -> None:
    record = usage_record(Usage(1_000_000, 0, 1_000_000), provider="openai", model="my-alias", reported_model="gpt-4o-mini-2024-07-18")
    assert record["cost_usd"] == pytest.approx(IN)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 7}},  # OpenAI, Groq, Gemini
        {"prompt_tokens": 10, "prompt_cache_hit_tokens": 7, "prompt_cache_miss_tokens": 3},  # DeepSeek
        {"prompt_tokens": 10, "cache_read_input_tokens": 7},  # Anthropic models through a gateway
    ],
)
def test_cached_tokens_are_read_under_every_name(usage: dict[str, object]) -> None:
    assert cached_tokens(usage) == 7
