"""Switching providers in Settings: each provider keeps its own base URL and model (issue 18, item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.llm import discovery
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import WorkerThread
from tests.fakes import fixtures as _client_imported  # noqa: F401  (the model client, imported before any timed wait)
from tests.fakes.scripted_server import ScriptedServer, models
from tests.ui.conftest import ScriptedDialogs, SettingsOnly, open_settings_dialog
from tests.ui.test_settings import choose_provider, no_system_keyring  # noqa: F401  (a fixture)


@pytest.fixture
def main(settings_only: SettingsOnly) -> SettingsOnly:
    """The dialog as the window wires it, without the window (the Start page's tests build their own)."""
    return settings_only


def test_each_provider_shows_its_own_model_and_url_and_they_survive_a_save(
    qtbot: Any, main: SettingsOnly, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings_dialog(qtbot, main)
    page = dialog.llm_page
    choose_provider(dialog, "openai-compatible")
    page.base_url.setText("http://localhost:9/v1")
    page.model.setEditText("fake-small")

    choose_provider(dialog, "demo")
    assert page.model.currentText() == "" and page.base_url.text() == ""
    choose_provider(dialog, "openai")
    assert page.base_url.text() == "" and page.model.currentText() == "gpt-4o-mini"
    page.model.setEditText("gpt-4.1")
    choose_provider(dialog, "openai-compatible")
    assert (page.base_url.text(), page.model.currentText()) == ("http://localhost:9/v1", "fake-small")

    dialog.save_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    saved = json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))["llm"]
    assert (saved["provider"], saved["baseUrl"], saved["model"]) == ("openai-compatible", "http://localhost:9/v1", "fake-small")
    assert saved["providers"]["openai"] == {"baseUrl": "", "model": "gpt-4.1"}

    # Opened again: OpenAI still has its own model, not the compatible server's.
    dialog = open_settings_dialog(qtbot, main)
    choose_provider(dialog, "openai")
    assert (dialog.llm_page.base_url.text(), dialog.llm_page.model.currentText()) == ("", "gpt-4.1")
    choose_provider(dialog, "openai-compatible")
    assert dialog.llm_page.model.currentText() == "fake-small"


def test_the_picker_lists_every_preset_and_shows_what_each_needs(
    qtbot: Any, main: SettingsOnly, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings_dialog(qtbot, main)
    page = dialog.llm_page
    listed = [page.provider.itemData(row) for row in range(page.provider.count())]
    assert listed[:3] == ["demo", "openai", "openai-compatible"] and {"ollama", "lmstudio", "deepseek", "mistral", "azure"} <= set(listed)

    choose_provider(dialog, "ollama")
    assert page.provider.currentText() == "Ollama (on this computer)"
    assert "http://localhost:11434/v1" in page.base_url.placeholderText()
    assert not page.api_key.isEnabled() and page.fetch_models.isEnabled()
    choose_provider(dialog, "azure")
    assert page.api_key.isEnabled() and not page.fetch_models.isEnabled()
    assert "openai.azure.com/openai/deployments" in page.base_url.placeholderText()
    choose_provider(dialog, "deepseek")
    assert page.api_key.isEnabled() and page.fetch_models.isEnabled()
    page.model.setEditText("deepseek-reasoner")

    dialog.save_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    saved = json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))["llm"]
    assert (saved["provider"], saved["baseUrl"], saved["model"]) == ("deepseek", "", "deepseek-reasoner")


def test_opening_settings_offers_a_local_server_that_answers_with_its_models(
    qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs, monkeypatch: Any
) -> None:
    with ScriptedServer() as server:
        # Two probes, both answered: the window's own at its first start on the demo provider, then
        # the dialog's. The server is known before the window exists: a window made first would
        # probe in the background at a moment the test does not control (it was flaky that way).
        server.script(models("qwen3:8b", "llama3.1:latest"), models("qwen3:8b", "llama3.1:latest"))
        monkeypatch.setenv("CREWAGENT_LOCAL_SERVERS", f"ollama={server.base_url}")
        monkeypatch.setattr(discovery, "PROBE_TIMEOUT", 20.0)  # 1 s is for a real machine, not a loaded test run
        main = MainWindow(worker_thread.worker, dialogs=dialogs)
        qtbot.addWidget(main)
        main.show()
        qtbot.waitUntil(lambda: main.start_page.local_label.isVisible(), timeout=60_000)  # the window's probe answered
        main.show_settings()  # the dialog is built now: it shows the window's probe at once, then probes again
        assert len(main.settings_dialog.llm_page.local_offer.buttons) == 1
        dialog = open_settings_dialog(qtbot, main)
        offer = dialog.llm_page.local_offer
        qtbot.waitUntil(lambda: len(offer.buttons) == 1, timeout=60_000)  # 15 s ran out at load ~24
        assert offer.isVisible() and "Ollama" in offer.labels[0].text() and "2 models" in offer.labels[0].text()

        offer.buttons[0].click()

        page = dialog.llm_page
        assert page.current_provider() == "ollama" and page.base_url.text() == server.base_url
        assert [page.model.itemText(row) for row in range(page.model.count())] == ["llama3.1:latest", "qwen3:8b"]
        assert page.model.currentText() == "llama3.1:latest"
        qtbot.waitUntil(server.assert_all_used, timeout=60_000)  # the dialog's own probe may still be on its way
        dialog.close()
        main.close()


def test_a_first_start_on_the_demo_mentions_a_local_server_on_the_start_page(
    qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs, monkeypatch: Any
) -> None:
    with ScriptedServer() as server:
        server.script(models("qwen3:8b"))
        monkeypatch.setenv("CREWAGENT_LOCAL_SERVERS", f"lmstudio={server.base_url}")
        monkeypatch.setattr(discovery, "PROBE_TIMEOUT", 20.0)  # 1 s is for a real machine, not a loaded test run
        window = MainWindow(worker_thread.worker, dialogs=dialogs)
        qtbot.addWidget(window)
        window.show()
        start = window.start_page
        qtbot.waitUntil(lambda: start.local_label.isVisible(), timeout=15_000)
        assert "LM Studio" in start.local_label.text()
        server.assert_all_used()
        window.close()
