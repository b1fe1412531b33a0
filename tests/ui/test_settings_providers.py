"""Switching providers in Settings: each provider keeps its own base URL and model (issue 18, item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crewagent.ui.mainwindow import MainWindow
from tests.ui.test_settings import choose_provider, main, no_system_keyring, open_settings  # noqa: F401  (fixtures)


def test_each_provider_shows_its_own_model_and_url_and_they_survive_a_save(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]  # noqa: F811
) -> None:
    dialog = open_settings(qtbot, main)
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
    dialog = open_settings(qtbot, main)
    choose_provider(dialog, "openai")
    assert (dialog.llm_page.base_url.text(), dialog.llm_page.model.currentText()) == ("", "gpt-4.1")
    choose_provider(dialog, "openai-compatible")
    assert dialog.llm_page.model.currentText() == "fake-small"


def test_the_picker_lists_every_preset_and_shows_what_each_needs(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]  # noqa: F811
) -> None:
    dialog = open_settings(qtbot, main)
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
