"""Settings merge with defaults, survive damage, and never hold a secret; keys go to the keyring or a 0600 file."""

from __future__ import annotations

import json
import stat
import threading
import time
from pathlib import Path

import pytest

from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore


def test_fresh_install_defaults_to_the_demo_provider(isolated_dirs: dict[str, Path]) -> None:
    settings = SettingsStore().load()
    assert settings.llm.provider == "demo"
    assert settings.llm.contextMaxMessages == 80 and settings.llm.contextMaxChars == 120_000
    assert settings.engine.maxTurns == 50 and settings.tools.timeoutSeconds == 300


def test_partial_file_is_merged_with_defaults_and_unknown_keys_kept(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_text(json.dumps({"llm": {"model": "gpt-x", "future": 1}, "plugins": {"a": True}}), encoding="utf-8")
    store = SettingsStore()
    settings = store.load()
    assert settings.llm.model == "gpt-x" and settings.llm.provider == "demo"
    store.save(settings)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["llm"]["future"] == 1 and saved["plugins"] == {"a": True}


def test_one_invalid_value_does_not_reset_the_others(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_text(json.dumps({"llm": {"model": "keep-me", "contextMaxMessages": -3}}), encoding="utf-8")
    store = SettingsStore()
    settings = store.load()
    assert settings.llm.model == "keep-me"
    assert settings.llm.contextMaxMessages == 80
    assert any("contextMaxMessages" in problem for problem in store.problems)


def test_damaged_file_is_kept_aside(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_bytes(b"{not json")
    store = SettingsStore()
    assert store.load() == Settings()
    assert (isolated_dirs["config"] / "settings.json.corrupt").read_bytes() == b"{not json"
    assert store.problems


def test_a_file_being_written_in_place_is_not_kept_aside(isolated_dirs: dict[str, Path]) -> None:
    """A hand edit saved in place, or a tool writing settings.json, is read whole a moment later."""
    path = isolated_dirs["config"] / "settings.json"
    whole = json.dumps({"llm": {"model": "keep-me"}, "padding": "x" * 200_000}).encode()
    path.write_bytes(whole)
    store = SettingsStore()
    stop = threading.Event()

    def write_in_place() -> None:  # truncate, then write in pieces: readers see torn files
        while not stop.is_set():
            with path.open("r+b") as file:
                file.truncate(0)
                for start in range(0, len(whole), 16_384):
                    file.write(whole[start : start + 16_384])
                    file.flush()
            stop.wait(0.02)  # saved again and again, as fast as someone pressing Ctrl+S

    writer = threading.Thread(target=write_in_place)
    writer.start()
    try:
        torn = loads = 0
        deadline = time.monotonic() + 20
        # At least 200 loads, and on until the writer has been caught half-way a few times (how
        # soon depends on the threads' scheduling, so a fixed count of loads could miss it).
        while loads < 200 or (torn < 3 and time.monotonic() < deadline):
            torn += path.stat().st_size != len(whole)
            assert store.load().llm.model == "keep-me", store.problems
            loads += 1
    finally:
        stop.set()
        writer.join()
    assert not (isolated_dirs["config"] / "settings.json.corrupt").exists()
    assert torn  # the writer was caught half-way at least once, so the test could fail


def test_secrets_are_never_written_to_settings(isolated_dirs: dict[str, Path]) -> None:
    store = SettingsStore()
    store.update(llm={"apiKey": "sk-should-not-be-here", "model": "m"})
    text = (isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8")
    assert "sk-should-not-be-here" not in text and '"model": "m"' in text


def test_without_a_keyring_keys_go_to_a_private_file_with_a_warning(isolated_dirs: dict[str, Path]) -> None:
    secrets = SecretStore()  # the test machine has no keyring backend
    backend = secrets.set("openai", "sk-test-123")
    assert not backend.secure and "not encrypted" in backend.warning
    assert secrets.get("openai") == "sk-test-123"
    path = isolated_dirs["config"] / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secrets.delete("openai")
    assert secrets.get("openai") is None


def test_an_old_file_without_provider_profiles_loads_and_each_provider_keeps_its_own(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_text(json.dumps({"llm": {"provider": "openai-compatible", "baseUrl": "http://h:1/v1", "model": "fake-small"}}), encoding="utf-8")
    llm = SettingsStore().load().llm
    assert llm.providers == {}
    assert (llm.profile("openai-compatible").baseUrl, llm.profile("openai-compatible").model) == ("http://h:1/v1", "fake-small")
    # Other providers do not inherit the custom URL or model: they get their defaults.
    assert (llm.profile("openai").baseUrl, llm.profile("openai").model) == ("", "gpt-4o-mini")
    assert (llm.profile("demo").baseUrl, llm.profile("demo").model) == ("", "")


def test_a_damaged_provider_profile_is_dropped_alone(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_text(
        json.dumps({"llm": {"model": "keep", "providers": {"openai": 5, "openai-compatible": {"baseUrl": "http://x/v1", "model": "m"}}}}),
        encoding="utf-8",
    )
    store = SettingsStore()
    llm = store.load().llm
    assert llm.model == "keep" and "openai" not in llm.providers
    assert llm.profile("openai-compatible").baseUrl == "http://x/v1"
    assert any("providers" in problem for problem in store.problems)


def test_another_provider_on_the_command_line_does_not_inherit_the_active_ones_url(
    isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from crewagent.core.llm.config import OPENAI_BASE_URL
    from crewagent.core.loop.factory import provider_config

    for name in ("OPENAI_BASE_URL", "CREWAGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings.model_validate({"llm": {"provider": "openai-compatible", "baseUrl": "http://h:1/v1", "model": "fake-small"}})
    config = provider_config(settings, provider="openai")
    assert (config.base_url, config.model) == (OPENAI_BASE_URL, "gpt-4o-mini")
    assert provider_config(settings).base_url == "http://h:1/v1"


def test_choosing_the_keyring_outside_macos_does_not_probe_for_the_macos_libraries(
    isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """keyring's macOS backend looked for three macOS libraries with ``find_library`` (ldconfig,
    gcc and ld run to fail, ~0.1-0.25 CPU-s of each app start on Linux) before saying "macOS
    required"; the backend chosen is the same without it."""
    import ctypes.util
    import sys

    import keyring.core

    if sys.platform == "darwin":
        pytest.skip("on macOS the keychain is the backend")
    probed: list[str | None] = []
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: probed.append(name))
    for name in ("keyring.backends.macOS", "keyring.backends.macOS.api"):  # as in a fresh process
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)  # not chosen yet, as in a fresh process
    secrets = SecretStore()
    assert probed == []
    assert not secrets.backend.secure  # still the same choice: no keyring on the test machine
