#!/usr/bin/env python3
"""Desktop UI benchmark (issue 5, "Performance"); results are recorded in docs/benchmarks.md.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_ui.py           # full run, a few minutes
    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_ui.py --quick   # small sizes: a smoke run
    ... bench_ui.py --smoke                                                     # tiniest sizes, one process: the smoke test
    ... bench_ui.py --json                                                      # machine-readable results

Every measurement runs the real app: the MainWindow, the Worker in its QThread, the TurnWorker's
asyncio thread, the store on a scratch data folder (removed afterwards). Each section runs in a
fresh child process, so that its memory figures are its own.

1. **Open a 10,000-message conversation** (200 tool parts, written with the store's
   ``append_messages``). From the user's click in the Works list (``select_conversation``) to the
   end of the first paint of the timeline's viewport that shows the last page, split into: the
   hop to the worker, the first page read on the worker (the newest messages from the end of
   the log: disk + pydantic + timeline values), the transfer back to the GUI thread, the model
   fill (``ConversationView.on_loaded``), and the layout and paint. Paint time is real: an event
   filter on the viewport times the paint event itself. Then, after that paint: the whole
   conversation recovered and loaded on the worker, and joined above the first page. Then the process memory (``VmRSS``, ``VmHWM`` from ``/proc/self/status``), and
   scrolling: every page step from the bottom to the top of the whole history, then wheel steps,
   each timed from the scroll action to the end of the repaint it caused.
2. **GUI event-loop latency** while a turn streams 200 tokens/s into that conversation and a tool
   writes 20 MB, in two variants: (a) the tool is ``bench.write_file`` (registered for the
   benchmark), which writes 20 MB in 1 MiB writes and fsyncs: disk work on the worker; (b) the
   model calls ``fs.write`` with 20 MB of content (approved by "always allow"), which also sends
   the 20 MB through the stream parser, the log and the context builder. Meanwhile a second
   conversation's turn (started on the worker, as from another window) calls the same tool. A
   ``QTimer`` probe on the GUI thread ticks every 5 ms and records how late each tick is. The
   turn is sent once the conversation is loaded whole and the worker is idle (a user reads, then
   types). The model server runs in another process, so its Python work does not compete with
   the app's. ``--diagnose`` adds, for the worst stalls, the GUI thread's sampled stack, the C
   calls longer than 15 ms on other threads and the garbage collections (slows the run down).
3. **Cold start**: a fresh ``python -m crewagent gui --project P`` on a data folder whose
   project has 1,000 conversations, until the first paint of the main window and until the first
   paint of the Works list showing them (``CREWAGENT_STARTUP_PROBE``, see
   ``crewagent/ui/startup_probe.py``). Median over several runs.

4. **Run workspace** (issue 11): a 200-node workflow laid out off the GUI thread, a state write's way
   to the Progress tab, and the GUI event loop while a run streams and writes its state every second
   (see ``benchmarks/_bench_run_ui.py``). ``--only run`` runs this section alone.

Nothing here is a timed test (the machine is shared); tests/ui/test_bench_ui_smoke.py only checks
that ``--smoke`` runs and prints its tables (sections 1, 2 and 4 through ``main()`` in the test
process, section 3 as a program: ``bench_ui.py --smoke --only cold``).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "desktop"))
import _bench_run_ui  # noqa: E402  (section 4, beside this file)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

MS = 1000.0
GOAL_OPEN_MS = 300.0
GOAL_RSS_MB = 400.0
GOAL_BLOCK_MS = 50.0
#: Issue 14, scenario (b): the model streams fs.write with 20 MB of content.
GOAL_BIG_ARGS_P99_MS = 50.0
GOAL_BIG_ARGS_MAX_MS = 100.0
GOAL_COLD_S = 1.5
PROBE_INTERVAL_MS = 5
WINDOW_SIZE = (1120, 720)  # the main window's default size


@dataclass(frozen=True)
class Config:
    messages: int = 10_000
    tool_parts: int = 200
    tool_result_chars: int = 6_000
    opens: int = 5
    wheel_steps: int = 400
    tokens_per_s: int = 200
    stream_before_tool_s: float = 6.0
    stream_after_tool_s: float = 3.0
    write_bytes: int = 20 * 1024 * 1024
    conversations: int = 1_000
    cold_runs: int = 5
    #: Page steps up before the rest of the way to the top goes by jumps to the top (``--smoke``):
    #: each jump shows the next older rows as a page step that reaches the top does.
    page_steps: int = 50_000
    quick: bool = False


#: ``--quick``: every section once, at sizes that only prove it runs and prints its tables; two
#: opens, so "first open" and "median" both have a value (the smoke test uses ``--smoke``, below).
QUICK = Config(
    messages=300,
    tool_parts=6,
    opens=2,
    wheel_steps=10,
    stream_before_tool_s=0.3,
    stream_after_tool_s=0.3,
    write_bytes=256 * 1024,
    conversations=20,
    cold_runs=1,
    quick=True,
)

#: ``--smoke`` (tests/ui/test_bench_ui_smoke.py): the smallest sizes that still take every code
#: path and print every row, and every section's child run inside this process (one interpreter
#: and one app import instead of five), with the model servers of sections 2 and 4 in threads of
#: it and section 4's outside state writes made by it (five interpreters fewer); section 3's
#: ``crewagent gui`` is a fork of this process, made before any QApplication. Its figures mean
#: nothing: it only proves that the benchmark runs.
SMOKE = Config(
    messages=160,  # above a first page (150 messages) and the rows a window shows (120): both paths run
    tool_parts=2,
    opens=2,
    wheel_steps=2,
    stream_before_tool_s=0.1,
    stream_after_tool_s=0.1,
    write_bytes=64 * 1024,
    conversations=3,
    cold_runs=1,
    page_steps=2,  # then jumps to the top: the 160 messages were 52 page steps of repaint
    quick=True,
)
#: Set by ``--smoke``: ``run_child`` calls the child in this process instead of starting one.
_CHILDREN_HERE = False


# -- helpers --------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def proc_status_mb() -> dict[str, float]:
    """VmRSS and VmHWM of this process in MiB (Linux); empty elsewhere."""
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, rule, *body])


def fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def machine() -> list[tuple[str, str]]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        ram = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    import PySide6
    from PySide6 import QtCore

    try:
        load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        load = "unknown"
    return [
        ("CPUs (nproc)", str(os.cpu_count())),
        ("CPU model", cpu),
        ("RAM", ram),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("Qt / PySide6", f"Qt {QtCore.qVersion()}, PySide6 {PySide6.__version__}"),
        ("Qt platform", os.environ.get("QT_QPA_PLATFORM", "(default)")),
        ("OS", platform.platform()),
        ("load average at start", load),
    ]


# -- data (core only: no Qt in the parent process) ------------------------------------------------

_WORDS = ("the", "worker", "timeline", "model", "delegate", "store", "tool", "result", "layout", "paint",
          "message", "conversation", "résumé", "→", "✓", "context", "budget", "stream", "token", "agent")


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _answer(rng: random.Random, n: int) -> str:
    parts = [f"Answer {n}: {_sentence(rng, 14)}", "", f"- first **step** with `code_{n}`", f"- {_sentence(rng, 8)}", ""]
    parts.append(" ".join(_sentence(rng, rng.randint(10, 18)) for _ in range(rng.randint(2, 5))))
    if n % 10 == 0:
        parts += ["", "```python", f"def step_{n}(x):", "    return x * 2  # doubled", "```"]
    return "\n".join(parts)


def build_history(cfg: Config, seed: int = 5) -> list[Any]:
    """``cfg.messages`` messages: user questions and Markdown answers, with ``cfg.tool_parts``
    assistant tool calls (``fs.read``) each followed by its result (~``tool_result_chars``)."""
    from crewagent.core.messages import ConversationMessage, FunctionCall, ToolCall

    rng = random.Random(seed)
    every = max(3, cfg.messages // max(1, cfg.tool_parts))
    out: list[ConversationMessage] = []
    parts = 0
    n = 0
    while len(out) < cfg.messages:
        n += 1
        if parts < cfg.tool_parts and len(out) % every == every - 2 and len(out) + 2 <= cfg.messages:
            call_id = f"call_{n}"
            path = f"@project/notes/file{n}.md"
            out.append(ConversationMessage.new("assistant", None, tool_calls=[
                ToolCall(id=call_id, function=FunctionCall(name="fs.read", arguments=json.dumps({"path": path})))]))
            body = "\n".join(f"{i:4d}  {_sentence(rng, 9)}" for i in range(cfg.tool_result_chars // 60))
            result = json.dumps({"ok": True, "path": path, "content": body, "totalLines": body.count("\n") + 1})
            out.append(ConversationMessage.new("tool", result, tool_call_id=call_id, toolName="fs.read",
                                               partType="tool_result", duration=12.5))
            parts += 1
        elif out and out[-1].role == "user":
            out.append(ConversationMessage.new("assistant", _answer(rng, n)))
        else:
            out.append(ConversationMessage.new("user", f"Question {n}: {_sentence(rng, rng.randint(6, 40))}"))
    return out


@dataclass
class Dataset:
    data_dir: str
    config_dir: str
    project_root: str
    project_id: str
    big_id: str
    small_id: str
    background_id: str
    rows: int
    log_mb: float


def prepare_open_data(cfg: Config, scratch: Path) -> Dataset:
    from crewagent.core.store import RuntimeStore

    data, config, root = scratch / "data", scratch / "config", scratch / "project"
    root.mkdir(parents=True)
    config.mkdir()
    store = RuntimeStore(data)
    info = store.create_project(root, "UI bench")
    small = store.create_conversation(info.id, title="A short one")
    store.append_messages(info.id, small.id, build_history(Config(messages=20, tool_parts=1), seed=1))
    background = store.create_conversation(info.id, title="Background writer")
    big = store.create_conversation(info.id, title="Ten thousand messages")
    history = build_history(cfg)
    for start in range(0, len(history), 1000):
        store.append_messages(info.id, big.id, history[start:start + 1000])
    store.flush()
    calls = {m.tool_call_id for m in history if m.role == "tool"}
    rows = len(history) - len(calls)  # a result shares its call's row
    log = store.log_path(info.id, big.id)
    return Dataset(str(data), str(config), str(root), info.id, big.id, small.id, background.id, rows,
                   log.stat().st_size / 1024 / 1024)


def prepare_cold_data(cfg: Config, scratch: Path) -> tuple[str, str, str]:
    from crewagent.core.store import RuntimeStore

    data, config, root = scratch / "data", scratch / "config", scratch / "project"
    root.mkdir(parents=True)
    config.mkdir()
    store = RuntimeStore(data)
    info = store.create_project(root, "Cold start")
    rng = random.Random(7)
    from crewagent.core.messages import ConversationMessage

    for n in range(cfg.conversations):
        meta = store.create_conversation(info.id, entry_type=rng.choice(("chat", "agent", "run")))
        store.append_messages(info.id, meta.id, [
            ConversationMessage.new("user", f"Conversation {n}: {_sentence(rng, 8)}"),
            ConversationMessage.new("assistant", _answer(rng, n)),
        ])
    store.flush()
    return str(data), str(config), str(root)


# -- child processes ------------------------------------------------------------------------------


def run_child(kind: str, payload: dict[str, Any], env: dict[str, str], timeout: float) -> dict[str, Any]:
    if _CHILDREN_HERE:
        return run_here(lambda data: child_result(kind, data), payload, env)
    proc = subprocess.run(
        [sys.executable, __file__, "--_child", kind, json.dumps(payload)],
        capture_output=True, text=True, timeout=timeout, env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the {kind} child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_here(child: Callable[[dict[str, Any]], dict[str, Any]], payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """``--smoke``: a child's work in this process, under the child's environment; its result as
    the parent would read it from a child's stdout (through JSON). Also used by bench_scaling.py."""
    saved = dict(os.environ)
    # keyring picks its backend once per process, from the environment of the moment: the child's
    # PYTHON_KEYRING_BACKEND (the null keyring) must not stay this process's backend afterwards.
    keyring_core = sys.modules.get("keyring.core")
    saved_backend = getattr(keyring_core, "_keyring_backend", None)
    os.environ.update(env)
    try:
        result: dict[str, Any] = json.loads(json.dumps(child(payload)))
        return result
    finally:
        os.environ.clear()
        os.environ.update(saved)
        keyring_core = sys.modules.get("keyring.core")
        if keyring_core is not None:
            keyring_core._keyring_backend = saved_backend  # type: ignore[attr-defined]  # None: chosen again on next use


