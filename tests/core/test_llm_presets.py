"""Provider presets (resources/providers.json): the file's schema, the configs they give, and the
request shapes their quirks need, over real HTTP against the scripted server."""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from typing import Any

import pytest

from crewagent.core.llm import LlmAdapter, LlmRequest
from crewagent.core.llm.config import LlmConfigError, config_from_env
from crewagent.core.providers import PresetsError, parse_presets, presets, provider_names
from crewagent.core.settings import SettingsStore
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import run, user
from tests.fakes.scripted_server import MODEL, ScriptedServer, text

#: Every provider issue 17 names.
ISSUE_PRESETS = {
    "openai", "openai-compatible", "ollama", "lmstudio", "vllm", "llamacpp", "deepseek",
    "openrouter", "groq", "mistral", "together", "gemini", "azure",
}  # fmt: skip


def _shipped() -> dict[str, Any]:
    return json.loads((files("crewagent.resources") / "providers.json").read_text("utf-8"))


def test_the_shipped_file_has_every_preset_of_the_issue() -> None:
    assert set(presets()) == ISSUE_PRESETS
    assert provider_names()[0] == "demo"
    for spec in presets().values():
        assert spec.baseUrl or spec.urlHint, f"{spec.id}: neither its own URL nor an example for the user"
    assert presets()["ollama"].baseUrl == "http://localhost:11434/v1" and presets()["ollama"].key == "none"
    assert presets()["lmstudio"].baseUrl == "http://localhost:1234/v1" and presets()["lmstudio"].key == "none"
    assert [p.id for p in presets().values() if p.local] == ["ollama", "lmstudio"]


def test_the_command_line_offers_exactly_the_presets() -> None:
    from crewagent import cli_commands

    assert cli_commands.PROVIDERS == provider_names()


def _broken(change: Any) -> dict[str, Any]:
    raw = copy.deepcopy(_shipped())
    change(raw)
    return raw


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda raw: raw["providers"][0].update(keyRequired=True), "providers/0/keyRequired"),
        (lambda raw: raw["providers"][2].update(key="maybe"), "providers/2/key"),
        (lambda raw: raw["providers"][0]["models"]["gpt-4o"].update(contextWindow=10), "contextWindow"),
        (lambda raw: raw["providers"].append(dict(raw["providers"][0])), "used twice"),
        (lambda raw: raw.update(schemaVersion=2), "schemaVersion"),
    ],
)
def test_a_damaged_presets_file_is_refused_naming_the_field(change: Any, where: str) -> None:
    with pytest.raises(PresetsError, match=where.replace("/", "/")):
        parse_presets(_broken(change))


def test_a_preset_gives_its_url_default_model_and_key_rules() -> None:
    groq = config_from_env({"provider": "groq"}, env={}, api_key="gk")
    assert (groq.base_url, groq.model, groq.api_key) == ("https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", "gk")
    deepseek = config_from_env({"provider": "deepseek"}, env={"DEEPSEEK_API_KEY": "dk"}, api_key="ignored")
    assert deepseek.api_key == "dk" and not deepseek.send_reasoning
    with pytest.raises(LlmConfigError, match="needs an API key .*MISTRAL_API_KEY"):
        config_from_env({"provider": "mistral"}, env={})
    with pytest.raises(LlmConfigError, match="vllm provider needs a base URL .*8000"):
        config_from_env({"provider": "vllm", "model": "m"}, env={})
    with pytest.raises(LlmConfigError, match="lmstudio provider needs a model name"):
        config_from_env({"provider": "lmstudio"}, env={})


def test_a_named_local_server_ignores_the_generic_openai_environment() -> None:
    env = {"OPENAI_BASE_URL": "https://elsewhere.example/v1", "OPENAI_API_KEY": "sk-openai"}
    ollama = config_from_env({"provider": "ollama"}, env=env, api_key="typed-by-mistake")
    assert (ollama.base_url, ollama.api_key) == ("http://localhost:11434/v1", "")
    compatible = config_from_env({"provider": "openai-compatible", "model": "m"}, env=env)
    assert (compatible.base_url, compatible.api_key) == ("https://elsewhere.example/v1", "sk-openai")


def test_a_saved_url_and_model_win_over_the_preset() -> None:
    settings = {"provider": "ollama", "providers": {"ollama": {"baseUrl": "http://gpu-box:11434/v1", "model": "qwen3"}}}
    config = config_from_env(settings, env={})
    assert (config.base_url, config.model) == ("http://gpu-box:11434/v1", "qwen3")


