"""Settings through the worker: saved off the GUI thread, validated per field, keys never in settings.json."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QObject, Qt, Signal

from crewagent.core.settings import Settings
from crewagent.worker import Worker, WorkerThread
from crewagent.worker.values import AgentSummary, ApiKeyState, ConnectionReport, LlmDraft, ModelList
from tests.fakes.scripted_server import API_KEY, ScriptedServer, models, models_error
from tests.worker.gui_thread import assert_not_emitted, wait_signal


class SettingsClient(QObject):
    """Sends the settings requests the way the dialog does: queued onto the worker thread."""

    load_settings = Signal()
    save_settings = Signal(object)
    set_api_key = Signal(str, str)
    test_connection = Signal(object)
    list_models = Signal(object)
    load_agents = Signal()

    def __init__(self, worker: Worker):
        super().__init__()
        for name in ("load_settings", "save_settings", "set_api_key", "test_connection", "list_models", "load_agents"):
            getattr(self, name).connect(getattr(worker, name), Qt.ConnectionType.QueuedConnection)


@pytest.fixture(autouse=True)
def no_system_keyring() -> Iterator[None]:
    """Never touch the developer's real keyring: keys go to the private fallback file."""
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def settings_client(worker_thread: WorkerThread) -> SettingsClient:
    return SettingsClient(worker_thread.worker)


def test_a_fresh_config_loads_the_demo_provider(qtbot: Any, worker_thread: WorkerThread, settings_client: SettingsClient) -> None:
    worker = worker_thread.worker
    with wait_signal(qtbot, worker.settings_changed) as changed, wait_signal(qtbot, worker.api_key_changed) as key:
        settings_client.load_settings.emit()
    settings = changed.args[0]
    assert isinstance(settings, Settings) and settings.llm.provider == "demo"
    assert key.args[0].provider == "demo" and not key.args[0].is_set


def test_saved_settings_are_written_and_announced(
    qtbot: Any, isolated_dirs: dict[str, Path], worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    worker = worker_thread.worker
    changes = {"llm": {"provider": "openai", "model": "gpt-x", "contextMaxTokens": 32000}, "tools": {"fs": {"maxReadBytes": 4096}}}
    with wait_signal(qtbot, worker.settings_changed) as changed:
        settings_client.save_settings.emit(changes)
    settings = changed.args[0]
    assert (settings.llm.provider, settings.llm.model, settings.tools.fs.maxReadBytes) == ("openai", "gpt-x", 4096)
    assert settings.tools.fs.maxWriteBytes == 5_000_000  # a nested change keeps its siblings
    saved = json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))
    assert saved["llm"]["model"] == "gpt-x" and saved["llm"]["contextMaxTokens"] == 32000