def child_result(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What a child of ``kind`` measures (in a child process, or in this one with ``--smoke``)."""
    if kind == "run":
        result: dict[str, Any] = _bench_run_ui.child(payload, _Gui, PROBE_INTERVAL_MS)
        return result
    return {"open": child_open, "latency": child_latency}[kind](payload)


def child_env(config_dir: str, data_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "QT_QPA_PLATFORM": env.get("QT_QPA_PLATFORM", "offscreen"),
        "CREWAGENT_CONFIG_DIR": config_dir,
        "CREWAGENT_DATA_DIR": data_dir,
        "XDG_CONFIG_HOME": str(Path(config_dir) / "xdg-config"),
        "XDG_DATA_HOME": str(Path(config_dir) / "xdg-data"),
        "XDG_CACHE_HOME": str(Path(config_dir) / "xdg-cache"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "desktop"), env.get("PYTHONPATH", "")])),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    })
    return env


class _Gui:
    """A QApplication with the app's style, a running worker and a shown MainWindow (child side)."""

    def __init__(self, data_dir: str, provider_factory: Any = None):
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        from crewagent.ui.app import setup_application

        from crewagent.core import tuning

        app = QApplication.instance()
        if app is None:  # --smoke runs every section's child in one process: the first one made the app
            app = QApplication([sys.argv[0]])
            tuning.tune_gui_process()  # as run_gui does
            setup_application(app)
        self.app = app
        from crewagent.ui.mainwindow import MainWindow
        from crewagent.worker import Worker, WorkerThread

        self.host = WorkerThread(Worker(data_dir, provider_factory=provider_factory)).start()
        self.window = MainWindow(self.host.worker)
        self.window.resize(*WINDOW_SIZE)
        self.window.show()
        # A heartbeat so that waiting with WaitForMoreEvents can check its deadline.
        self._heartbeat = QTimer()
        self._heartbeat.start(20)
        self.spin_until(lambda: self.window.isVisible() and self.window.windowHandle() is not None
                        and self.window.windowHandle().isExposed(), 10)

    def spin_until(self, done: Callable[[], bool], timeout: float) -> None:
        from PySide6.QtCore import QEventLoop

        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("gave up waiting")
            self.app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)

    def drain(self) -> None:
        for _ in range(3):
            self.app.processEvents()

    def open_project(self, root: str) -> None:
        self.window.open_project_folder(root)
        self.spin_until(lambda: self.window.project_view.loaded, 30)

    def close(self) -> None:
        from PySide6.QtCore import QCoreApplication, QEvent

        self._heartbeat.stop()
        self.window.close()
        self.host.stop()
        # Gone, not only hidden: with --smoke the next section's window shares this process.
        self.window.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


