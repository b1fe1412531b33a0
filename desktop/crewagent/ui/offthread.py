"""Blocking work of a widget (reading and decoding an image) on a pool thread, its result back on the GUI thread.

The GUI thread does no disk work: a job runs in this object's own thread pool and its result is
delivered to ``done`` by a queued signal, on the thread this object lives in. A job reports
expected failures in its result; an exception it raises is a bug and is raised again on the GUI
thread, where it is loud (pytest-qt fails the test), never swallowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QThreadPool, Signal, Slot

_T = TypeVar("_T")


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


class OffThread(QObject):
    """Runs jobs off the GUI thread; ``pending`` counts the jobs not delivered yet."""

    #: ``(done, result)``, emitted from a pool thread; delivered queued on this object's thread.
    _finished = Signal(object, object)

    def __init__(self, parent: QObject | None = None, *, threads: int = 2):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self.pending = 0
        self._finished.connect(self._deliver)

    def run(self, job: Callable[[], _T], done: Callable[[_T], None]) -> None:
        """``job()`` on a pool thread, then ``done(result)`` here."""
        self.pending += 1

        def task() -> None:
            result: Any
            try:
                result = job()
            except BaseException as exc:  # delivered and raised again on the GUI thread (a bug)
                result = _Failed(exc)
            try:
                self._finished.emit(done, result)
            except RuntimeError:
                pass  # the owner was deleted meanwhile: nobody wants the result

        self._pool.start(task)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until every started job has run (for shutdown); their results are still delivered later."""
        return self._pool.waitForDone(msecs)

    @Slot(object, object)
    def _deliver(self, done: Callable[[Any], None], result: Any) -> None:
        self.pending -= 1
        if isinstance(result, _Failed):
            raise result.error
        done(result)
