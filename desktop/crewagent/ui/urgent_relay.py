"""A signal from another thread delivered to a GUI-thread slot ahead of the events queued there.

A queued connection posts each emission as an event of normal priority: the slot runs after every
event the GUI thread had queued before it. When a turn's tool call ends, the timeline has queued
the end of the stream, the assistant message laid out, the tool call's card and the log lines
(up to 62 ms of GUI work in traces on a quiet machine, more under load); the Run workspace's
progress report of the same call waited behind all of it (bench_ui.py, section 4: the first state
write of a run was the slowest in 12 of 18 runs, up to 127 ms; docs/benchmarks.md, Run workspace,
session 13). :class:`UrgentRelay` posts the emission as an event of high priority instead, which
Qt delivers before the queued normal ones: the slot runs as soon as the GUI thread finishes the
event it is handling. The order between emissions of the one signal is kept (events of one
priority are delivered in the order posted).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, SignalInstance

_CALL = QEvent.Type(QEvent.registerEventType())


class _Call(QEvent):
    def __init__(self, args: tuple[object, ...]):
        super().__init__(_CALL)
        self.args = args


class UrgentRelay(QObject):
    """Calls ``slot(*args)`` on this object's thread for each emission of the followed signals, ahead
    of the events already queued on that thread (see the module docstring). Emissions after this
    object is deleted are dropped (Qt discards the events posted to a deleted object)."""

    def __init__(self, slot: Callable[..., object], parent: QObject | None = None):
        super().__init__(parent)
        self._slot = slot

    def follow(self, signal: SignalInstance) -> None:
        # Direct: _post runs on the emitting thread, and posting an event is thread-safe.
        signal.connect(self._post, Qt.ConnectionType.DirectConnection)

    def _post(self, *args: object) -> None:
        QCoreApplication.postEvent(self, _Call(args), Qt.EventPriority.HighEventPriority.value)

    def event(self, event: QEvent) -> bool:
        if event.type() == _CALL and isinstance(event, _Call):
            self._slot(*event.args)
            return True
        return super().event(event)