class _PaintProbe:
    """Times every paint event of a widget (the event is handled inside the filter)."""

    def __init__(self, widget: Any, state: Callable[[], tuple[Any, ...]]):
        from PySide6.QtCore import QEvent, QObject
        from PySide6.QtWidgets import QApplication

        probe = self
        self.paints: list[tuple[float, float, tuple[Any, ...]]] = []
        self._inside = False

        class Filter(QObject):
            def eventFilter(self, obj: Any, event: Any) -> bool:
                if event.type() != QEvent.Type.Paint or probe._inside:
                    return False
                probe._inside = True
                start = time.perf_counter()
                try:
                    QApplication.sendEvent(obj, event)
                finally:
                    probe._inside = False
                probe.paints.append((start, time.perf_counter(), state()))
                return True

        self._filter = Filter()
        widget.installEventFilter(self._filter)


def _spans() -> tuple[dict[str, list[tuple[float, float]]], Callable[[str, Callable[..., Any]], Callable[..., Any]]]:
    spans: dict[str, list[tuple[float, float]]] = {}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spans.setdefault(name, []).append((start, time.perf_counter()))

        wrapper.__name__ = getattr(fn, "__name__", name)
        wrapper.__qualname__ = getattr(fn, "__qualname__", name)
        return wrapper

    return spans, timed


