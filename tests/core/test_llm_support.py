"""The pieces around the adapter: the scripted server's own guarantees, config, names, models."""

from __future__ import annotations

import asyncio
import re

import pytest

from crewagent.core.llm import LlmConfigError, LlmRequest, ProviderConfig, ToolNameCodec, config_from_env
from crewagent.core.llm import models as llm_models
from crewagent.core.llm.toolnames import readable_wire_name
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import collect, user
from tests.fakes.scripted_server import ScriptedServer, hangup, http_error, models, models_error, text, unauthorized

# the scripted server


def test_unused_steps_fail_the_test() -> None:
    with ScriptedServer([text("used"), text("never requested")]) as server:
        collect(server.config(), LlmRequest([user("x")]))
    with pytest.raises(AssertionError, match=r"1 scripted step\(s\) never requested: \['text'\]"):
        server.assert_all_used()


def test_a_request_beyond_the_script_fails_loudly_even_if_the_caller_swallows_it() -> None:
    with ScriptedServer([text("only one")]) as server:
        collect(server.config(), LlmRequest([user("x")]))
        _, error = collect(server.config(), LlmRequest([user("y")]))
    assert error is not None and error.status == 400 and "SCRIPTED SERVER" in error.message
    assert len(server.requests) == 2  # a 400 is not retried: one loud failure, not four
    with pytest.raises(AssertionError, match="unexpected chat request beyond the script"):
        server.assert_all_used()


def test_a_request_to_the_wrong_endpoint_fails_the_test() -> None:
    with ScriptedServer([models("m")]) as server:
        _, error = collect(server.config(), LlmRequest([user("x")]))
    assert error is not None
    with pytest.raises(AssertionError, match="expected a models request"):
        server.assert_all_used()


def test_the_scripted_server_records_requests_in_order(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(text("a"), text("b"))

    collect(scripted_llm.config(), LlmRequest([user("first")]))
    collect(scripted_llm.config(), LlmRequest([user("second")]))

    assert [b["messages"][-1]["content"] for b in scripted_llm.bodies] == ["first", "second"]
    assert [label for _, label in scripted_llm.used] == ["text", "text"]


# config


def test_config_from_env_prefers_the_environment_for_real_providers() -> None:
    env = {"OPENAI_BASE_URL": "http://localhost:11434/v1/", "OPENAI_API_KEY": "sk-env", "CREWAGENT_MODEL": "llama3"}
    settings = {"provider": "openai-compatible", "baseUrl": "http://ignored/v1", "model": "ignored", "sendReasoning": True}

    config = config_from_env(settings, env=env, api_key="sk-keyring")

    assert (config.provider, config.base_url, config.model, config.api_key) == (
        "openai-compatible",
        "http://localhost:11434/v1",
        "llama3",
        "sk-env",
    )
    assert config.send_reasoning is True


def test_config_from_env_falls_back_to_settings_and_keyring() -> None:
    settings = {
        "provider": "openai",
        "providers": {"openai": {"model": "gpt-x", "timeout": 30, "stream": False, "extraHeaders": {"X-A": "b"}}},
    }

    config = config_from_env(settings, env={}, api_key="sk-keyring")

    assert config.base_url == "https://api.openai.com/v1"
    assert (config.model, config.timeout, config.stream, config.api_key) == ("gpt-x", 30, False, "sk-keyring")
    assert config.extra_headers == {"X-A": "b"}


def test_the_key_never_shows_in_repr_or_dump() -> None:
    config = ProviderConfig(base_url="http://x/v1", api_key="sk-secret", model="m")
    assert "sk-secret" not in repr(config) and "sk-secret" not in str(config.model_dump())
    assert "sk-secret" not in config.describe()


def test_config_errors_are_clear() -> None:
    with pytest.raises(LlmConfigError, match="base URL"):
        config_from_env({"provider": "openai-compatible", "model": "m"}, env={})
    with pytest.raises(LlmConfigError, match="Unknown provider"):
        config_from_env({"provider": "anthropic"}, env={})
    with pytest.raises(LlmConfigError, match="demo"):
        config_from_env({}, env={})


def test_the_demo_provider_ignores_the_environment() -> None:
    config = config_from_env({}, env={"OPENAI_BASE_URL": "http://x/v1", "CREWAGENT_MODEL": "y"}, demo_base_url="http://127.0.0.1:9/v1")
    assert (config.provider, config.base_url, config.model, config.api_key) == ("demo", "http://127.0.0.1:9/v1", "crewagent-demo", "")


# tool names


@pytest.mark.parametrize(
    "names",
    [
        ["fs.read", "fs.list", "ui.ask_user", "task"],
        ["fs.read", "fs_read", "fs:read"],
        ["a" * 80 + ".x", "a" * 80 + ".y"],
        ["mcp.server/tool name", "ünïcode.tool"],
    ],
)
def test_tool_name_encoding_round_trips_and_fits_the_strictest_pattern(names: list[str]) -> None:
    forward = ToolNameCodec(names)
    backward = ToolNameCodec(list(reversed(names)))

    wire = [forward.encode(n) for n in names]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", w) for w in wire), wire
    assert len(set(wire)) == len(names)
    assert [forward.decode(w) for w in wire] == names
    assert wire == [backward.encode(n) for n in names]  # independent of order


def test_readable_names_when_nothing_collides() -> None:
    codec = ToolNameCodec(["fs.read", "ui.ask_user"])
    assert codec.encode("fs.read") == "fs_read" == readable_wire_name("fs.read")
    assert codec.encode("ui.ask_user") == "ui_ask_user"
    assert codec.decode("unknown_tool") == "unknown_tool"


# models and test connection


def test_list_models_and_test_connection_ok(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(models("zeta", "scripted-model", "alpha"), models("alpha"))

    listed = asyncio.run(llm_models.list_models(scripted_llm.config()))
    result = asyncio.run(llm_models.test_connection(scripted_llm.config()))

    assert listed == ["alpha", "scripted-model", "zeta"]
    assert result.ok and result.models == ("alpha",) and result.model_listed is False
    assert "not in the provider's list" in result.message


@pytest.mark.parametrize(
    ("step", "status"),
    [
        (models_error(401, "bad key"), "auth_failed"),
        (models_error(404, "not here"), "not_found"),
        (models_error(500, "boom"), "http_error"),
    ],
)
def test_test_connection_says_what_is_wrong(scripted_llm: ScriptedServer, step, status: str) -> None:  # type: ignore[no-untyped-def]
    scripted_llm.script(step)

    result = asyncio.run(llm_models.test_connection(scripted_llm.config()))

    assert result.status == status and not result.ok and result.message


def test_test_connection_unreachable() -> None:
    with ScriptedServer() as server:
        config = server.config()
    # the server is stopped: nothing listens on that port any more
    result = asyncio.run(llm_models.test_connection(config))
    assert result.status == "unreachable" and "Could not reach" in result.message


def test_models_step_helpers_cover_hangups_too(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(hangup(), http_error(401), unauthorized())
    # a chat call sees the hang-up (retried), then the 401 stops it; the third step is used next
    _, error = collect(scripted_llm.config(max_retries=2), LlmRequest([user("x")]))
    assert error is not None and error.code == "LLM_AUTH_FAILED" and error.attempts == 2
    _, error = collect(scripted_llm.config(), LlmRequest([user("x")]))
    assert error is not None and error.code == "LLM_AUTH_FAILED"
