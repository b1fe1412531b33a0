"""Issue 18, item 9 "Stale state": the Works rows follow what runs and what the log holds."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import WorkerThread
from tests.fakes.scripted_server import ScriptedServer, held_text
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.ui.test_conversation import ScriptedApprovals, open_conversation, say
from tests.worker.turns_support import scripted_worker


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def make_window(qtbot: Any, host: WorkerThread, dialogs: ScriptedDialogs, tmp_path: Path) -> Callable[[], MainWindow]:
    def make() -> MainWindow:
        state = QSettings(str(tmp_path / "ui-state.ini"), QSettings.Format.IniFormat)
        main = MainWindow(host.worker, dialogs=dialogs, state=state, approvals=ScriptedApprovals())
        qtbot.addWidget(main)
        main.show()
        return main

    return make


def row_detail(main: MainWindow, conversation_id: str) -> str:
    """The text under a Works row's title, as its delegate paints it."""
    works = main.project_view.works
    row = works.model.row_of(conversation_id)
    assert row is not None
    index = works.proxy.mapFromSource(works.model.index(row))
    return works.delegate.detail_text(index, works.model.summary(row))


def test_a_streaming_conversation_row_shows_its_count_and_that_it_streams(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    # The answer streams its first word, then holds until the row has shown the stream: however
    # loaded the machine, the row has the time to show it (a 10 s slow stream used to give it
    # that time, and cost 2 CPU-s of repainting at every word).
    held = threading.Event()
    scripted_llm.script(held_text(held, "Once ", "upon ", "a time."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    cid = conversation.conversation_id
    assert row_detail(main, cid) == "No messages"
    say(qtbot, main, "tell me a story", wait=False)
    qtbot.waitUntil(lambda: conversation.model.streaming, timeout=10_000)
    # The row hears of the stream through the works panel's own signal: it may show it a moment later.
    qtbot.waitUntil(lambda: row_detail(main, cid) == "1 message · streaming…", timeout=9_000)
    assert conversation.model.streaming
    held.set()
    qtbot.waitUntil(lambda: not conversation.busy, timeout=20_000)
    qtbot.waitUntil(lambda: row_detail(main, cid) == "2 messages", timeout=5_000)


@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_a_conversation_another_process_creates_appears_in_the_open_window(
    qtbot: Any, project: Any, conversation: Any, make_window: Callable[[], MainWindow], tmp_path: Path, crewagent_zygote: Zygote
) -> None:
    main = make_window()
    open_project(qtbot, main, project.root)
    works = main.project_view.works
    assert works.model.rowCount() == 1
    assert works.select(conversation.id)
    selected = works.current_summary()
    assert selected is not None
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    # The command line, in a process of its own (forked from the zygote), writes index.json by atomic replace.
    done = crewagent_zygote.run(["import", "--project", str(project.root), "--title", "From the CLI", str(messages)], timeout=60)
    assert done.returncode == 0, done.stderr
    qtbot.waitUntil(lambda: works.model.rowCount() == 2, timeout=10_000)
    titles = {works.model.summary(row).title: works.model.summary(row) for row in range(2)}
    assert titles["From the CLI"].message_count == 2
    # The conversation that was selected stays selected: the list was merged, not reset.
    after = works.current_summary()
    assert after is not None and after.id == conversation.id


def test_the_context_meter_has_a_value_once_a_conversation_is_opened(
    qtbot: Any, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    main = make_window()
    open_conversation(qtbot, main, project.root)
    meter = main.project_view.conversation.composer.meter
    qtbot.waitUntil(lambda: "—" not in meter.text(), timeout=10_000)
    assert "%" in meter.text()
