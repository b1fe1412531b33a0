"""Benchmark: what the TurnWorker's hop through the Worker's QThread adds to a request.

A request travels as a queued signal to the TurnWorker's slot on the Worker's QThread, which hands
it to the turns' asyncio loop. This measures that path against handing the same callback to the
loop straight from the calling thread. Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python
benchmarks/bench_turn_hop.py [--rounds N]``; the result is quoted in worker/turns.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

from crewagent.worker import Worker, WorkerThread


class _Sender(QObject):
    stop = Signal(str)


def _summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"median {statistics.median(ordered) * 1000:.3f} ms, p95 {ordered[int(len(ordered) * 0.95)] * 1000:.3f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    host = WorkerThread(Worker(tempfile.mkdtemp())).start()
    turns = host.worker.turns
    arrived = threading.Event()
    stamp = [0.0]

    def mark(_conversation_id: str) -> None:
        stamp[0] = time.perf_counter()
        arrived.set()

    turns._host.stop = mark  # type: ignore[method-assign]  # the loop-side callback the stop slot schedules
    sender = _Sender()
    sender.stop.connect(turns.stop, Qt.ConnectionType.QueuedConnection)
    via_qthread: list[float] = []
    direct: list[float] = []
    try:
        for _ in range(args.rounds):
            arrived.clear()
            start = time.perf_counter()
            sender.stop.emit("c")
            arrived.wait(2)
            via_qthread.append(stamp[0] - start)
            arrived.clear()
            start = time.perf_counter()
            turns._async.call(lambda: mark("c"))
            arrived.wait(2)
            direct.append(stamp[0] - start)
    finally:
        host.stop()
    print(f"| signal -> Worker QThread -> loop | {_summary(via_qthread)} |")
    print(f"| caller -> loop directly          | {_summary(direct)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