def test_invalid_changes_name_their_fields_and_save_nothing(
    qtbot: Any, isolated_dirs: dict[str, Path], worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    worker = worker_thread.worker
    with assert_not_emitted(qtbot, worker.settings_changed), wait_signal(qtbot, worker.settings_invalid) as invalid:
        settings_client.save_settings.emit({"llm": {"provider": "openai-compatible", "baseUrl": "", "contextMaxChars": 5}})
    fields = {problem.field for problem in invalid.args[0]}
    assert fields == {"llm.contextMaxChars", "llm.baseUrl", "llm.model"}
    with wait_signal(qtbot, worker.settings_invalid) as invalid:
        settings_client.save_settings.emit({"llm": {"provider": "openai-compatible", "baseUrl": "localhost:11434"}})
    messages = {problem.field: problem.message for problem in invalid.args[0]}
    assert "http://" in messages["llm.baseUrl"] and "model" in messages["llm.model"].lower()
    assert not (isolated_dirs["config"] / "settings.json").exists()


def test_the_api_key_goes_to_the_secret_store_never_to_settings_json(
    qtbot: Any, isolated_dirs: dict[str, Path], worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    worker = worker_thread.worker
    with wait_signal(qtbot, worker.settings_changed):
        settings_client.save_settings.emit({"llm": {"provider": "openai", "apiKey": "sk-smuggled"}})
    with wait_signal(qtbot, worker.api_key_changed) as changed:
        settings_client.set_api_key.emit("openai", "sk-secret-123")
    state = changed.args[0]
    assert isinstance(state, ApiKeyState) and state.is_set and not state.secure and "not encrypted" in state.warning
    every_text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in isolated_dirs["config"].rglob("*.json"))
    assert "sk-secret-123" in (isolated_dirs["config"] / "secrets.json").read_text(encoding="utf-8")
    assert "sk-secret-123" not in (isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8")
    assert "sk-smuggled" not in every_text
    with wait_signal(qtbot, worker.api_key_changed) as changed:
        settings_client.set_api_key.emit("openai", "")
    assert not changed.args[0].is_set


def test_test_connection_reports_ok_with_the_models_then_an_auth_failure(
    qtbot: Any, scripted_llm: ScriptedServer, worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    scripted_llm.script(models("beta", "alpha"), models_error(401, "Incorrect API key provided"))
    worker = worker_thread.worker
    draft = LlmDraft("openai-compatible", scripted_llm.base_url, "alpha", 5.0, api_key=API_KEY)
    with wait_signal(qtbot, worker.connection_tested, timeout=10_000) as tested:
        settings_client.test_connection.emit(draft)
    report = tested.args[0]
    assert isinstance(report, ConnectionReport) and report.ok and report.models == ("alpha", "beta")
    assert scripted_llm.requests[0].headers.get("authorization") == f"Bearer {API_KEY}"

    with wait_signal(qtbot, worker.connection_tested, timeout=10_000) as tested:
        settings_client.test_connection.emit(draft)
    assert tested.args[0].status == "auth_failed" and "refused the API key" in tested.args[0].message


def test_the_model_list_comes_from_v1_models(
    qtbot: Any, scripted_llm: ScriptedServer, worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    scripted_llm.script(models("m2", "m1"))
    worker = worker_thread.worker
    with wait_signal(qtbot, worker.models_listed, timeout=10_000) as listed:
        settings_client.list_models.emit(LlmDraft("openai-compatible", scripted_llm.base_url, "", 5.0, api_key=API_KEY))
    assert listed.args[0] == ModelList("openai-compatible", scripted_llm.base_url, ("m1", "m2"))
    with wait_signal(qtbot, worker.models_listed) as listed:
        settings_client.list_models.emit(LlmDraft("openai-compatible", "", "", 5.0))
    assert not listed.args[0].models and "base URL" in listed.args[0].error


def test_load_agents_lists_the_builtin_personas(qtbot: Any, worker_thread: WorkerThread, settings_client: SettingsClient) -> None:
    with wait_signal(qtbot, worker_thread.worker.agents_loaded) as loaded:
        settings_client.load_agents.emit()
    agents = loaded.args[0]
    assert all(isinstance(agent, AgentSummary) for agent in agents)
    assert [agent.id for agent in agents][:2] == ["assistant", "code-reviewer"]
    assert agents[1].title == "Code Reviewer" and agents[1].menu[1].trigger == "*review"


def test_test_connection_remembers_the_context_windows_the_provider_reports(
    qtbot: Any, scripted_llm: ScriptedServer, worker_thread: WorkerThread, settings_client: SettingsClient
) -> None:
    from crewagent.core.llm.reported_windows import ReportedWindows
    from crewagent.core.loop.factory import context_window, provider_config

    scripted_llm.script(models("alpha", "beta", metadata={"alpha": {"max_model_len": 24_576}}))
    worker = worker_thread.worker
    draft = LlmDraft("openai-compatible", scripted_llm.base_url, "alpha", 5.0, api_key=API_KEY)
    with wait_signal(qtbot, worker.connection_tested, timeout=10_000) as tested:
        settings_client.test_connection.emit(draft)
    assert tested.args[0].ok and tested.args[0].windows == (("alpha", 24_576),)
    assert ReportedWindows().get(scripted_llm.base_url, "alpha") == 24_576
    # The next turn with these settings budgets with the provider's window.
    settings = Settings.model_validate({"llm": {"provider": "openai-compatible", "baseUrl": scripted_llm.base_url, "model": "alpha"}})
    window = context_window(settings, provider_config(settings))
    assert (window.tokens, window.describe()) == (24_576, "from the provider")


def test_save_merges_into_the_file_as_it_is_now_and_refresh_notices_other_writers(isolated_dirs: dict[str, Path]) -> None:
    from crewagent.core.settings import SettingsStore
    from crewagent.worker.settings_ops import SettingsOps

    ops = SettingsOps()
    assert ops.current.tools.alwaysAllow == []
    assert ops.refresh() is None  # nothing changed since it was read
    SettingsStore().update(tools={"alwaysAllow": ["fs.write"]})  # the turn host's "Always allow"
    refreshed = ops.refresh()
    assert refreshed is not None and refreshed.tools.alwaysAllow == ["fs.write"]
    assert ops.refresh() is None

    SettingsStore().update(engine={"maxTurns": 7})  # not yet noticed by ops
    saved = ops.save({"tools": {"timeoutSeconds": 42}})
    assert saved.engine.maxTurns == 7 and saved.tools.alwaysAllow == ["fs.write"] and saved.tools.timeoutSeconds == 42
    assert ops.refresh() is None  # its own write is not news


def test_refresh_never_sets_aside_a_file_another_writer_is_half_way_through(isolated_dirs: dict[str, Path]) -> None:
    """The dialog polls while a hand edit (or any in-place writer) is mid-write: the poll used to see
    the torn file as damaged and move it to settings.json.corrupt, so the writer's content was lost
    and the next Apply saved defaults over it (a CI flake of test_settings_on_disk)."""
    from crewagent.worker.settings_ops import SettingsOps

    ops = SettingsOps()
    assert ops.current.tools.alwaysAllow == []
    path = isolated_dirs["config"] / "settings.json"
    whole = json.dumps({"tools": {"alwaysAllow": ["fs.write"]}, "engine": {"maxTurns": 7}})
    for torn in ("", whole[: len(whole) // 2]):
        path.write_text(torn, encoding="utf-8")
        assert ops.refresh() is None
        assert path.read_text(encoding="utf-8") == torn and not path.with_name("settings.json.corrupt").exists()
    path.write_text(whole, encoding="utf-8")  # the writer finishes
    refreshed = ops.refresh()
    assert refreshed is not None and refreshed.tools.alwaysAllow == ["fs.write"] and refreshed.engine.maxTurns == 7
    saved = ops.save({"tools": {"timeoutSeconds": 42}})
    assert saved.tools.alwaysAllow == ["fs.write"] and saved.engine.maxTurns == 7
