"""The model picker in the conversation header switches the model of the next turn (issue 18, item 13)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import Worker, WorkerThread
from tests.fakes.scripted_server import ScriptedServer, models, text
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.ui.test_settings import no_system_keyring  # noqa: F401  (a fixture: never the real keyring)


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    """A worker whose provider comes from the settings, as in the app: the scripted server, model m-1."""
    llm = {"provider": "openai-compatible", "baseUrl": scripted_llm.base_url, "model": "m-1", "timeoutSeconds": 5}
    (isolated_dirs["config"] / "settings.json").write_text(json.dumps({"llm": llm}), encoding="utf-8")
    running = WorkerThread(Worker(isolated_dirs["data"])).start()
    yield running
    running.stop()


@pytest.fixture
def main(qtbot: Any, host: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:
    window = MainWindow(host.worker, dialogs=dialogs)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.close()


def test_picking_a_model_from_the_providers_list_makes_the_next_request_use_it(
    qtbot: Any, main: MainWindow, scripted_llm: ScriptedServer, project: Any, isolated_dirs: dict[str, Path]
) -> None:
    open_project(qtbot, main, project.root)
    main.project_view.new_chat()
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and bool(conversation.conversation_id))
    picker = conversation.header.model_picker
    assert picker.isVisible() and picker.isEnabled() and picker.currentText() == "m-1"
    assert scripted_llm.requests == []  # the list is asked only when the picker is opened

    scripted_llm.script(models("m-2", "m-1"))
    picker.showPopup()
    qtbot.waitUntil(lambda: picker.count() == 2, timeout=10_000)
    assert [picker.itemText(row) for row in range(2)] == ["m-1", "m-2"] and picker.currentText() == "m-1"
    picker.hidePopup()

    picker.setCurrentIndex(1)
    picker.activated.emit(1)  # what a click on "m-2" emits
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.llm.model == "m-2", timeout=10_000)
    assert json.loads((isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8"))["llm"]["model"] == "m-2"

    scripted_llm.script(text("Answered by m-2."))
    conversation.composer.input.setPlainText("hello")
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(scripted_llm.bodies) == 1, timeout=10_000)
    assert scripted_llm.bodies[0]["model"] == "m-2"
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    assert picker.currentText() == "m-2"


def test_the_demo_shows_its_model_and_cannot_be_switched(qtbot: Any, window: MainWindow, project: Any) -> None:
    open_project(qtbot, window, project.root)
    window.project_view.new_chat()
    picker = window.project_view.conversation.header.model_picker
    qtbot.waitUntil(picker.isVisible)
    assert picker.currentText() == "crewagent-demo" and not picker.isEnabled()
