"""A small thread pool for the worker's slow I/O (network checks, searches, file reads).

The worker thread handles one request at a time; a Test Connection waiting 15 s for a dead
server, or a search through thousands of messages, must not hold up "open this conversation".
Jobs run here; their results are handed back to the worker thread (``deliver``), so that every
Worker signal is still emitted from the worker thread.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Runs a callback on the worker thread (the Worker queues it with a signal).
Deliver = Callable[[Callable[[], None]], None]
#: Called on the worker thread with (job name, exception) when a job raised.
Report = Callable[[str, BaseException], None]


class Cancelled(Exception):
    """Raised inside a job that noticed it was superseded; its result is dropped quietly."""


class BackgroundJobs:
    """Runs blocking callables off the worker thread; every job is tracked and its failure reported."""

    def __init__(self, deliver: Deliver, report: Report, *, max_workers: int = 3):
        self._deliver = deliver
        self._report = report
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="crewagent-io")
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, name: str, job: Callable[[], _T], done: Callable[[_T], None]) -> None:
        """Run ``job()`` in the pool, then ``done(result)`` on the worker thread."""
        with self._lock:
            if self._closed:
                return
            future = self._pool.submit(job)
            self._pending.add(future)
        future.add_done_callback(functools.partial(self._finished, name, done))

    def _finished(self, name: str, done: Callable[[Any], None], future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)
            if self._closed:
                return
        self._deliver(functools.partial(self._complete, name, done, future))

    def _complete(self, name: str, done: Callable[[Any], None], future: concurrent.futures.Future[Any]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if isinstance(exc, Cancelled):
            return
        if exc is not None:
            self._report(name, exc)
            return
        done(future.result())

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._pending)

    def close(self) -> None:
        """Drop queued jobs, wait for the running ones (their results are discarded)."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
