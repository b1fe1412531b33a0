"""The model's context window (issue 15, item 8): the setting, the provider's model list, known models."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.context import ContextBudget, EstimateCounter, default_counter
from crewagent.core.context.window import DEFAULT_WINDOW, DEMO_MODEL, known_window, metadata_window, resolve_window
from crewagent.core.llm.demo import DEMO_MODEL as DEMO_PROVIDER_MODEL
from crewagent.core.llm.models import list_models_with_windows, test_connection
from crewagent.core.llm.reported_windows import WINDOWS_NAME, ReportedWindows
from crewagent.core.loop.factory import context_window, provider_config, turn_settings
from crewagent.core.settings import Settings
from crewagent.core.messages import ConversationMessage
from crewagent.core.store import RuntimeStore
from tests.fakes.scripted_server import ScriptedServer, models


@pytest.mark.parametrize(
    ("model", "key", "tokens"),
    [
        ("gpt-4o", "gpt-4o", 128_000),
        ("openai/gpt-4o-mini", "gpt-4o", 128_000),
        ("gpt-4.1-mini", "gpt-4.1", 1_047_576),
        ("gpt-4", "gpt-4", 8_192),
        ("gpt-5-mini", "gpt-5", 400_000),
        ("o3-mini", "o3", 200_000),
        ("deepseek-chat", "deepseek", 128_000),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen", 32_768),
        ("llama3.1:8b", "llama3.1", 131_072),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", 131_072),
        ("anthropic/claude-sonnet-4.5", "claude", 200_000),
        ("moonshot-v1-128k", "128k", 131_072),
        (DEMO_MODEL, DEMO_MODEL, 128_000),
    ],
)
def test_known_models_have_their_published_window(model: str, key: str, tokens: int) -> None:
    assert known_window(model) == (key, tokens)
    window = resolve_window(model)
    assert (window.source, window.tokens, window.describe()) == ("known", tokens, f"known model {key}")


def test_the_setting_beats_the_provider_which_beats_the_table_which_beats_the_default() -> None:
    assert resolve_window("gpt-4o", setting=50_000, reported=64_000).describe() == "your setting"
    assert resolve_window("gpt-4o", reported=64_000).tokens == 64_000
    assert resolve_window("gpt-4o", reported=64_000).describe() == "from the provider"
    unknown = resolve_window("my-finetune")
    assert (unknown.tokens, unknown.source) == (DEFAULT_WINDOW, "default")
    assert known_window("") is None and known_window("my-finetune") is None


def test_the_demo_model_id_is_the_demo_providers() -> None:
    assert DEMO_MODEL == DEMO_PROVIDER_MODEL


def test_provider_metadata_fields_and_untrusted_values() -> None:
    assert metadata_window({"context_length": 200_000}) == 200_000  # OpenRouter, Together
    assert metadata_window({"max_model_len": 32_768}) == 32_768  # vLLM
    assert metadata_window({"context_window": 131_072}) == 131_072  # Groq
    assert metadata_window({"top_provider": {"context_length": 65_536}}) == 65_536
    assert metadata_window({"context_length": "8192"}) == 8_192
    for bad in (True, -1, 10, 10**12, "lots", None, [4096]):
        assert metadata_window({"context_length": bad}) is None


def test_with_tokens_counted_the_budget_is_the_window_minus_the_answers_reserve() -> None:
    budget = ContextBudget.from_settings({"model": "gpt-4o"})
    exact = budget.for_counter(default_counter())
    assert (exact.max_tokens, exact.count_chars) == (128_000 - 16_384, False)
    assert exact.fits(500_000, 100_000)  # characters no longer count
    assert "known model gpt-4o" in exact.source and "16384 reserved for the answer" in exact.source
    # A small window keeps a quarter for the answer.
    small = ContextBudget.from_settings({"contextWindow": 8_000}).for_counter(default_counter())
    assert small.max_tokens == 6_000
    # contextMaxTokens can only lower it.
    capped = ContextBudget.from_settings({"model": "gpt-4o", "contextMaxTokens": 20_000}).for_counter(default_counter())
    assert capped.max_tokens == 20_000 and "capped by contextMaxTokens" in capped.source
    # Without a tokenizer: the character budget, as the design documents say.
    fallback = budget.for_counter(EstimateCounter())
    assert fallback.count_chars and fallback.max_tokens is None and not fallback.fits(120_001, 1)
    assert "fallback" in fallback.source


def test_the_models_list_reports_windows(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(
        models("big", "plain", metadata={"big": {"context_length": 262_144}}),
        models("big", metadata={"big": {"max_model_len": 65_536}}),
    )
    ids, windows = asyncio.run(list_models_with_windows(scripted_llm.config()))
    assert ids == ["big", "plain"] and windows == {"big": 262_144}
    result = asyncio.run(test_connection(scripted_llm.config(model="big")))
    assert result.ok and dict(result.windows) == {"big": 65_536}


def test_reported_windows_are_remembered_per_base_url_and_used_by_turns(isolated_dirs: dict[str, Path]) -> None:
    cache = ReportedWindows()
    cache.record("http://host:8000/v1/", {"local-model": 16_384})
    assert cache.get("http://host:8000/v1", "local-model") == 16_384
    assert cache.get("http://other/v1", "local-model") is None

    settings = Settings.model_validate({"llm": {"provider": "openai-compatible", "baseUrl": "http://host:8000/v1", "model": "local-model"}})
    config = provider_config(settings)
    window = context_window(settings, config)
    assert (window.tokens, window.describe()) == (16_384, "from the provider")
    per_turn = turn_settings(settings, "chat", window=window)
    assert per_turn.budget.for_counter(default_counter()).max_tokens == 16_384 - 4_096
    # The user's setting wins over what the provider said.
    mine = settings.model_copy(update={"llm": settings.llm.model_copy(update={"contextWindow": 12_000})})
    assert context_window(mine, config).describe() == "your setting"

    # A damaged cache is ignored, not fatal.
    (isolated_dirs["config"] / WINDOWS_NAME).write_text("[" * 5000, encoding="utf-8")
    assert context_window(settings, config).source == "default"


def test_crewagent_context_shows_the_budget_and_its_source(
    isolated_dirs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = RuntimeStore(isolated_dirs["data"])
    project = store.open_project(tmp_path / "proj", create=True)
    meta = store.create_conversation(project.id, title="t")
    store.append_message(project.id, meta.id, ConversationMessage.new("user", "hello"))
    args = ["context", "--project", str(tmp_path / "proj"), "--conversation", meta.id, "--json"]

    assert main(args) == 0
    budget = json.loads(capsys.readouterr().out)["debug"]["budget"]
    assert budget["enforced"] == "tokens" and budget["contextWindow"]["describe"] == f"known model {DEMO_MODEL}"
    assert budget["contextMaxTokens"] == 128_000 - 16_384

    (isolated_dirs["config"] / "settings.json").write_text(json.dumps({"llm": {"contextWindow": 50_000}}), encoding="utf-8")
    assert main(args) == 0
    budget = json.loads(capsys.readouterr().out)["debug"]["budget"]
    assert budget["contextWindow"]["tokens"] == 50_000 and budget["contextWindow"]["source"] == "setting"
    assert "your setting" in budget["source"]

    assert main([*args, "--max-chars", "5000"]) == 0  # the flag asks for the character budget
    budget = json.loads(capsys.readouterr().out)["debug"]["budget"]
    assert budget["enforced"] == "characters" and budget["contextMaxChars"] == 5_000


def test_the_tool_definitions_share_the_window() -> None:
    budget = ContextBudget.from_settings({"model": "gpt-4o"})
    with_tools = replace(budget, tools_tokens=2_000).for_counter(default_counter())
    assert with_tools.max_tokens == 128_000 - 16_384 - 2_000
    assert "2000 for the tool definitions" in with_tools.source
