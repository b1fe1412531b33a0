"""Waiting for a worker signal on the GUI thread.

``qtbot.waitSignal(worker.some_signal)`` is wrong for a signal emitted off the GUI thread: its
blocker is a plain Python object, so PySide calls it on the emitting object's thread, where it
stops the blocker's QTimer ("QObject::killTimer: Timers cannot be stopped from another thread")
and may quit the GUI's event loop before it runs (the wait then lasts the whole timeout). Here a
QObject living on the GUI thread takes the signal (Qt queues it there) and re-emits it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance


class OnGuiThread(QObject):
    """``signal`` re-emitted as :attr:`fired` on this object's (the GUI) thread; ``args`` holds the last arguments."""

    fired = Signal()

    def __init__(self, signal: SignalInstance):
        super().__init__()
        self.args: list[Any] = []
        self._signal = signal
        signal.connect(self._receive)  # a QObject's method: delivered on this object's thread

    def _receive(self, *args: Any) -> None:
        self.args = list(args)
        self.fired.emit()

    def detach(self) -> None:
        self._signal.disconnect(self._receive)


@contextmanager
def wait_signal(qtbot: Any, signal: SignalInstance, timeout: int = 5_000) -> Iterator[OnGuiThread]:
    """``qtbot.waitSignal`` for a worker signal: the block's end waits for it; ``.args`` are its arguments."""
    relay = OnGuiThread(signal)
    try:
        with qtbot.waitSignal(relay.fired, timeout=timeout):
            yield relay
    finally:
        relay.detach()


@contextmanager
def assert_not_emitted(qtbot: Any, signal: SignalInstance) -> Iterator[None]:
    """``qtbot.assertNotEmitted`` for a worker signal (wrap a ``wait_signal`` that proves the worker answered)."""
    relay = OnGuiThread(signal)
    try:
        with qtbot.assertNotEmitted(relay.fired):
            yield
    finally:
        relay.detach()
