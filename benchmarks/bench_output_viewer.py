"""The full-output viewer opening a large tool output: how long the GUI event loop stalls, and how long it takes.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_output_viewer.py           # 30 MB, about a minute
    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_output_viewer.py --quick   # 3 MB, a smoke run

A 1 ms timer runs on the GUI thread while the viewer loads; the longest gap between two of its
ticks is the longest time the window could not react (paint, scroll, a key). For comparison, the
last row puts the same text into a QPlainTextEdit in one call, as a naive viewer would. The
decoding row is the worker-side step (``readable``: JSON parsed and indented) run in another
thread, as the worker does, with the GUI loop turning beside it: it stalls the GUI only where a
single C call holds the GIL.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from crewagent.core.tools.results import readable
from crewagent.ui.output_viewer import OutputViewer
from crewagent.worker.turn_values import FullOutput

class _NoDialogs:
    def ask_new_project(self, parent: object) -> None:
        return None

    def ask_project_folder(self, parent: object) -> None:
        return None

    def ask_save_path(self, parent: object, title: str, suggested_name: str) -> None:
        return None


class StallMeter:
    """The longest gap between ticks of a 1 ms timer on the GUI thread, while it runs."""

    def __init__(self) -> None:
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._tick)
        self._last = 0
        self.worst_ms = 0.0

    def start(self) -> None:
        self._clock.start()
        self._last = 0
        self.worst_ms = 0.0
        self._timer.start()

    def _tick(self) -> None:
        now = self._clock.nsecsElapsed()
        self.worst_ms = max(self.worst_ms, (now - self._last) / 1e6)
        self._last = now

    def stop(self) -> None:
        self._tick()
        self._timer.stop()


def tool_output(megabytes: float) -> str:
    """An ``fs.read`` result as stored: a JSON object whose ``content`` is a big text file."""
    line = "line {n:08d}: the quick brown fox jumps over the lazy dog, twice.\n"
    count = int(megabytes * 1_000_000 / len(line.format(n=0)))
    return json.dumps({"ok": True, "path": "@project/big.log", "content": "".join(line.format(n=n) for n in range(count))})


def decode_beside_the_gui(app: QApplication, stored: str) -> tuple[str, float, float]:
    """``readable`` in another thread, as the worker runs it, while the GUI loop turns: a C call
    that holds the GIL for long would stall the GUI thread though it runs elsewhere."""
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(readable(stored)))
    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    worker.start()
    while worker.is_alive():
        app.processEvents()
        time.sleep(0.0005)
    took = time.perf_counter() - started
    meter.stop()
    return result[0], took, meter.worst_ms


def open_in_viewer(app: QApplication, text: str, wrap: bool) -> dict[str, float]:
    viewer = OutputViewer("fs.read", _NoDialogs())
    viewer.resize(1000, 700)
    viewer.wrap_box.setChecked(wrap)
    viewer.show()
    app.processEvents()
    meter = StallMeter()
    first: list[float] = []
    document = viewer.editor.document()
    document.contentsChanged.connect(lambda: first.append(time.perf_counter()) if not first and document.characterCount() > 1 else None)
    meter.start()
    started = time.perf_counter()
    viewer.show_output(FullOutput("conv", "msg", text))
    while viewer.loading:
        app.processEvents()
    finished = time.perf_counter()
    meter.stop()
    # The first search of the text (Enter in the find field): counted on the GUI thread.
    search_started = time.perf_counter()
    viewer.find_field.setText("line 00000042")
    viewer.find_next()
    search = time.perf_counter() - search_started
    assert viewer.editor.toPlainText() == text
    viewer.close()
    viewer.deleteLater()
    app.processEvents()
    return {"first": (first[0] - started) * 1000 if first else 0.0, "total": finished - started, "stall": meter.worst_ms, "search": search * 1000}


def set_at_once(app: QApplication, text: str) -> dict[str, float]:
    editor = QPlainTextEdit()
    editor.resize(1000, 700)
    editor.show()
    app.processEvents()
    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    QTimer.singleShot(0, lambda: editor.setPlainText(text))
    while editor.document().characterCount() < len(text):
        app.processEvents()
    app.processEvents()
    finished = time.perf_counter()
    meter.stop()
    editor.close()
    editor.deleteLater()
    app.processEvents()
    return {"first": (finished - started) * 1000, "total": finished - started, "stall": meter.worst_ms, "search": float("nan")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 MB instead of 30 MB")
    parser.add_argument("--megabytes", type=float, default=None)
    args = parser.parse_args(argv)
    size = args.megabytes or (3.0 if args.quick else 30.0)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)

    stored = tool_output(size)
    text, decode, decode_stall = decode_beside_the_gui(app, stored)
    lines = text.count("\n") + 1
    print(f"Output: {len(stored) / 1e6:.1f} MB stored, {len(text) / 1e6:.1f} MB shown, {lines:,} lines")
    print(f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.platform()}, "
          f"Qt platform {app.platformName()}, load average {os.getloadavg()[0]:.1f}")
    print()
    print("| step | first text shown (ms) | fully loaded (s) | longest GUI stall (ms) | first search (ms) |")
    print("|---|---:|---:|---:|---:|")
    print(f"| decode (`readable`, in a worker thread) | – | {decode:.2f} | {decode_stall:.0f} | – |")
    for wrap in (True, False):
        row = open_in_viewer(app, text, wrap)
        print(f"| viewer, wrap {'on' if wrap else 'off'} | {row['first']:.0f} | {row['total']:.2f} | {row['stall']:.0f} | {row['search']:.0f} |")
    row = set_at_once(app, text)
    print(f"| for comparison: `setPlainText` in one call | {row['first']:.0f} | {row['total']:.2f} | {row['stall']:.0f} | – |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