def child_open(payload: dict[str, Any]) -> dict[str, Any]:
    """Section 1, in its own process: open the big conversation several times, then scroll it."""
    data = Dataset(**payload["dataset"])
    cfg = Config(**payload["config"])
    spans, timed = _spans()
    from crewagent.core.turn_host import TurnHost
    from crewagent.ui.conversation_view import ConversationView

    pages: list[int] = []
    first_page = getattr(TurnHost, "_first_page", None)  # None: a build that loads conversations whole

    def counted_first_page(*args: Any) -> Any:
        assert first_page is not None
        result = first_page(*args)
        pages.append(len(result))
        return result

    if first_page is not None:
        TurnHost._first_page = timed("first_page", counted_first_page)  # type: ignore[method-assign]
    TurnHost._recovered = timed("worker_load", TurnHost._recovered)  # type: ignore[method-assign]
    ConversationView.on_loaded = timed("on_loaded", ConversationView.on_loaded)  # type: ignore[method-assign]

    gui = _Gui(data.data_dir)
    gui.open_project(data.project_root)
    conversation = gui.window.project_view.conversation
    view = conversation.timeline
    bar = view.verticalScrollBar()
    probe = _PaintProbe(view.viewport(), lambda: (conversation.conversation_id, bar.value(), bar.maximum()))
    memory_before = proc_status_mb()

    def open_and_wait(cid: str) -> float:
        """Select ``cid`` in the Works list; return once its last page is painted and it is loaded whole."""
        spans.clear()
        pages.clear()
        probe.paints.clear()
        start = time.perf_counter()
        gui.window.project_view.select_conversation(cid)
        if first_page is None:
            pages.append(0)

        def shown() -> bool:
            if not spans.get("on_loaded") or conversation.conversation_id != cid:
                return False
            loaded_end = spans["on_loaded"][0][1]
            return any(p[0] >= loaded_end and p[2][0] == cid and p[2][1] == p[2][2] for p in probe.paints)

        def whole() -> bool:  # a first page is followed by the complete conversation
            return bool(pages) and len(spans.get("on_loaded", [])) == (2 if pages[0] else 1)

        gui.spin_until(shown, 60)
        gui.spin_until(whole, 60)
        return start

    rounds: list[dict[str, float]] = []
    for _ in range(cfg.opens):
        open_and_wait(data.small_id)
        gui.drain()
        start = open_and_wait(data.big_id)
        paged = bool(pages[0])
        first_start, first_end = spans["first_page" if paged else "worker_load"][0]
        load_start, load_end = spans["worker_load"][0]
        fill_start, fill_end = spans["on_loaded"][0]
        paint = next(p for p in probe.paints if p[0] >= fill_end and p[2][1] == p[2][2])
        history = spans["on_loaded"][1] if paged else spans["on_loaded"][0]
        rounds.append({
            "request_to_worker": (first_start - start) * MS,
            "worker_first_page": (first_end - first_start) * MS,
            "transfer": (fill_start - first_end) * MS,
            "model_fill": (fill_end - fill_start) * MS,
            "layout": (paint[0] - fill_end) * MS,
            "paint": (paint[1] - paint[0]) * MS,
            "total": (paint[1] - start) * MS,
            "worker_whole_load": (load_end - load_start) * MS,
            "gui_history_join": (history[1] - history[0]) * MS if paged else 0.0,
            "whole_loaded": (history[1] - start) * MS,
        })
        gui.drain()
    memory_after = proc_status_mb()

    # Scrolling: page steps from the bottom to the top, then wheel steps down.
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QAbstractSlider, QApplication

    def step(action: Callable[[], None]) -> tuple[float, float] | None:
        """Time one scroll action to the end of its repaint; None when it did not scroll."""
        before = len(probe.paints)
        value = bar.value()
        start = time.perf_counter()
        action()
        if bar.value() == value:
            gui.drain()  # at the top: older rows may be shown now (and scrolled to)
            return None
        gui.spin_until(lambda: len(probe.paints) > before, 10)
        first = probe.paints[before][1]
        gui.drain()
        return (first - start) * MS, (time.perf_counter() - start) * MS

    page: list[tuple[float, float]] = []
    idle = 0
    while idle < 3:
        paging = len(page) < cfg.page_steps
        action = QAbstractSlider.SliderAction.SliderPageStepSub if paging else QAbstractSlider.SliderAction.SliderToMinimum
        timed_step = step(lambda: bar.triggerAction(action))
        if timed_step is None:
            idle += 1
        else:
            idle = 0
            if paging:
                page.append(timed_step)
    model = conversation.model
    from crewagent.ui.timeline import TimelineRole

    top_key = model.index(0, 0).data(TimelineRole.KEY)
    reached_top = bar.value() == 0 and top_key == model.keys()[0]
    wheel: list[tuple[float, float]] = []
    centre = QPointF(view.viewport().rect().center())
    global_centre = QPointF(view.viewport().mapToGlobal(QPoint(int(centre.x()), int(centre.y()))))

    def wheel_down() -> None:
        event = QWheelEvent(centre, global_centre, QPoint(0, 0), QPoint(0, -120), Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(view.viewport(), event)

    for _ in range(cfg.wheel_steps):
        timed_step = step(wheel_down)
        if timed_step is not None:
            wheel.append(timed_step)
    memory_scrolled = proc_status_mb()
    gui.close()
    return {
        "rounds": rounds,
        "memory_before_open": memory_before,
        "memory_after_open": memory_after,
        "memory_after_scroll": memory_scrolled,
        "page_steps": page,
        "wheel_steps": wheel,
        "reached_top": reached_top,
    }


# -- the model server for section 2 (its own process) ----------------------------------------------


def latency_server(payload: dict[str, Any]) -> Any:
    """An OpenAI-compatible server, started: paced text, and fs.write calls with big content."""
    from crewagent.core.llm.local_server import LocalServer, Pause, Raw, RecordedRequest, Reply, SseReply

    rate = float(payload["tokens_per_s"])
    before_s, after_s = float(payload["before_s"]), float(payload["after_s"])
    size = int(payload["write_bytes"])
    line = "A line of the generated file, with some words to make it look like text: 0123456789.\n"
    content = (line * (size // len(line) + 1))[:size]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def encoded(item: dict[str, Any]) -> Raw:
        return Raw(b"data: " + json.dumps(item).encode() + b"\n\n")

    def write_call(call_id: str, path: str) -> list[Any]:
        """fs.write of ``size`` bytes (``fs_write`` variant), or bench.write_file, which writes them itself."""
        if payload["variant"] == "tool":
            name, arguments = "bench_write_file", json.dumps({"path": str(Path(payload["scratch"]) / Path(path).name), "bytes": size})
        else:
            name, arguments = "fs_write", json.dumps({"path": path, "content": content})
        items: list[Any] = [encoded(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                                             "function": {"name": name, "arguments": ""}}]}))]
        piece = 256 * 1024
        for start in range(0, len(arguments), piece):
            items.append(encoded(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[start:start + piece]}}]})))
        items.append(encoded(chunk({}, "tool_calls")))
        return items

    def paced(seconds: float, n: int) -> Iterator[Any]:
        yield chunk({"role": "assistant", "content": ""})
        words = ["Streaming", " **word**", " by", " word", ",", " with", " `code`", " and", " →", " text.\n\n"]
        count = int(seconds * rate)
        start = time.monotonic()
        for i in range(count):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                yield Pause(delay)
            token = words[i % len(words)]
            if i % 150 == 149:
                token = f"\n\n```python\nprint({n}, {i})\n```\n\n"
            yield chunk({"content": token})

    class Responder:
        def chat_completion(self, request: RecordedRequest) -> Reply:
            messages = request.body["messages"]
            last_user = next(str(m.get("content")) for m in reversed(messages) if m["role"] == "user")
            after_tool = messages[-1]["role"] == "tool"
            if "[background]" in last_user:
                if after_tool:
                    return SseReply([chunk({"role": "assistant", "content": "Written."}), chunk({}, "stop")])
                return SseReply([Pause(before_s / 4), *write_call("call_bg", "@project/artifacts/background.txt")])
            # Generators: the pauses are computed while the reply is being sent.
            if after_tool:
                return SseReply(itertools.chain(paced(after_s, 2), [chunk({}, "stop")]))
            return SseReply(itertools.chain(paced(before_s, 1), write_call("call_fg", "@project/artifacts/visible.txt")))

        def list_models(self, request: RecordedRequest) -> Reply:
            from crewagent.core.llm.local_server import JsonReply

            return JsonReply(200, {"object": "list", "data": [{"id": "bench", "object": "model"}]})

    return LocalServer(Responder()).start()


#: The model servers of sections 2 and 4, by their ``--_child`` kind: each returns a started server.
SERVERS: dict[str, Callable[[dict[str, Any]], Any]] = {"serve": latency_server, "serve_run": _bench_run_ui.server}


def child_serve(kind: str, payload: dict[str, Any]) -> None:
    """A model server in its own process: its URL on stdout, then serve until the parent closes our stdin."""
    server = SERVERS[kind](payload)
    print(f"URL {server.base_url}", flush=True)
    sys.stdin.read()
    server.stop()


