"""Start the Worker in its own QThread and stop it cleanly."""

from __future__ import annotations

import os

from PySide6.QtCore import QThread

from crewagent.worker.bridge import Worker

STOP_TIMEOUT_MS = 10_000


class WorkerThread:
    """A running Worker and the QThread it lives in.

    ``stop()`` ends the thread's event loop and waits for it, so that no "QThread destroyed while
    running" can happen at exit; requests still queued when it is called are dropped.
    """

    def __init__(self, worker: Worker):
        if worker.parent() is not None:
            raise ValueError("A worker with a parent cannot be moved to its own thread.")
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("crewagent-worker-thread")
        worker.moveToThread(self.thread)

    def start(self) -> WorkerThread:
        self.thread.start()
        return self

    def stop(self) -> None:
        # Running turns are stopped first, so that they persist what they stopped (bounded).
        self.worker.turns.shutdown()
        self.worker.mcp.cancel_tests()  # a Test Connection stops its MCP server now (issue 12)
        self.worker.close_background()
        if not self.thread.isRunning():
            return
        self.thread.quit()
        if not self.thread.wait(STOP_TIMEOUT_MS):
            raise RuntimeError(f"The worker thread did not stop within {STOP_TIMEOUT_MS} ms.")

    def __enter__(self) -> WorkerThread:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_worker(data_dir: str | os.PathLike[str] | None = None) -> WorkerThread:
    """A Worker for ``data_dir`` (None: ``$CREWAGENT_DATA_DIR`` or the OS default), already running."""
    return WorkerThread(Worker(data_dir)).start()
