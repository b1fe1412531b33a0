"""Settings merge with defaults, survive damage, and never hold a secret; keys go to the keyring or a 0600 file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

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
