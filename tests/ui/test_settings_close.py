"""The Settings dialog does not lose edits or steal keystrokes (issue 18, item 8).

Close with unsaved changes asks Save / Discard / Cancel; Test Connection keeps the focus out of
the Timeout field; Appearance applies a choice at once, as its page says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import ScriptedDialogs, SettingsOnly, open_settings_dialog


@pytest.fixture
def main(settings_only: SettingsOnly, dialogs: ScriptedDialogs) -> Iterator[SettingsOnly]:
    """The dialog as the window wires it, without the window: these claims are the dialog's."""
    yield settings_only
    dialogs.unsaved_settings_answer = "discard"  # before settings_only closes it


def saved(isolated_dirs: dict[str, Path]) -> dict[str, Any]:
    path = isolated_dirs["config"] / "settings.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}  # type: ignore[no-any-return]


def test_close_without_changes_asks_nothing(qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs) -> None:
    dialog = open_settings_dialog(qtbot, main)
    dialog.close_button.click()
    assert not dialog.isVisible() and "unsaved_settings" not in dialogs.asked


def test_close_with_unsaved_changes_asks_and_cancel_keeps_them(qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs) -> None:
    dialog = open_settings_dialog(qtbot, main)
    dialog.tools_page.timeout.setValue(42)
    dialogs.unsaved_settings_answer = "cancel"
    dialog.close_button.click()
    assert dialogs.asked.count("unsaved_settings") == 1
    assert dialog.isVisible() and dialog.tools_page.timeout.value() == 42


def test_close_with_unsaved_changes_then_save_saves_and_closes(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings_dialog(qtbot, main)
    dialog.tools_page.timeout.setValue(42)
    dialogs.unsaved_settings_answer = "save"
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # Escape and the title bar's close go the same way
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert saved(isolated_dirs)["tools"]["timeoutSeconds"] == 42


def test_close_with_unsaved_changes_then_discard_forgets_them(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings_dialog(qtbot, main)
    dialog.tools_page.timeout.setValue(42)
    dialogs.unsaved_settings_answer = "discard"
    dialog.close_button.click()
    assert dialogs.asked.count("unsaved_settings") == 1
    assert not dialog.isVisible() and "timeoutSeconds" not in saved(isolated_dirs).get("tools", {})
    dialog = open_settings_dialog(qtbot, main)
    assert dialog.tools_page.timeout.value() == 300  # the setting, not the discarded edit


def test_test_connection_does_not_move_the_focus_into_timeout(qtbot: Any, main: SettingsOnly) -> None:
    dialog = open_settings_dialog(qtbot, main)
    page = dialog.llm_page
    page.test_button.setFocus()
    assert dialog.focusWidget() is page.test_button
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    assert page.busy_with == "test"
    focused = dialog.focusWidget()
    assert focused not in (page.timeout, page.timeout.lineEdit()) and not page.timeout.lineEdit().hasSelectedText()
    qtbot.waitUntil(lambda: page.busy_with == "")  # the demo answers at once
    assert dialog.focusWidget() is page.test_button  # back where the user was
    assert page.timeout.value() == 120


def test_appearance_applies_at_once_as_the_page_says(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, isolated_dirs: dict[str, Path]
) -> None:
    dialog = open_settings_dialog(qtbot, main)
    page = dialog.appearance_page
    assert page.intro.text() == "Changes apply at once, without a restart."
    theme = page.theme
    theme.setCurrentIndex(theme.findData("dark"))
    theme.activated.emit(theme.currentIndex())  # what a user's choice in the list emits
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.appearance.theme == "dark")
    assert saved(isolated_dirs)["appearance"]["theme"] == "dark"
    dialog.close_button.click()
    assert not dialog.isVisible() and "unsaved_settings" not in dialogs.asked
