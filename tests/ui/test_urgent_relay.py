"""UrgentRelay: a signal emitted on another thread reaches its GUI-thread slot before the events queued earlier."""

from __future__ import annotations

import threading
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal, Slot

from crewagent.ui.urgent_relay import UrgentRelay


class _Source(QObject):
    normal = Signal(int)
    urgent = Signal(str, object)


class _Sink(QObject):
    """Lives on the GUI thread; records every call with the thread it ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, object, bool]] = []

    @Slot(int)
    def on_normal(self, value: int) -> None:
        self.calls.append(("normal", value, threading.current_thread() is threading.main_thread()))

    def on_urgent(self, name: str, value: object) -> None:
        self.calls.append((name, value, threading.current_thread() is threading.main_thread()))


def test_an_urgent_emission_jumps_the_events_queued_before_it_and_keeps_its_own_order(qtbot: Any) -> None:
    source, sink = _Source(), _Sink()
    source.normal.connect(sink.on_normal, Qt.ConnectionType.QueuedConnection)
    relay = UrgentRelay(sink.on_urgent, sink)
    relay.follow(source.urgent)

    def emit_all() -> None:  # another thread, as the turns' loop emits run_progress
        for n in range(3):
            source.normal.emit(n)
        source.urgent.emit("first", {"n": 1})
        source.normal.emit(3)
        source.urgent.emit("second", {"n": 2})

    thread = threading.Thread(target=emit_all)
    thread.start()
    thread.join()
    assert sink.calls == []  # nothing ran on the emitting thread
    qtbot.waitUntil(lambda: len(sink.calls) == 6)
    # Both urgent calls, in the order emitted, ahead of the four queued before or between them;
    # every call on the GUI thread.
    assert sink.calls == [("first", {"n": 1}, True), ("second", {"n": 2}, True),
                          ("normal", 0, True), ("normal", 1, True), ("normal", 2, True), ("normal", 3, True)]


def test_nothing_is_delivered_once_the_relay_is_gone(qtbot: Any) -> None:
    source, sink = _Source(), _Sink()
    holder = QObject()
    UrgentRelay(sink.on_urgent, holder).follow(source.urgent)

    def emit() -> None:
        thread = threading.Thread(target=lambda: source.urgent.emit("late", None))
        thread.start()
        thread.join()

    emit()  # posted, not handled yet
    shiboken6.delete(holder)  # the relay goes with its parent (a closed panel): its posted call is dropped
    emit()  # and a later emission is not posted to it
    qtbot.wait(50)
    assert sink.calls == []
