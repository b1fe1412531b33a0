"""Helpers for turn tests: a worker whose provider is the scripted server, a client, a recorder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from crewagent.core.llm import ProviderConfig
from crewagent.core.settings import Settings
from crewagent.worker import Worker, WorkerThread
from crewagent.worker.turns import TurnWorker
from tests.fakes.scripted_server import ScriptedServer

TURN_SIGNALS = (
    "conversation_loaded",
    "turn_started",
    "stream_started",
    "stream_chunk",
    "reasoning_chunk",
    "stream_ended",
    "tool_started",
    "tool_finished",
    "message_persisted",
    "context_usage",
    "turn_finished",
    "conversation_changed",
    "approval_requested",
    "ask_user_requested",
    "prompt_withdrawn",
    "full_output_loaded",
    "provider_changed",
    "error",
)


def scripted_provider(server: ScriptedServer) -> Any:
    """A provider factory that ignores the settings and points at ``server``."""

    def factory(settings: Settings, demo_base_url: str | None) -> ProviderConfig:
        return server.config(max_retries=0)

    return factory


@contextmanager
def scripted_worker(data_dir: Path, server: ScriptedServer) -> Iterator[WorkerThread]:
    host = WorkerThread(Worker(data_dir, provider_factory=scripted_provider(server))).start()
    try:
        yield host
    finally:
        host.stop()


class TurnClient(QObject):
    """Sends turn requests the way the UI does: signals queued onto the worker thread."""

    open_project = Signal(str)
    open_conversation = Signal(str, str)
    send = Signal(str, str, str, str)
    continue_turn = Signal(str, str, str)
    retry = Signal(str, str, str)
    stop = Signal(str)
    stop_all = Signal()
    set_mode = Signal(str, str, str)
    load_full_output = Signal(str, str, str)
    answer_approval = Signal(str, str)
    answer_ask_user = Signal(str, object)

    def __init__(self, worker: Worker):
        super().__init__()
        queued = Qt.ConnectionType.QueuedConnection
        self.open_project.connect(worker.open_project, queued)
        turns = worker.turns
        for name in ("open_conversation", "send", "continue_turn", "retry", "stop", "stop_all", "set_mode",
                     "load_full_output", "answer_approval", "answer_ask_user"):
            getattr(self, name).connect(getattr(turns, name), queued)


class TurnRecorder(QObject):
    """Every TurnWorker signal, received on the GUI thread in order, as ``(signal, args)``."""

    def __init__(self, turns: TurnWorker):
        super().__init__()
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        for name in TURN_SIGNALS:
            self.listen(turns, name)

    def listen(self, turns: TurnWorker, name: str) -> None:
        getattr(turns, name).connect(_Tap(self, name).fire)

    def of(self, signal: str) -> list[tuple[Any, ...]]:
        return [args for name, args in self.events if name == signal]

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    def finished(self, count: int = 1) -> bool:
        return len(self.of("turn_finished")) >= count


class _Tap(QObject):
    """One signal into a TurnRecorder, delivered on the recorder's (GUI) thread.

    PySide calls a QObject's method on that object's thread (Qt queues it there), but a plain
    function or a ``functools.partial`` on the sender's: the worker's, whose queued events would
    then outlive the test with the worker thread stopped.
    """

    def __init__(self, recorder: TurnRecorder, name: str):
        super().__init__(recorder)
        self._recorder, self._name = recorder, name

    def fire(self, *args: Any) -> None:
        self._recorder.events.append((self._name, args))
