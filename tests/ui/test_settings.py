"""The Settings dialog as a user meets it: the demo on a fresh install, saving, keys, Test Connection, models, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail

from crewagent.core.store._fsutil import atomic_write_json
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.settings import SettingsDialog
from crewagent.worker import WorkerThread
from tests.fakes.scripted_server import API_KEY, ScriptedServer, models, models_error
from tests.ui.conftest import ScriptedDialogs


@pytest.fixture(autouse=True)
def no_system_keyring() -> Iterator[None]:
    """Never touch the developer's real keyring: keys go to the private fallback file."""
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def main(qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:
    window = MainWindow(worker_thread.worker, dialogs=dialogs)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.settings_opener.close()  # the dialog, if the test opened it
    window.close()


def open_settings(qtbot: Any, main: MainWindow) -> SettingsDialog:
    main.settings_action.trigger()  # Ctrl+,
    dialog = main.settings_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.llm_page._key_state is not None)
    return dialog


def choose_provider(dialog: SettingsDialog, name: str) -> None:
    combo = dialog.llm_page.provider
    combo.setCurrentIndex(combo.findData(name))


def test_a_fresh_install_runs_on_the_demo_provider(qtbot: Any, main: MainWindow) -> None:
    assert main.start_page.provider_label.text() == "Model provider: Demo (offline script)"
    dialog = open_settings(qtbot, main)
    page = dialog.llm_page
    assert page.provider.currentText() == "Demo (offline script)"
    assert not page.base_url.isEnabled() and not page.api_key.isEnabled()
    assert [dialog.nav.item(row).text() for row in range(dialog.nav.count())] == ["Model", "Tools", "Context", "Appearance", "Packages", "MCP"]
    assert not dialog.isModal()


def test_saving_a_provider_stores_the_key_in_the_secret_store_not_in_settings_json(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings(qtbot, main)
    page = dialog.llm_page
    choose_provider(dialog, "openai-compatible")
    page.base_url.setText("http://localhost:11434/v1")
    page.model.setEditText("llama3.1")
    page.api_key.setText("sk-very-secret")
    dialog.tools_page.timeout.setValue(42)
    dialog.save_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())

    assert main.settings is not None and main.settings.llm.model == "llama3.1"
    assert main.start_page.provider_label.text() == "Model provider: OpenAI-compatible (custom URL) · llama3.1"
    config = isolated_dirs["config"]
    saved = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    assert saved["llm"]["baseUrl"] == "http://localhost:11434/v1" and saved["tools"]["timeoutSeconds"] == 42
    holding_the_key = [p.name for p in config.rglob("*") if p.is_file() and b"sk-very-secret" in p.read_bytes()]
    assert holding_the_key == ["secrets.json"]

    # Opened again: the key is not shown, only that one is stored (and where).
    dialog = open_settings(qtbot, main)
    qtbot.waitUntil(lambda: dialog.llm_page.remove_key.isVisible())
    assert dialog.llm_page.api_key.text() == ""
    assert "A key is stored" in dialog.llm_page.api_key.placeholderText()
    assert dialog.llm_page.key_warning.isVisible() and "not encrypted" in dialog.llm_page.key_warning.text()


def test_invalid_values_are_shown_under_their_fields_and_nothing_is_saved(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings(qtbot, main)
    choose_provider(dialog, "openai-compatible")
    dialog.llm_page.base_url.setText("localhost:11434")
    dialog.context_page.max_chars.setValue(10)
    dialog.apply_button.click()

    url_error = dialog.llm_page.fields["llm.baseUrl"].error
    qtbot.waitUntil(url_error.isVisible)
    assert "http://" in url_error.text()
    assert dialog.llm_page.fields["llm.model"].error.isVisible()
    assert dialog.isVisible() and "Nothing was saved" in dialog.status.text()
    assert dialog.stack.currentWidget() is dialog.llm_page  # the first page with a problem
    assert not (isolated_dirs["config"] / "settings.json").exists()

    # Fixing the URL and the model leaves the too-small character budget, on the Context page.
    dialog.llm_page.base_url.setText("http://localhost:11434/v1")
    dialog.llm_page.model.setEditText("m")
    dialog.apply_button.click()
    chars_error = dialog.context_page.fields["llm.contextMaxChars"].error
    qtbot.waitUntil(lambda: dialog.stack.currentWidget() is dialog.context_page)
    assert chars_error.isVisible() and not url_error.isVisible()


def test_test_connection_shows_ok_and_fills_the_models_then_a_refused_key(
    qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer
) -> None:
    scripted_llm.script(models("zeta", "alpha"), models_error(401, "Incorrect API key provided"))
    dialog = open_settings(qtbot, main)
    page = dialog.llm_page
    choose_provider(dialog, "openai-compatible")
    page.base_url.setText(scripted_llm.base_url)
    page.model.setEditText("alpha")
    page.api_key.setText(API_KEY)

    page.test_button.click()
    assert page.busy.isVisible() and not page.test_button.isEnabled()  # busy, and never blocking
    qtbot.waitUntil(lambda: page.busy_with == "", timeout=10_000)
    assert page.result.objectName() == "resultOk" and page.result.text().startswith("✓ Connected.")
    assert [page.model.itemText(i) for i in range(page.model.count())] == ["alpha", "zeta"]
    assert page.model.currentText() == "alpha" and page.test_button.isEnabled() and not page.busy.isVisible()

    page.test_button.click()
    qtbot.waitUntil(lambda: page.busy_with == "", timeout=10_000)
    assert page.result.objectName() == "resultError"
    assert "The API key was refused." in page.result.text()


def test_fetch_models_fills_the_picker_from_v1_models(qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(models("m-2", "m-1"))
    dialog = open_settings(qtbot, main)
    page = dialog.llm_page
    choose_provider(dialog, "openai-compatible")
    page.base_url.setText(scripted_llm.base_url)
    page.fetch_models.click()
    qtbot.waitUntil(lambda: page.model.count() == 2, timeout=10_000)
    assert [page.model.itemText(i) for i in range(2)] == ["m-1", "m-2"]
    assert "2 models available" in page.result.text()


def test_removing_an_always_allowed_tool_is_saved(qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]) -> None:
    # Replaced whole, as the app writes it: the window's start-up requests (the provider's
    # description) may still be reading settings.json, and a read of a half-written file sets it
    # aside as damaged (then this test waited for settings that were gone).
    atomic_write_json(isolated_dirs["config"] / "settings.json", {"tools": {"alwaysAllow": ["fs.write", "fs.apply_patch"]}})
    main.load_settings_requested.emit()
    # The worker answers after the window's start-up requests (agents, packages), which a loaded
    # machine can make take more than the default 5 s.
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.tools.alwaysAllow == ["fs.write", "fs.apply_patch"], timeout=30_000)
    dialog = open_settings(qtbot, main)
    tools = dialog.tools_page
    assert tools.always_allow.count() == 2 and not tools.remove_allowed.isEnabled()
    tools.always_allow.setCurrentRow(0)
    tools.remove_allowed.click()
    dialog.save_button.click()
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.tools.alwaysAllow == ["fs.apply_patch"])
    saved = json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))
    assert saved["tools"]["alwaysAllow"] == ["fs.apply_patch"]
