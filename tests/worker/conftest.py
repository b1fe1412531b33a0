"""Worker fixtures: a Worker running in its own thread, a client that sends it requests, a recorder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal, Slot

from crewagent.worker import Worker, WorkerThread, start_worker


class Client(QObject):
    """Sends requests the way the UI does: signals queued onto the worker thread."""

    load_recent_projects = Signal()
    create_project = Signal(str, str)
    open_project = Signal(str)
    forget_project = Signal(str)
    load_conversations = Signal(str)
    create_conversation = Signal(str, str)

    def __init__(self, worker: Worker):
        super().__init__()
        for name in ("load_recent_projects", "create_project", "open_project", "forget_project",
                     "load_conversations", "create_conversation"):
            getattr(self, name).connect(getattr(worker, name), Qt.ConnectionType.QueuedConnection)


class Recorder(QObject):
    """Receives every worker signal on the GUI thread, in order, as ``(signal, args)``."""

    def __init__(self, worker: Worker):
        super().__init__()
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        worker.recent_projects_changed.connect(self._recent)
        worker.project_opened.connect(self._opened)
        worker.conversations_loaded.connect(self._conversations)
        worker.conversation_created.connect(self._created)
        worker.error.connect(self._error)
        worker.project_unavailable.connect(self._unavailable)

    def of(self, signal: str) -> list[tuple[Any, ...]]:
        return [args for name, args in self.events if name == signal]

    @Slot(str, str)
    def _unavailable(self, folder: str, reason: str) -> None:
        self.events.append(("project_unavailable", (folder, reason)))

    @Slot(object)
    def _recent(self, entries: object) -> None:
        self.events.append(("recent_projects_changed", (entries,)))

    @Slot(object)
    def _opened(self, project: object) -> None:
        self.events.append(("project_opened", (project,)))

    @Slot(str, object)
    def _conversations(self, project_id: str, items: object) -> None:
        self.events.append(("conversations_loaded", (project_id, items)))

    @Slot(str, object)
    def _created(self, project_id: str, item: object) -> None:
        self.events.append(("conversation_created", (project_id, item)))

    @Slot(str, str)
    def _error(self, request: str, message: str) -> None:
        self.events.append(("error", (request, message)))


@pytest.fixture
def worker_thread(qapp: Any, isolated_dirs: dict[str, Path]) -> Iterator[WorkerThread]:
    """A running Worker on the test's data folder; stopped (quit + wait) at the end of the test."""
    host = start_worker(isolated_dirs["data"])
    try:
        yield host
    finally:
        host.stop()


@pytest.fixture
def client(worker_thread: WorkerThread) -> Client:
    return Client(worker_thread.worker)


@pytest.fixture
def recorder(worker_thread: WorkerThread) -> Recorder:
    return Recorder(worker_thread.worker)

