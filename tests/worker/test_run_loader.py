"""Worker.load_run: a conversation's active run read off the GUI thread, with its graph laid out once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal, Slot

from crewagent.worker import WorkerThread, start_worker
from crewagent.worker.runs import LoadedRun
from tests.core.run_helpers import install_notes, start_run
from tests.worker.gui_thread import wait_signal


class RunClient(QObject):
    open_project = Signal(str)
    load_run = Signal(str, str)

    def __init__(self, host: WorkerThread):
        super().__init__()
        self.open_project.connect(host.worker.open_project, Qt.ConnectionType.QueuedConnection)
        self.load_run.connect(host.worker.load_run, Qt.ConnectionType.QueuedConnection)
        host.worker.run_loaded.connect(self.on_loaded)
        self.loaded: list[LoadedRun] = []

    @Slot(object)
    def on_loaded(self, loaded: LoadedRun) -> None:
        self.loaded.append(loaded)


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path]) -> Iterator[WorkerThread]:
    running = start_worker(isolated_dirs["data"])
    try:
        yield running
    finally:
        running.stop()


def test_load_run_answers_with_the_snapshot_and_one_layout_per_workflow(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    chat = store.create_conversation(project.id, title="chat")
    client = RunClient(host)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))

    client.load_run.emit(project.id, run.conversationId)
    qtbot.waitUntil(lambda: len(client.loaded) == 1)
    first = client.loaded[0]
    assert first.snapshot is not None and first.snapshot.run_id == run.runId and first.layout is not None
    assert [box.id for box in first.layout.nodes] == ["write", "check", "done"]

    client.load_run.emit(project.id, run.conversationId)
    qtbot.waitUntil(lambda: len(client.loaded) == 2)
    assert client.loaded[1].layout is first.layout  # laid out once, kept

    client.load_run.emit(project.id, chat.id)  # no run: an answer all the same
    client.load_run.emit(project.id, "conv_" + "0" * 32)  # no such conversation: an answer, not an error
    client.load_run.emit("proj_unknown", run.conversationId)  # a project that is not open
    qtbot.waitUntil(lambda: len(client.loaded) == 5)
    answers = {(loaded.project_id, loaded.conversation_id): loaded for loaded in client.loaded[2:]}  # in any order
    empty, missing = answers[(project.id, chat.id)], answers[(project.id, "conv_" + "0" * 32)]
    assert (empty.snapshot, empty.problem) == (None, "")
    assert missing.snapshot is None and missing.problem
    assert answers[("proj_unknown", run.conversationId)].snapshot is None


def test_a_burst_of_requests_is_folded_into_at_most_two_reads(
    qtbot: Any, host: WorkerThread, store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    client = RunClient(host)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))
    # The first read is held until the whole burst has reached the worker, whatever the scheduler
    # does: the burst is then certain to arrive while a read is under way (the case folded).
    loader, release = host.worker._runs, threading.Event()
    read = loader.read

    def held_read(*args: Any) -> LoadedRun:
        assert release.wait(30)
        return read(*args)

    monkeypatch.setattr(loader, "read", held_read)
    for _ in range(30):
        client.load_run.emit(project.id, run.conversationId)
    client.load_run.emit("proj_unknown", run.conversationId)  # answered on the worker thread, after the burst
    qtbot.waitUntil(lambda: any(loaded.project_id == "proj_unknown" for loaded in client.loaded))
    release.set()

    def reads() -> list[LoadedRun]:
        return [loaded for loaded in client.loaded if loaded.project_id == project.id]

    qtbot.waitUntil(lambda: len(reads()) == 2)  # the one under way, and one for the 29 that came meanwhile
    client.load_run.emit("proj_unknown", run.conversationId)
    qtbot.waitUntil(lambda: len(client.loaded) == 4)
    assert len(reads()) == 2 and all(loaded.snapshot is not None for loaded in reads())
