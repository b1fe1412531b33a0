"""End to end: a model in `crewagent chat` with the home folder as the project cannot read the stored keys (issue 15)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import keyring.core
import pytest
from keyring.backends import fail

from crewagent.cli import main
from crewagent.core import paths
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import SettingsStore
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

STORED_KEY = f"sk-stored-{uuid.uuid4().hex}"
ENV_KEY = f"sk-env-{uuid.uuid4().hex}"


@pytest.fixture
def home_is_the_app(isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Default data and settings folders under a tmp HOME, and no OS keyring (keys in secrets.json)."""
    home = isolated_dirs["home"]
    monkeypatch.delenv(paths.DATA_DIR_ENV)
    monkeypatch.delenv(paths.CONFIG_DIR_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return home


def test_the_model_cannot_read_the_stored_keys_of_a_home_folder_project(
    home_is_the_app: Path, scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = home_is_the_app
    # The stored key belongs to another provider; this run uses the key from the environment,
    # so the stored one has no business in any request at all.
    SecretStore().set("openai", STORED_KEY)
    assert (home / ".config" / "CrewAgent" / "secrets.json").is_file()
    SettingsStore().update(llm={"provider": "openai-compatible", "baseUrl": scripted_llm.base_url, "model": "scripted-model"})
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    scripted_llm.script(
        tool_calls(
            call("c1", "fs_read", '{"path": "@project/.config/CrewAgent/secrets.json"}'),
            call("c2", "fs_search", '{"query": "sk-stored", "path": "@project"}'),
            call("c3", "fs_write", '{"path": ".config/CrewAgent/settings.json", "content": "{}"}'),
        ),
        text("I cannot read it."),
    )
    assert main(["chat", "--project", str(home), "--yes", "read my key"]) == 0
    capsys.readouterr()

    results = {m["tool_call_id"]: json.loads(m["content"]) for m in scripted_llm.bodies[1]["messages"] if m["role"] == "tool"}
    assert results["c1"]["error"]["code"] == "E_SANDBOX_VIOLATION"
    assert "the stored API keys" in results["c1"]["error"]["message"]
    assert results["c2"]["ok"] is True and results["c2"]["count"] == 0
    assert results["c3"]["error"]["code"] == "E_SANDBOX_VIOLATION"
    assert "settings folder" in results["c3"]["error"]["message"]
    for request in scripted_llm.requests:
        assert STORED_KEY.encode() not in request.raw_body
        assert STORED_KEY not in json.dumps(dict(request.headers))
    assert json.loads((home / ".config" / "CrewAgent" / "settings.json").read_text())["llm"]["baseUrl"] == scripted_llm.base_url
