"""A Python thread running an asyncio loop: where the worker runs turns, off the GUI thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Called with (task name, exception) when a task ends with an exception nobody awaited.
ErrorReporter = Callable[[str, BaseException], None]


class AsyncLoopThread:
    """One asyncio loop in a daemon thread; tasks started here are kept and their failures reported.

    Qt's worker thread cannot run an asyncio loop and a Qt event loop at once, so turns run here
    and talk back with Qt signals (emitting from any thread is allowed; receivers on the GUI
    thread get them queued). Never call :meth:`run` from the loop's own thread.
    """

    def __init__(self, name: str, report: ErrorReporter | None = None):
        self._report = report
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._accepting = True
        self._accepting_lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()

    # -- starting work -----------------------------------------------------------------------

    def start(
        self, factory: Callable[[], Coroutine[Any, Any, Any]], name: str, report: Callable[[BaseException], None] | None = None
    ) -> bool:
        """Start ``factory()`` as a task on the loop (from any thread); its failure goes to ``report``
        (None: to the loop's reporter). Returns False, starting nothing, after :meth:`refuse_new`."""
        with self._accepting_lock:
            if not self._accepting:
                return False
            self.loop.call_soon_threadsafe(self._start_task, factory, name, report)
            return True

    def refuse_new(self) -> bool:
        """Start no more tasks (a shutdown begins); False when that was so already."""
        with self._accepting_lock:
            accepting, self._accepting = self._accepting, False
            return accepting

    def _start_task(
        self, factory: Callable[[], Coroutine[Any, Any, Any]], name: str, report: Callable[[BaseException], None] | None
    ) -> None:
        task = self.loop.create_task(factory(), name=name)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._task_done, report))

    def _task_done(self, report: Callable[[BaseException], None] | None, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("task %s failed", task.get_name(), exc_info=exc)
            if report is not None:
                report(exc)
            elif self._report is not None:
                self._report(task.get_name(), exc)

    def call(self, callback: Callable[[], Any]) -> None:
        """Run a plain callback on the loop's thread (e.g. ``session.request_stop``); dropped once
        the loop has stopped."""
        try:
            self.loop.call_soon_threadsafe(callback)
        except RuntimeError:  # the loop is closed: there is nothing left to act on
            log.info("callback dropped: the loop has stopped")

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float) -> _T:
        """Run ``coro`` on the loop and wait for it (from another thread); for shutdown and tests."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    # -- stopping ----------------------------------------------------------------------------

    def stop(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the tasks, cancel what is left, stop the loop and join.

        Returns False when tasks had to be cancelled. Idempotent.
        """
        if not self._thread.is_alive():
            return True
        clean = True
        try:
            clean = self.run(self._drain(timeout), timeout + 5.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            clean = False
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout + 5.0)
        return clean

    async def _drain(self, timeout: float) -> bool:
        current = asyncio.current_task()
        pending = [task for task in self._tasks if task is not current]
        if not pending:
            return True
        _done, still = await asyncio.wait(pending, timeout=timeout)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=2.0)
        return not still