def test_settings_take_a_preset_and_repair_an_unknown_provider(tmp_path: Any) -> None:
    store = SettingsStore(tmp_path)
    (tmp_path / "settings.json").write_text(json.dumps({"llm": {"provider": "ollama", "model": "qwen3"}}))
    assert store.load().llm.provider == "ollama"
    (tmp_path / "settings.json").write_text(json.dumps({"llm": {"provider": "anthropic-direct", "model": "qwen3"}}))
    settings = store.load()
    assert settings.llm.provider == "demo" and settings.llm.model == "qwen3"
    assert any("anthropic-direct" in problem for problem in store.problems)


# quirks on the wire


def _one_turn(server: ScriptedServer, settings: dict[str, Any], **kwargs: Any) -> dict[str, str]:
    server.script(text("hi"))
    config = config_from_env(settings, env={}, **kwargs).model_copy(update={"timeout": 5.0, "max_retries": 0})

    async def main() -> None:
        async with LlmAdapter(config) as llm:
            await llm.complete(LlmRequest([user("hello")]))

    run(main())
    request = server.requests[-1]
    return {"path": request.path, **{k.lower(): v for k, v in request.headers.items()}}


def test_azure_sends_the_deployment_url_the_api_version_and_an_api_key_header(scripted_llm: ScriptedServer) -> None:
    deployment = f"{scripted_llm.base_url.removesuffix('/v1')}/openai/deployments/my-gpt4o"
    sent = _one_turn(scripted_llm, {"provider": "azure", "baseUrl": deployment, "model": "my-gpt4o"}, api_key="az-key")
    assert sent["path"] == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    assert sent["api-key"] == "az-key"
    assert "authorization" not in sent


def test_azure_api_version_can_be_set(scripted_llm: ScriptedServer) -> None:
    settings = {"provider": "azure", "baseUrl": scripted_llm.base_url, "model": "d", "providers": {"azure": {"apiVersion": "2025-01-01-preview"}}}
    sent = _one_turn(scripted_llm, settings, api_key="az-key")
    assert sent["path"].endswith("/chat/completions?api-version=2025-01-01-preview")


@pytest.mark.parametrize("attribution", [True, False])
def test_openrouter_attribution_headers_are_optional(scripted_llm: ScriptedServer, attribution: bool) -> None:
    settings = {"provider": "openrouter", "baseUrl": scripted_llm.base_url, "model": MODEL, "attribution": attribution}
    sent = _one_turn(scripted_llm, settings, api_key="or-key")
    assert sent["authorization"] == "Bearer or-key"
    assert ("x-title" in sent and "http-referer" in sent) is attribution
    assert ("x-title" not in sent and "http-referer" not in sent) is (not attribution)


def test_a_keyless_local_server_gets_a_placeholder_bearer(scripted_llm: ScriptedServer) -> None:
    sent = _one_turn(scripted_llm, {"provider": "lmstudio", "baseUrl": scripted_llm.base_url, "model": MODEL})
    assert sent["authorization"] == "Bearer no-key"


def test_azure_test_connection_asks_the_deployment_for_one_token(scripted_llm: ScriptedServer) -> None:
    from crewagent.core.llm.models import test_connection

    scripted_llm.script(text("p"))
    config = config_from_env({"provider": "azure", "baseUrl": scripted_llm.base_url, "model": "dep"}, env={}, api_key="k")
    result = run(test_connection(config))
    assert result.ok, result.message
    body = scripted_llm.bodies[-1]
    # o-series deployments refuse `max_tokens`; `max_completion_tokens` works for every deployment.
    assert body["max_completion_tokens"] == 1 and "max_tokens" not in body
    assert scripted_llm.requests[-1].path.endswith("?api-version=2024-10-21")


def test_the_preset_model_table_feeds_the_context_budget_after_setting_and_provider_list(isolated_dirs: dict[str, Any]) -> None:
    from crewagent.core.llm.reported_windows import ReportedWindows
    from crewagent.core.loop.factory import context_window
    from crewagent.core.settings import Settings

    settings = Settings()
    mistral = config_from_env({"provider": "mistral", "model": "mistral-small-latest"}, env={}, api_key="k")
    window = context_window(settings, mistral)
    assert (window.tokens, window.source, window.known_as) == (131072, "known", "mistral-small-latest")
    # The same model behind a custom URL: only the generic table (which knows an older, smaller one).
    custom = config_from_env({"provider": "openai-compatible", "baseUrl": "http://x/v1", "model": "mistral-small-latest"}, env={})
    assert context_window(settings, custom).tokens == 32768
    ReportedWindows().record(mistral.base_url, {"mistral-small-latest": 65536})
    assert context_window(settings, mistral).source == "provider"
    settings.llm.contextWindow = 20000
    assert context_window(settings, mistral).tokens == 20000
