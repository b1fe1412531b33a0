"""The Model page shows the context window a turn will use, and where its size comes from (issue 15, item 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted_server import API_KEY, ScriptedServer, models
from tests.ui.conftest import SettingsOnly, open_settings_dialog
from tests.ui.test_settings import choose_provider, no_system_keyring  # noqa: F401  (a fixture)


@pytest.fixture
def main(settings_only: SettingsOnly) -> SettingsOnly:
    """The dialog as the window wires it, without the window: the claim is the Model page's."""
    return settings_only


def test_the_window_label_follows_the_model_the_setting_and_the_provider(
    qtbot: Any, main: SettingsOnly, scripted_llm: ScriptedServer, isolated_dirs: dict[str, Path]
) -> None:
    scripted_llm.script(models("local-model", "gpt-4o", metadata={"local-model": {"context_length": 65_536}}))
    dialog = open_settings_dialog(qtbot, main)
    page = dialog.llm_page
    assert page.window_info.text() == "Context window: 128,000 tokens (known model crewagent-demo)"

    choose_provider(dialog, "openai-compatible")
    page.base_url.setText(scripted_llm.base_url)
    page.api_key.setText(API_KEY)
    page.model.setEditText("gpt-4o")
    assert page.window_info.text() == "Context window: 128,000 tokens (known model gpt-4o)"
    page.model.setEditText("local-model")
    assert page.window_info.text() == "Context window: 32,768 tokens (default for unknown models)"

    page.fetch_models.click()
    qtbot.waitUntil(lambda: page.busy_with == "", timeout=10_000)
    assert page.window_info.text() == "Context window: 65,536 tokens (from the provider)"
    # Remembered for the turns to come, in the config folder.
    remembered = json.loads((isolated_dirs["config"] / "provider-models.json").read_text(encoding="utf-8"))
    assert remembered == {scripted_llm.base_url.rstrip("/"): {"local-model": 65_536}}

    page.context_window.setValue(200_000)
    assert page.window_info.text() == "Context window: 200,000 tokens (your setting)"
    assert page.changes()["llm"]["contextWindow"] == 200_000
    page.context_window.setValue(0)
    assert page.context_window.text() == "Automatic" and page.changes()["llm"]["contextWindow"] is None
