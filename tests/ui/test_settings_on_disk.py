"""Settings show what is on disk and Apply keeps what the dialog did not show (issue 18, item 1).

"Always allow" in the approval dialog writes ``tools.alwaysAllow`` from the turn host, behind the
Settings dialog's back; so can another process or a hand edit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from crewagent.core.store._fsutil import atomic_write_json
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.settings import SettingsDialog
from crewagent.ui.settings import dialog as dialog_module
from crewagent.worker import WorkerThread
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.ui.conftest import ScriptedDialogs
from tests.ui.test_conversation import ScriptedApprovals, open_conversation, say
from tests.worker.turns_support import scripted_worker


@pytest.fixture
def approvals() -> ScriptedApprovals:
    return ScriptedApprovals()


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def main(qtbot: Any, host: WorkerThread, dialogs: ScriptedDialogs, approvals: ScriptedApprovals, tmp_path: Path) -> Iterator[MainWindow]:
    state = QSettings(str(tmp_path / "ui-state.ini"), QSettings.Format.IniFormat)
    window = MainWindow(host.worker, dialogs=dialogs, state=state, approvals=approvals)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.settings_opener.close()  # the dialog, if the test opened it
    window.close()


def on_disk(isolated_dirs: dict[str, Path]) -> dict[str, Any]:
    return json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def allowed(dialog: SettingsDialog) -> list[str]:
    tools = dialog.tools_page.always_allow
    return [tools.item(row).text() for row in range(tools.count())]


def always_allow_a_write(qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer, approvals: ScriptedApprovals, project: Any) -> None:
    scripted_llm.script(tool_calls(call("call_w", "fs_write", json.dumps({"path": "@project/a.md", "content": "A"}))), text("Wrote a."))
    approvals.answers = ["allow_always"]
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "write a")


def test_always_allow_from_the_approval_dialog_shows_in_settings_and_survives_apply(
    qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer, approvals: ScriptedApprovals, project: Any, isolated_dirs: dict[str, Path]
) -> None:
    always_allow_a_write(qtbot, main, scripted_llm, approvals, project)
    assert on_disk(isolated_dirs)["tools"]["alwaysAllow"] == ["fs.write"]

    main.show_settings()
    dialog = main.settings_dialog
    qtbot.waitUntil(lambda: allowed(dialog) == ["fs.write"])
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: "Saved" in dialog.status.text())
    assert on_disk(isolated_dirs)["tools"]["alwaysAllow"] == ["fs.write"]


def test_a_rule_added_while_the_dialog_is_open_appears_and_a_removal_keeps_it(
    qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer, approvals: ScriptedApprovals, project: Any, isolated_dirs: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The open dialog asks every second whether the file changed; every 0.1 s here (the dialog is
    # built below), so that the wait for the new rule is not a wait for the clock.
    monkeypatch.setattr(dialog_module, "REFRESH_MS", 100)
    # Replaced whole: the window's start-up requests may still be reading it (see test_settings.py).
    atomic_write_json(isolated_dirs["config"] / "settings.json", {"tools": {"alwaysAllow": ["fs.apply_patch"]}})
    main.load_settings_requested.emit()
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.tools.alwaysAllow == ["fs.apply_patch"])
    main.show_settings()
    dialog = main.settings_dialog
    dialog.tools_page.timeout.setValue(77)  # an edit the user has not applied yet
    qtbot.waitUntil(lambda: allowed(dialog) == ["fs.apply_patch"])

    always_allow_a_write(qtbot, main, scripted_llm, approvals, project)  # while the dialog is open
    qtbot.waitUntil(lambda: allowed(dialog) == ["fs.apply_patch", "fs.write"])
    assert dialog.tools_page.timeout.value() == 77  # the unsaved edit is still there

    tools = dialog.tools_page
    tools.always_allow.setCurrentRow(0)  # remove fs.apply_patch: the user saw and chose that
    tools.remove_allowed.click()
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: "Saved" in dialog.status.text())
    saved = on_disk(isolated_dirs)["tools"]
    assert saved["alwaysAllow"] == ["fs.write"] and saved["timeoutSeconds"] == 77


def test_apply_does_not_overwrite_what_changed_on_disk_and_the_page_did_not_show(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]
) -> None:
    main.show_settings()
    dialog = main.settings_dialog
    dialog.tools_page.timeout.setValue(42)
    # Another process changes the file (whole: see test_settings.py); the dialog has not been told (yet).
    atomic_write_json(isolated_dirs["config"] / "settings.json", {"tools": {"alwaysAllow": ["fs.write"]}, "engine": {"maxTurns": 7}})
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: "Saved" in dialog.status.text())
    saved = on_disk(isolated_dirs)
    assert saved["tools"]["alwaysAllow"] == ["fs.write"] and saved["tools"]["timeoutSeconds"] == 42
    assert saved["engine"]["maxTurns"] == 7