@contextlib.contextmanager
def model_server(kind: str, payload: dict[str, Any], env: dict[str, str]) -> Iterator[str]:
    """A section's model server, for the ``with`` block: its base URL. In a process of its own, so
    that its Python work does not compete with the app's; with ``--smoke``, whose figures mean
    nothing, in a thread of this process (a fresh interpreter and its imports saved)."""
    if _CHILDREN_HERE:
        server = SERVERS[kind](payload)
        try:
            yield server.base_url
        finally:
            server.stop()
        return
    proc = subprocess.Popen([sys.executable, __file__, "--_child", kind, json.dumps(payload)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split()[1]
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(30)
        proc.stdout.close()


def _long_c_calls(threshold_s: float = 0.015, cpu_threshold_s: float = 0.004) -> list[tuple[float, float, str, str, float]]:
    """Record C calls that ran longer than ``threshold_s``, or used more than ``cpu_threshold_s``
    of their thread's CPU, in threads started from now on: (start, seconds, thread, call < caller,
    CPU seconds, or -1 when the call ran Python code inside, as ``exec`` or ``sum`` over a
    generator do: between two bytecodes the GIL can change hands). The CPU time of a call that
    runs no Python is time it held the GIL (unless it released it to compute, as hashlib does):
    unlike its wall time, it does not grow with the machine's load."""
    found: list[tuple[float, float, str, str, float]] = []
    starts: dict[int, list[list[float]]] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            starts.setdefault(threading.get_ident(), []).append([time.perf_counter(), time.thread_time(), 1.0])
        elif event == "call":
            stack = starts.get(threading.get_ident())
            if stack:
                stack[-1][2] = 0.0  # Python code runs inside that C call
        elif event in ("c_return", "c_exception"):
            stack = starts.get(threading.get_ident())
            if stack:
                begun, cpu_begun, leaf = stack.pop()
                took, cpu = time.perf_counter() - begun, (time.thread_time() - cpu_begun if leaf else -1.0)
                if took > threshold_s or cpu > cpu_threshold_s:
                    where = f"{getattr(arg, '__qualname__', arg)} < {frame.f_code.co_name}:{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
                    found.append((begun, took, threading.current_thread().name, where, cpu))

    threading.setprofile(profile)
    return found


def _gui_calls(threshold_s: float = 0.015) -> tuple[list[tuple[float, float, int, str, float]], Callable[[], None]]:
    """Record the GUI thread's Python and C calls longer than ``threshold_s`` from now on: (start,
    seconds, depth, call < caller, CPU seconds). Nested calls are all listed (an outer call
    includes the inner ones); the event loop's own wait is left out. The CPU time is the GUI
    thread's own work: wall time beyond it was spent waiting for the GIL or for a core (this
    profiling itself slows the GUI thread's Python down, about twofold). Returns the list and a
    function that stops."""
    found: list[tuple[float, float, int, str, float]] = []
    starts: list[tuple[float, float]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            starts.append((time.perf_counter(), time.thread_time()))
        elif event in ("return", "c_return", "c_exception") and starts:
            begun, cpu_begun = starts.pop()
            took = time.perf_counter() - begun
            if took > threshold_s:
                name = frame.f_code.co_name if event == "return" else getattr(arg, "__qualname__", str(arg))
                if name in ("processEvents", "spin_until"):
                    return
                where = f"{frame.f_code.co_name}:{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
                if event == "return":
                    caller = frame.f_back
                    where = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_firstlineno}" + (
                        f" < {caller.f_code.co_name}:{Path(caller.f_code.co_filename).name}" if caller is not None else "")
                found.append((begun, took, len(starts), f"{name} ({where})", time.thread_time() - cpu_begun))

    sys.setprofile(profile)
    return found, lambda: sys.setprofile(None)


async def _bench_write_file(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """bench.write_file: write ``bytes`` bytes of text to ``path`` in 1 MiB writes, then fsync."""
    import asyncio

    from crewagent.core.tools import ok

    path, size = Path(str(args["path"])), int(args["bytes"])
    line = b"A line of the generated file, with some words to make it look like text: 0123456789.\n"
    block = (line * (2**20 // len(line) + 1))[: 2**20]

    def write() -> None:
        with open(path, "wb") as handle:
            left = size
            while left > 0:
                left -= handle.write(block[: min(left, len(block))])
            handle.flush()
            os.fsync(handle.fileno())

    await asyncio.to_thread(write)
    return ok(path=str(path), bytes=size)


def _with_bench_tool() -> None:
    """Give the turn's tool registry the bench.write_file tool (section 2, variant "tool")."""
    import crewagent.core.turns as turns_module
    from crewagent.core.tools import Tool

    tool = Tool("bench.write_file", "Write a file of the given size (benchmark).", _bench_write_file,
                parameters={"type": "object", "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"}},
                            "required": ["path", "bytes"]})
    original = turns_module.default_registry

    def registry() -> Any:
        made = original()
        made.register(tool)
        return made

    turns_module.default_registry = registry  # type: ignore[attr-defined]


def child_latency(payload: dict[str, Any]) -> dict[str, Any]:
    """Section 2, in its own process: a timer probe on the GUI thread during two turns."""
    data = Dataset(**payload["dataset"])
    if payload["variant"] == "tool":
        _with_bench_tool()
    long_calls = _long_c_calls() if payload.get("diagnose") else []
    collections: list[tuple[float, float, int]] = []
    if payload.get("diagnose"):
        import gc

        began: list[float] = []

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                began.append(time.perf_counter())
            elif began:
                start = began.pop()
                collections.append((start, time.perf_counter() - start, info["generation"]))

        gc.callbacks.append(on_gc)
    from PySide6.QtCore import QObject, Qt, QTimer, Signal

    from crewagent.core.llm import ProviderConfig

    config = ProviderConfig(provider="openai-compatible", base_url=payload["url"], api_key="sk-bench",
                            model="bench", timeout=60.0, max_retries=0)
    gui = _Gui(data.data_dir, provider_factory=lambda settings, demo: config)
    gui.open_project(data.project_root)
    conversation = gui.window.project_view.conversation
    gui.window.project_view.select_conversation(data.big_id)
    gui.spin_until(lambda: conversation.loaded and conversation.conversation_id == data.big_id, 60)
    # As a user reads before typing: the conversation loaded whole and the worker idle again.
    loop = gui.host.worker.turns._async  # noqa: SLF001 (a benchmark looks inside)
    gui.spin_until(lambda: loop is not None and not loop.busy and getattr(conversation.model, "older_count", 1) > 0, 60)
    gui.drain()
    if payload.get("diagnose"):
        import gc

        print(f"tracked objects before the turn: {len(gc.get_objects()):,}; frozen: {gc.get_freeze_count():,}", file=sys.stderr)

    turns = gui.host.worker.turns
    events: list[tuple[float, str]] = []
    finished: set[str] = set()

    def note(name: str) -> Callable[..., None]:
        # Only short values: the repr of a ToolCallRef holds all of its (20 MB) arguments.
        def short(value: Any) -> str:
            return str(value)[:80] if isinstance(value, (str, int, float)) else str(getattr(value, "name", type(value).__name__))

        return lambda *args: events.append((time.perf_counter(), ":".join([name, *map(short, args)])))

    for name in ("turn_started", "stream_started", "stream_ended", "tool_started", "tool_finished", "turn_finished"):
        getattr(turns, name).connect(note(name))
    outcomes: dict[str, str] = {}

    def turn_finished(cid: str, reason: str, error: Any) -> None:
        finished.add(cid)
        outcomes["visible" if cid == data.big_id else "other"] = reason + (f" ({error.get('code')})" if error else "")

    turns.turn_finished.connect(turn_finished)
    chunks = [0]
    turns.stream_chunk.connect(lambda cid, text: chunks.__setitem__(0, chunks[0] + 1) if cid == data.big_id else None)

    class Sender(QObject):
        send = Signal(str, str, str, str)

    sender = Sender()
    sender.send.connect(turns.send, Qt.ConnectionType.QueuedConnection)

    samples: list[tuple[float, str]] = []
    sampling = threading.Event()
    if payload.get("diagnose"):
        main_id = threading.main_thread().ident or 0

        def sample() -> None:  # the GUI thread's stack every 2 ms (when this thread gets the GIL)
            while not sampling.is_set():
                frame = sys._current_frames().get(main_id)
                stack: list[str] = []
                while frame is not None and len(stack) < 8:
                    stack.append(f"{frame.f_code.co_name}:{Path(frame.f_code.co_filename).name}:{frame.f_lineno}")
                    frame = frame.f_back
                samples.append((time.perf_counter(), " < ".join(stack)))
                time.sleep(0.002)

        threading.Thread(target=sample, daemon=True).start()
    gui_calls, stop_gui_calls = _gui_calls() if payload.get("diagnose") else ([], lambda: None)
    ticks: list[float] = []
    probe = QTimer()
    probe.setTimerType(Qt.TimerType.PreciseTimer)
    probe.timeout.connect(lambda: ticks.append(time.perf_counter()))
    probe.start(PROBE_INTERVAL_MS)
    gui.spin_until(lambda: len(ticks) > 20, 5)  # the probe is running
    started = time.perf_counter()
    composer = conversation.composer
    composer.input.setPlainText("[visible] Write the big file, and tell me about it while you do.")
    composer.submit()
    sender.send.emit(data.project_id, data.background_id, "[background] Write another big file.", "chat")
    gui.spin_until(lambda: {data.big_id, data.background_id} <= finished, 300)
    gui.drain()
    ended = time.perf_counter()
    stop_gui_calls()
    probe.stop()
    sampling.set()
    memory = proc_status_mb()
    rows = conversation.model.rowCount()
    gui.close()
    return {"ticks": ticks, "events": events, "started": started, "ended": ended, "chunks": chunks[0],
            "memory": memory, "rows": rows, "samples": samples, "long_calls": long_calls, "collections": collections,
            "gui_calls": gui_calls,
            "outcomes": outcomes}


# -- sections (parent side) ------------------------------------------------------------------------


def section_open(cfg: Config, data: Dataset, results: dict[str, Any]) -> None:
    out = run_child("open", {"dataset": asdict(data), "config": asdict(cfg)},
                    child_env(data.config_dir, data.data_dir), timeout=1800)
    results["open"] = out
    rounds = out["rounds"]
    phases = ["request_to_worker", "worker_first_page", "transfer", "model_fill", "layout", "paint", "total",
              "worker_whole_load", "gui_history_join", "whole_loaded"]
    print(f"\n## 1. Open a {cfg.messages:,}-message conversation ({cfg.tool_parts} tool parts, "
          f"{data.rows:,} top-level rows and parts, log {data.log_mb:.1f} MB)\n")
    print(f"Click in the Works list -> last page painted (`total`); {len(rounds)} opens, each after opening a "
          "short conversation. The rows below `total` happen after it: the whole conversation recovered and "
          "loaded on the worker, then joined above the first page on the GUI thread. Times in ms.\n")
    headers = ["phase", "first open", "median", "min", "max"]
    rows = []
    for phase in phases:
        values = [r[phase] for r in rounds]
        rows.append([phase, fmt(values[0]), fmt(statistics.median(values)), fmt(min(values)), fmt(max(values))])
    print(table(headers, rows))
    total = statistics.median(r["total"] for r in rounds)
    first = rounds[0]["total"]
    verdict = "holds" if total < GOAL_OPEN_MS and first < GOAL_OPEN_MS else ("holds for warm opens" if total < GOAL_OPEN_MS else "missed")
    print(f"\nGoal \"last page in under {GOAL_OPEN_MS:.0f} ms\": **{verdict}** (median {total:.0f} ms, first {first:.0f} ms).")

    mem = [("before the first open", out["memory_before_open"]), ("after the opens", out["memory_after_open"]),
           ("after scrolling the whole history", out["memory_after_scroll"])]
    print("\nProcess memory (MiB):\n")
    print(table(["when", "VmRSS", "VmHWM (peak)"],
                [[w, fmt(m.get("VmRSS", float("nan"))), fmt(m.get("VmHWM", float("nan")))] for w, m in mem]))
    peak = max(m.get("VmHWM", 0.0) for _, m in mem)
    print(f"\nGoal \"process memory under {GOAL_RSS_MB:.0f} MB\": **{'holds' if peak < GOAL_RSS_MB else 'missed'}** "
          f"(peak {peak:.0f} MiB).")

    print("\nScrolling (ms from the scroll action to the end of the repaint it caused; "
          "\"settled\": until the event queue was empty again):\n")
    srows = []
    for name, steps in (("page up, bottom to top", out["page_steps"]), ("wheel down (3 lines)", out["wheel_steps"])):
        first_paint = [s[0] for s in steps]
        settled = [s[1] for s in steps]
        srows.append([name, str(len(steps)), fmt(percentile(first_paint, 0.5)), fmt(percentile(first_paint, 0.99)),
                      fmt(max(first_paint)), fmt(percentile(settled, 0.99)), fmt(max(settled))])
    print(table(["steps", "n", "p50", "p99", "max", "settled p99", "settled max"], srows))
    print(f"\nReached the first message at the top: {out['reached_top']}.")


VARIANTS = {
    "tool": "a tool writes 20 MB to disk (bench.write_file: 1 MiB writes and an fsync, on the worker)",
    "fs_write": "the model sends fs.write 20 MB of content (parsed, persisted in the log, written by the tool)",
}


def section_latency(cfg: Config, data: Dataset, results: dict[str, Any], variant: str, diagnose: bool = False) -> None:
    env = child_env(data.config_dir, data.data_dir)
    scratch = Path(data.config_dir).parent / "writes"
    scratch.mkdir(exist_ok=True)
    settings = {"tools": {"fs": {"maxWriteBytes": cfg.write_bytes * 2}, "alwaysAllow": ["fs.write"]},
                "llm": {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "bench"}}
    Path(data.config_dir, "settings.json").write_text(json.dumps(settings))
    serving = {"tokens_per_s": cfg.tokens_per_s, "before_s": cfg.stream_before_tool_s, "after_s": cfg.stream_after_tool_s,
               "write_bytes": cfg.write_bytes, "variant": variant, "scratch": str(scratch)}
    with model_server("serve", serving, env) as url:
        out = run_child("latency", {"dataset": asdict(data), "url": url, "diagnose": diagnose, "variant": variant},
                        env, timeout=900)
    ticks = out["ticks"]
    late = [(b - a) * MS - PROBE_INTERVAL_MS for a, b in zip(ticks, ticks[1:]) if b >= out["started"]]
    stalls = sorted(((b - a) * MS - PROBE_INTERVAL_MS, (a - out["started"]) * MS) for a, b in zip(ticks, ticks[1:]) if b >= out["started"])[-5:]
    kept = results.setdefault("latency", {})[variant] = {k: v for k, v in out.items() if k not in ("ticks", "samples", "long_calls", "collections", "gui_calls")}
    kept["lateness_ms"] = late
    kept["worst_stalls"] = [{"ms": m, "at_ms": at} for m, at in reversed(stalls)]
    number = "2a" if variant == "tool" else "2b"
    print(f"\n## {number}. GUI event-loop latency: {cfg.tokens_per_s} tokens/s streamed into the big conversation; "
          f"{VARIANTS[variant].replace('20 MB', f'{cfg.write_bytes / 1024 / 1024:.0f} MB')}\n")
    print("The visible turn streams, then calls the tool, then (if the context allows) streams on; a second "
          "conversation's turn, started as from another window, calls the same tool while the first streams.\n")
    print(f"A {PROBE_INTERVAL_MS} ms QTimer on the GUI thread; lateness = gap between ticks - {PROBE_INTERVAL_MS} ms. "
          f"{out['chunks']} chunks reached the timeline; run {out['ended'] - out['started']:.1f} s.\n")

    def phase_rows() -> list[list[str]]:
        marks = sorted(out["events"])
        fg = data.big_id
        stream1 = next((t for t, e in marks if e.startswith(f"stream_started:{fg}")), out["started"])
        tool = next((t for t, e in marks if e.startswith(f"tool_started:{fg}")), stream1)
        tool_end = next((t for t, e in marks if e.startswith(f"tool_finished:{fg}")), tool)
        end = next((t for t, e in marks if e.startswith(f"turn_finished:{fg}")), out["ended"])
        spans = [("whole run", out["started"], out["ended"]), ("send -> first streamed text", out["started"], stream1),
                 ("streaming (the other turn's tool runs)", stream1, tool), ("the visible turn's tool", tool, tool_end),
                 ("tool done -> turn finished", tool_end, end)]
        rows = []
        for name, a, b in spans:
            values = [(y - x) * MS - PROBE_INTERVAL_MS for x, y in zip(ticks, ticks[1:]) if a <= y <= b]
            if values:
                rows.append([name, fmt(b - a, 2), str(len(values)), fmt(percentile(values, 0.5), 2),
                             fmt(percentile(values, 0.99), 2), fmt(max(values), 1),
                             str(sum(1 for v in values if v > GOAL_BLOCK_MS))])
        return rows

    print(table(["phase", "s", "ticks", "p50 ms", "p99 ms", "max ms", f"> {GOAL_BLOCK_MS:.0f} ms"], phase_rows()))
    print(f"\nThe visible turn ended {out['outcomes'].get('visible')}; the other {out['outcomes'].get('other')}.")
    if diagnose:  # what the GUI thread was doing during the worst stalls (empty: waiting for the GIL)
        for late_ms, at in sorted(((b - a) * MS - PROBE_INTERVAL_MS, a) for a, b in zip(ticks, ticks[1:]))[-8:]:
            inside = [stack for t, stack in out["samples"] if at < t < at + (late_ms + PROBE_INTERVAL_MS) / MS]
            common = max(set(inside), key=inside.count) if inside else "(no sample: another thread held the GIL)"
            print(f"\n- {late_ms:.0f} ms at {(at - out['started']) * MS:.0f} ms, {len(inside)} samples: {common}")
            end = at + (late_ms + PROBE_INTERVAL_MS) / MS
            for begun, took, thread, where, _cpu in out["long_calls"]:
                if took > 0.015 and begun < end and begun + took > at and "SimpleQueue.get" not in where and "epoll" not in where:
                    print(f"    {thread}: {took * MS:.0f} ms in {where}")
            for begun, took, generation in out["collections"]:
                if begun < end and begun + took > at and took > 0.005:
                    print(f"    gc generation {generation}: {took * MS:.0f} ms")
            for begun, took, depth, call, cpu in sorted(out["gui_calls"]):
                if begun < end and begun + took > at:
                    print(f"    GUI thread{'  ' * min(depth, 12)}: {took * MS:.0f} ms ({cpu * MS:.0f} CPU) in {call}")
        # Load-independent: the C calls of the worker's threads that used the most CPU (the GIL
        # is theirs meanwhile). The turn's thread runs Python between them, so the GUI gets a turn.
        heavy = sorted((c for c in out["long_calls"] if c[2] != "MainThread" and c[4] >= 0), key=lambda c: c[4], reverse=True)[:10]
        print("\nC calls off the GUI thread with the most CPU time (ms CPU / ms wall, thread, call < caller):\n")
        for _begun, took, thread, where, cpu in heavy:
            print(f"- {cpu * MS:.1f} / {took * MS:.1f} {thread}: {where}")
        kept["heaviest_c_calls"] = [{"cpu_ms": c[4] * MS, "wall_ms": c[1] * MS, "thread": c[2], "call": c[3]} for c in heavy]
        calls = sorted(out["gui_calls"])
        outer = [c for c in calls if not any(o is not c and o[0] <= c[0] and c[0] + c[1] <= o[0] + o[1] and o[2] < c[2] for o in calls)]
        print("\nThe GUI thread's calls with the most CPU time (ms CPU / ms wall, at ms from the send; "
              "the calls inside them over 15 ms):\n")
        for begun, took, depth, call, cpu in sorted(outer, key=lambda c: c[4], reverse=True)[:12]:
            print(f"- {cpu * MS:.0f} / {took * MS:.0f} at {(begun - out['started']) * MS:.0f}: {call}")
            inner = [c for c in calls if c[0] >= begun and c[0] + c[1] <= begun + took and c[2] > depth]
            for _b, t, d, name, c_cpu in inner[:8]:
                print(f"  {'  ' * min(d - depth, 10)}{c_cpu * MS:.0f} / {t * MS:.0f} {name}")
        gen2 = [took for _, took, generation in out["collections"] if generation == 2]
        print(f"\n{len(out['collections'])} garbage collections, {len(gen2)} of generation 2 "
              f"(max {max(gen2, default=0) * MS:.0f} ms, total {sum(gen2) * MS:.0f} ms).")
    worst = max(late) if late else float("nan")
    print(f"\nGoal \"the GUI thread never blocks longer than {GOAL_BLOCK_MS:.0f} ms\": "
          f"**{'holds' if worst <= GOAL_BLOCK_MS else 'missed'}** (p99 {percentile(late, 0.99):.1f} ms, max {worst:.1f} ms). "
          f"Peak memory of that process: {out['memory'].get('VmHWM', float('nan')):.0f} MiB.")
    if variant == "fs_write":
        p99 = percentile(late, 0.99)
        verdict = "holds" if p99 < GOAL_BIG_ARGS_P99_MS and worst < GOAL_BIG_ARGS_MAX_MS else "missed"
        print(f"\nissue 14 · {cfg.write_bytes / 1024 / 1024:g} MB arguments: p99 {p99:.1f} ms (goal < {GOAL_BIG_ARGS_P99_MS:.0f}) "
              f"max {worst:.1f} ms (goal < {GOAL_BIG_ARGS_MAX_MS:.0f}) · **{verdict}** "
              f"(load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")


def _gui_forked(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """``--smoke``: ``crewagent <argv>`` in a fork of this process (the app already imported, no
    QApplication made yet), not a new interpreter; its exit code and stderr."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            import gc

            gc.freeze()  # the parent's objects: collections skip them (as tests/fakes/zygote.py does)
            os.close(read)
            os.dup2(write, 2)
            os.environ.clear()
            os.environ.update(env)
            from crewagent.cli import main as crewagent_main

            code = crewagent_main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write)
    with os.fdopen(read, encoding="utf-8", errors="replace") as stream:
        stderr = stream.read()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), stderr


def measure_cold(cfg: Config, scratch: Path, fork: bool = False) -> list[dict[str, float]]:
    data_dir, config_dir, root = prepare_cold_data(cfg, scratch)
    env = child_env(config_dir, data_dir)
    env["CREWAGENT_STARTUP_PROBE"] = "1"
    runs: list[dict[str, float]] = []
    for _ in range(cfg.cold_runs):
        argv = ["gui", "--data-dir", data_dir, "--project", root]
        start = time.monotonic()
        if fork:
            code, stderr = _gui_forked(argv, env)
        else:
            proc = subprocess.run([sys.executable, "-m", "crewagent", *argv], capture_output=True, text=True, timeout=120, env=env)
            code, stderr = proc.returncode, proc.stderr
        marks: dict[str, float] = {}
        for line in stderr.splitlines():
            if line.startswith("crewagent-startup "):
                _, name, stamp, *rest = line.split()
                marks[name] = (float(stamp) - start) * MS
                if rest:
                    marks[f"{name}_rows"] = float(rest[0])
        if code != 0 or "works" not in marks:
            raise SystemExit(f"cold start run failed ({code}):\n{stderr[-3000:]}")
        runs.append(marks)
    return runs


def section_cold(cfg: Config, runs: list[dict[str, float]], results: dict[str, Any]) -> None:
    results["cold"] = runs
    print(f"\n## 3. Cold start: `python -m crewagent gui --project P`, {cfg.conversations:,} conversations\n")
    print(f"From the process start (parent's clock before spawning) to each first paint; {len(runs)} runs, ms.\n")
    rows = []
    for name, label in (("window", "main window first painted"), ("works", "Works list painted with the conversations")):
        values = [r[name] for r in runs]
        rows.append([label, fmt(statistics.median(values), 0), fmt(min(values), 0), fmt(max(values), 0)])
    print(table(["milestone", "median", "min", "max"], rows))
    listed = int(runs[0].get("works_rows", 0))
    median = statistics.median(r["works"] for r in runs) / MS
    print(f"\nThe Works list held {listed:,} conversations at that paint. Goal \"cold start under {GOAL_COLD_S} s\" "
          f"(to the Works list): **{'holds' if median < GOAL_COLD_S else 'missed'}** (median {median:.2f} s).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument("--smoke", action="store_true",
                        help="the smallest sizes, every child in this process: proves the benchmark runs (its tests)")
    parser.add_argument("--json", action="store_true", help="also print the raw results as JSON at the end")
    parser.add_argument("--only", choices=("open", "latency", "cold", "run"), action="append", help="run only these sections")
    parser.add_argument("--variant", choices=tuple(VARIANTS), action="append",
                        help="section 2: run only this variant (tool: (a), fs_write: (b), issue 14's 20 MB arguments)")
    parser.add_argument("--diagnose", action="store_true", help="section 2: sample the GUI thread's stack, show it for the worst stalls")
    parser.add_argument("--_child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._child:
        kind, payload = args._child[0], json.loads(args._child[1])
        if kind in SERVERS:
            child_serve(kind, payload)
            return 0
        print(json.dumps(child_result(kind, payload)))
        return 0

    global _CHILDREN_HERE
    _CHILDREN_HERE = args.smoke
    cfg = SMOKE if args.smoke else QUICK if args.quick else Config()
    sections = args.only or ["open", "latency", "cold", "run"]
    print("# Desktop UI benchmark" + (" (--smoke)" if args.smoke else " (--quick)" if args.quick else ""))
    print()
    print(table(["machine", ""], [[k, v] for k, v in machine()]))
    results: dict[str, Any] = {"config": asdict(cfg)}
    scratch = Path(tempfile.mkdtemp(prefix="crewagent-bench-ui-"))
    try:
        cold: list[dict[str, float]] | None = None
        if args.smoke and "cold" in sections:
            # Forked from this process, which has imported the app but made no QApplication yet
            # (the other sections' children run here, and a fork of a running Qt app is unsafe).
            from crewagent.core import tuning

            with tuning.start_imports():  # as `crewagent gui` imports them: no collections, then frozen
                import crewagent.ui.mainwindow  # noqa: F401  (what the fork would import)

            cold = measure_cold(cfg, scratch / "cold", fork=True)
        if "open" in sections or "latency" in sections:
            started = time.perf_counter()
            data = prepare_open_data(cfg, scratch / "open")
            print(f"\n(prepared {cfg.messages:,} messages in {time.perf_counter() - started:.1f} s)")
            if "open" in sections:
                section_open(cfg, data, results)
            if "latency" in sections:
                for variant in args.variant or VARIANTS:
                    section_latency(cfg, data, results, variant, args.diagnose)
        if "cold" in sections:
            section_cold(cfg, cold if cold is not None else measure_cold(cfg, scratch / "cold"), results)
        if "run" in sections:
            _bench_run_ui.section(scratch, results, quick=cfg.quick, env_of=child_env, run_child=run_child, table=table,
                                  percentile=percentile, model_server=model_server, probe_ms=PROBE_INTERVAL_MS,
                                  smoke=args.smoke)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
