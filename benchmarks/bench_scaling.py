#!/usr/bin/env python3
"""How the costs grow with one conversation's length, 10^2 to 10^5 messages (issue 14, item 3).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_scaling.py          # 10^2 .. 10^5 (~100 MB log)
    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_scaling.py --quick  # 10^2 and 10^3: a smoke run
    ... bench_scaling.py --json                                                     # also the raw results as JSON
    ... bench_scaling.py --window-only --sizes 100000 [--baseline SRC] [--rounds 2]  # only the window at 10^5
                                                    # (SRC: a checkout of older code, e.g. `git archive`; opened alternately)

One data folder (a temporary one, removed afterwards) holds one project per size, each with one
conversation of that many messages (~1 KB a line: user text, an assistant tool call, its tool
result, an answer; one message holds a rare marker word) and a short second one. The logs are
written from pre-encoded lines with fresh ids, so 100 MB take seconds. Per size:

- **append p50**: ``RuntimeStore.append_message`` (fsync'd), round robin over the sizes so that
  a busy neighbour slows them all alike; done last, so the other columns see the exact sizes;
- **load**: ``RuntimeStore.load_messages`` on a fresh store (CPU time; wall-clock in the JSON),
  and the tracemalloc peak of one more load over the file size;
- **context build**: ``build_llm_messages`` of the loaded history (agent mode, default budget);
- **window, last page**: a real offscreen MainWindow (with its worker thread, in a child
  process) opening the conversation from the Works list, from the click to the end of the
  paint that shows the last page; then the whole conversation loads in the background, and the
  window process's peak RSS (VmHWM) and RSS (VmRSS) are read once it has;
- **search**: ``MessageSearch.search`` of the rare word, with the FTS5 index (after its build
  from nothing, which is shown) and without it (the scan of the logs).

Load, context build, scan, index build and indexed search are measured in rounds (3 in a full
run; ``--rounds N`` for more) interleaved between the sizes, each round going through every size
once (smallest first, then largest first), so that a slow minute of the shared host falls on
every size alike; each size's round runs in a fresh fork of the benchmark's process, so that it
starts from the same heap whatever was measured before it. The first round is cold (each size's
first read of its files) and is shown apart; each figure is the median of the other rounds, and
the verdicts are on those.

For each cost the growth factor per decade (cost at 10x the messages / cost) is printed with a
verdict: flat costs must stay within 2.5x a decade, linear ones within 15x (10x is linear).
Nothing here is a timed test; tests/ui/test_bench_scaling_smoke.py checks that --quick runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import MessageFactory, machine_info, percentile, table  # noqa: E402

from crewagent.core.messages import ConversationMessage  # noqa: E402
from crewagent.core.store import RuntimeStore  # noqa: E402
from crewagent.core.store.log import encode_message  # noqa: E402

MS = 1000.0
MB = 1024 * 1024
MARKER = "zanzibarquokka"  # in exactly one message of each conversation
GOAL_OPEN_MS = 500.0
GOAL_RSS_MB = 600.0
FLAT_LIMIT = 2.5  # a flat cost may grow this much a decade (noise, caches)
LINEAR_LIMIT = 15.0  # a linear cost grows 10x a decade; quadratic would be 100x


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    appends: int  # timed appends per size
    rounds: int  # rounds over every size of load, context, scan, index build and search; the 1st is cold
    opens: int  # window opens per size
    searches: int  # indexed searches per size and round (their median is the round's figure)


FULL = Config(sizes=(100, 1_000, 10_000, 100_000), appends=60, rounds=3, opens=3, searches=5)
QUICK = Config(sizes=(100, 1_000), appends=5, rounds=2, opens=1, searches=2)
#: ``--smoke`` (tests/ui/test_bench_scaling_smoke.py): two sizes, the larger above a first page (150
#: messages), and the window in this process (the tests' QApplication) instead of a child process.
SMOKE = Config(sizes=(20, 200), appends=2, rounds=2, opens=1, searches=1)


# -- the logs ---------------------------------------------------------------------------------


class Lines:
    """Pre-encoded log lines of an agent conversation; each copy gets fresh message and call ids."""

    def __init__(self, turns: int = 64, seed: int = 14):
        factory = MessageFactory(seed=seed)
        self.templates: list[bytes] = []
        for message in factory.batch(4 * turns):
            line = encode_message(message)
            line = line.replace(message.id.encode(), b"@ID@")
            if message.tool_call_id:
                line = line.replace(message.tool_call_id.encode(), b"@CALL@")
            for call in message.tool_calls or []:
                line = line.replace(call.id.encode(), b"@CALL@")
            self.templates.append(line)

    def write(self, path: Path, count: int, tag: str) -> int:
        """``count`` lines (whole turns of four, the last turn cut) to ``path``; its size in bytes."""
        chunks: list[bytes] = []
        size = 0
        marked = count // 2 // 4 * 4  # a user message half-way through holds the marker word
        with open(path, "wb") as handle:
            for n in range(count):
                line = self.templates[n % len(self.templates)]
                line = line.replace(b"@ID@", f"m{tag}_{n:07d}".encode()).replace(b"@CALL@", f"c{tag}_{n // 4:07d}".encode())
                if n == marked:
                    assert b'"role":"user"' in line
                    line = line.replace(b'"content":"', f'"content":"{MARKER} '.encode(), 1)
                chunks.append(line)
                if len(chunks) >= 4096:
                    size += handle.write(b"".join(chunks))
                    chunks = []
            size += handle.write(b"".join(chunks))
        return size


@dataclass
class Subject:
    """One size: its project, its long conversation and a short one to switch away to."""

    size: int
    root: str
    project_id: str
    conversation_id: str
    other_id: str
    file_bytes: int


def generate(cfg: Config, scratch: Path) -> tuple[Path, list[Subject]]:
    data = scratch / "data"
    store = RuntimeStore(data)
    lines = Lines()
    subjects = []
    for size in cfg.sizes:
        root = scratch / f"project-{size}"
        project = store.create_project(root, f"{size:,} messages")
        other = store.create_conversation(project.id, title="A short one")
        store.append_messages(project.id, other.id, [ConversationMessage.new("user", "hello"), ConversationMessage.new("assistant", "hi")])
        meta = store.create_conversation(project.id, title=f"{size:,} messages")
        written = lines.write(store.log_path(project.id, meta.id), size, str(size))
        store.list_conversations(project.id)  # the index catches up with the bulk-written log once
        subjects.append(Subject(size, str(root), project.id, meta.id, other.id, written))
    store.flush()
    return data, subjects


# -- measurements in this process -------------------------------------------------------------


#: The in-process costs measured in every round, each a (wall-clock, CPU) pair in seconds.
ROUND_COSTS = ("load", "context", "search_scan", "index_build", "search_index")


def _timed(run: Callable[[], Any]) -> tuple[Any, tuple[float, float]]:
    """``run()``'s result and its (wall-clock, CPU) seconds (CPU time: what a busy machine does not inflate)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = run()
    cpu = time.process_time() - start_cpu
    return result, (time.perf_counter() - start, cpu)


def measure_round(cfg: Config, data: Path, subject: Subject, first: bool) -> dict[str, tuple[float, float]]:
    """One round of one size: a load on a fresh store, the context build of what it loaded, a scan,
    an index build from nothing, and the median of ``cfg.searches`` indexed searches."""
    from crewagent.core import paths
    from crewagent.core.context import build_llm_messages
    from crewagent.core.search import MessageSearch
    from crewagent.core.search.index import files_of

    out: dict[str, tuple[float, float]] = {}
    gc.collect()  # once a round: a collection costs as much as a small size's whole round
    loaded, out["load"] = _timed(lambda: RuntimeStore(data).load_messages(subject.project_id, subject.conversation_id))
    if first:
        assert len(loaded.messages) == subject.size and not loaded.problems, (len(loaded.messages), loaded.problems[:1])
    history = loaded.messages
    del loaded
    result, out["context"] = _timed(lambda: build_llm_messages(history, mode="agent"))
    assert result.ok, result.error
    del history, result

    store = RuntimeStore(data)
    scanned, out["search_scan"] = _timed(lambda: MessageSearch(store, use_index=False).search(subject.project_id, MARKER))
    for file in files_of(paths.search_index_file(paths.project_runtime_dir(data, subject.project_id))):
        file.unlink(missing_ok=True)  # every round builds the index from nothing
    indexed = MessageSearch(store)
    try:
        hits, out["index_build"] = _timed(lambda: indexed.search(subject.project_id, MARKER))  # builds it first
        assert hits == scanned and len(hits) == 1, (hits, scanned)
        searches = [_timed(lambda: indexed.search(subject.project_id, MARKER))[1] for _ in range(cfg.searches)]
    finally:
        indexed.close()
    out["search_index"] = (statistics.median(w for w, _ in searches), statistics.median(c for _, c in searches))
    return out


def measure_core(cfg: Config, data: Path, subjects: list[Subject], progress: Callable[[str], None]) -> dict[int, dict[str, Any]]:
    """Every size's in-process costs, ``cfg.rounds`` rounds interleaved between the sizes.

    A round measures every size once, smallest first in odd rounds and largest first in even
    ones, so a slow minute of a shared host falls on all sizes alike, and neighbouring sizes are
    measured next to each other. Each size's round runs in a fresh fork of this process
    (``_in_a_fork``), so that it starts from the same heap whatever was measured before it. The
    first round is shown apart as cold (the first read of each size's files); the figure is the
    median of the other rounds.
    """
    samples: dict[int, dict[str, list[tuple[float, float]]]] = {s.size: {c: [] for c in ROUND_COSTS} for s in subjects}
    places: dict[int, list[int]] = {s.size: [] for s in subjects}  # each size's place in each round
    # What every process pays once (the imports of the context builder and the search, the
    # tokenizer's tables: ~0.3 s) is paid here, by the smallest size, and not by each fork.
    measure_round(cfg, data, subjects[0], first=False)
    for round_ in range(cfg.rounds):
        progress(f"round {round_ + 1} of {cfg.rounds}: load, context, scan, index build, search (load average"
                 f" {os.getloadavg()[0]:.1f})")
        for place, subject in enumerate(subjects if round_ % 2 == 0 else subjects[::-1]):
            for cost, value in _in_a_fork(measure_round, cfg, data, subject, round_ == 0).items():
                samples[subject.size][cost].append(value)
            places[subject.size].append(place)
    rows: dict[int, dict[str, Any]] = {}
    for subject in subjects:
        row: dict[str, Any] = {}
        for cost, values in samples[subject.size].items():
            warm = values[1:] or values  # a single round (--smoke) has only the cold one
            row[f"{cost}_s"] = statistics.median(cpu for _, cpu in warm)
            row[f"{cost}_wall_s"] = statistics.median(wall for wall, _ in warm)
            row[f"{cost}_cold_s"] = values[0][1]
            row[f"{cost}_rounds_s"] = [cpu for _, cpu in values]
        row["round_places"] = places[subject.size]
        row["load_peak_over_file"] = _load_peak(data, subject)
        rows[subject.size] = row
    return rows


def _in_a_fork(measure: Callable[..., dict[str, tuple[float, float]]], *args: Any) -> dict[str, tuple[float, float]]:
    """``measure(*args)`` in a forked child of this process, which then exits; its result comes back.

    Each size's round then starts from the same heap: this process's, which holds no log. Run in
    this process, a round inherited what the previous one left (the pages and arenas of a 10^5
    load and index build): in one process, a 10^4 load took 0.12 CPU-s before the round's 10^5
    measurements and 0.21 after them, and four 10^5 loads took 1.35 to 2.33 (docs/benchmarks.md,
    "Session 11: the open goals measured again"). It runs here where fork is missing, or when
    another thread runs (the smoke test's process): that thread's locks would stay taken in the child.
    """
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return measure(*args)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, send the result, leave without the interpreter's teardown
        code = 1
        try:
            os.close(read_fd)
            with os.fdopen(write_fd, "w") as out:
                json.dump(measure(*args), out)
            code = 0
        except BaseException as exc:  # reported by the parent, from the exit status
            print(f"bench_scaling: a measurement failed in its child: {exc!r}", file=sys.stderr)
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd) as reader:
        answer = reader.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not answer:
        raise RuntimeError(f"a measurement's child failed (exit status {os.waitstatus_to_exitcode(status)})")
    return {cost: (value[0], value[1]) for cost, value in json.loads(answer).items()}


def _load_peak(data: Path, subject: Subject) -> float:
    """The tracemalloc peak of one load over the file's size (its own load: tracemalloc slows it)."""
    gc.collect()
    tracemalloc.start()
    again = RuntimeStore(data).load_messages(subject.project_id, subject.conversation_id)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del again
    return peak / subject.file_bytes


def measure_appends(cfg: Config, data: Path, subjects: list[Subject]) -> dict[int, float]:
    store = RuntimeStore(data)
    feed = MessageFactory(seed=41)
    samples: dict[int, list[float]] = {s.size: [] for s in subjects}
    for round_ in range(2 + cfg.appends):  # two warm-up rounds
        for subject in subjects:
            message = feed.next()
            start = time.perf_counter()
            store.append_message(subject.project_id, subject.conversation_id, message)
            if round_ >= 2:
                samples[subject.size].append(time.perf_counter() - start)
    return {size: percentile(values, 50) for size, values in samples.items()}


# -- the window (a child process) -------------------------------------------------------------


def child_window(payload: dict[str, Any]) -> dict[str, Any]:
    """Open each size's conversation in a real MainWindow; time the last page's paint, read the memory."""
    from bench_ui import _Gui
    from PySide6.QtCore import QObject, Slot

    loads: list[tuple[float, str, bool]] = []  # (end of the model fill, conversation, complete?)

    class Loads(QObject):
        """Notes each load once the view has it: connected after the view's own slot, on the same
        (GUI) thread, so it runs right after ``ConversationView.on_loaded``. Wrapping that method
        instead would not do: a plain function is not a slot, and PySide6 would call it on the
        worker's thread."""

        @Slot(object)
        def note(self, loaded: Any) -> None:
            loads.append((time.perf_counter(), loaded.conversation_id, loaded.complete))

    gui = _Gui(payload["data_dir"])
    noted = Loads()
    gui.host.worker.turns.conversation_loaded.connect(noted.note)
    try:
        return _open_each(payload, gui, loads)
    finally:
        gui.close()


def _open_each(payload: dict[str, Any], gui: Any, loads: list[tuple[float, str, bool]]) -> dict[str, Any]:
    from bench_ui import _PaintProbe, proc_status_mb
    from PySide6.QtCore import QEventLoop

    results: dict[str, Any] = {}
    for subject in payload["subjects"]:
        gui.open_project(subject["root"])
        conversation = gui.window.project_view.conversation
        bar = conversation.timeline.verticalScrollBar()
        probe = _PaintProbe(conversation.timeline.viewport(),
                            lambda c=conversation, b=bar: (c.conversation_id, b.value(), b.maximum()))
        opens: list[float] = []
        first: dict[str, float] = {}
        for _ in range(payload["opens"]):
            for cid in (subject["other_id"], subject["conversation_id"]):
                loads.clear()
                probe.paints.clear()
                start = time.perf_counter()
                while not gui.window.project_view.select_conversation(cid):  # the Works list may still be loading
                    gui.app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
                    start = time.perf_counter()

                def last_page(cid: str = cid) -> tuple[float, float, Any] | None:
                    filled = [end for end, which, _ in loads if which == cid]
                    return next((p for p in probe.paints if filled and p[0] >= filled[0] and p[2][0] == cid
                                 and p[2][1] == p[2][2]), None)

                try:
                    gui.spin_until(lambda: last_page() is not None, 120)
                except TimeoutError:
                    raise SystemExit(f"no last page of {cid}: shown {conversation.conversation_id!r}, loads {loads},"
                                     f" paints {probe.paints[-3:]}") from None
                painted = last_page()
                assert painted is not None
                at_page = proc_status_mb().get("VmRSS", 0.0)
                # A first page is followed by the whole conversation: wait for it (memory, next open).
                gui.spin_until(lambda cid=cid: any(which == cid and complete for _, which, complete in loads), 600)
                if cid == subject["conversation_id"]:
                    opens.append((painted[1] - start) * MS)
                gui.drain()
                if cid == subject["conversation_id"] and len(opens) == 1:
                    first = proc_status_mb()  # one open, as a user makes it
        memory = proc_status_mb()
        results[str(subject["size"])] = {
            "open_ms": opens, "rss_at_last_page_mb": at_page,
            "rss_mb": first.get("VmRSS", 0.0), "hwm_mb": first.get("VmHWM", 0.0),  # after the first open
            "rss_after_opens_mb": memory.get("VmRSS", 0.0), "hwm_after_opens_mb": memory.get("VmHWM", 0.0),
        }
    return results


def measure_window(
    cfg: Config, data: Path, subjects: list[Subject], scratch: Path, here: bool = False, source: Path | None = None
) -> dict[int, dict[str, Any]]:
    """The window child's results per size; ``source``: a checkout whose ``desktop/crewagent`` the child runs instead."""
    from bench_ui import child_env, run_here

    config = scratch / "config"
    config.mkdir(exist_ok=True)
    payload = {"data_dir": str(data), "opens": cfg.opens, "subjects": [s.__dict__ for s in subjects]}
    env = child_env(str(config), str(data))
    code = [str(source / "desktop")] if source is not None else []
    env["PYTHONPATH"] = os.pathsep.join([*code, str(Path(__file__).resolve().parent), env.get("PYTHONPATH", "")])
    if here:  # --smoke: in this process (its QApplication, if it has one)
        return {int(size): value for size, value in run_here(child_window, payload, env).items()}
    proc = subprocess.run([sys.executable, __file__, "--_window", json.dumps(payload)], capture_output=True, text=True,
                          timeout=1800, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"the window child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    return {int(size): value for size, value in raw.items()}


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    unit: str  # "ms", "s", "x", "MB"
    shape: str  # "flat" or "linear": what the cost must grow like


# In-process costs are CPU time (the machine is shared: wall-clock there is mostly waiting for
# a core); the append (an fsync) and the window (another process) are wall-clock.
COLUMNS = (
    Column("append_s", "append p50", "ms", "flat"),
    Column("load_s", "load, CPU", "ms", "linear"),
    Column("load_peak_over_file", "load memory / file", "x", "flat"),
    Column("context_s", "context build, CPU", "ms", "linear"),
    Column("open_s", "window: last page", "ms", "flat"),
    Column("search_index_s", "search, index, CPU", "ms", "linear"),
    Column("index_build_s", "index build, CPU", "ms", "linear"),
    Column("search_scan_s", "search, no index, CPU", "ms", "linear"),
)


def _fmt(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    ms = value * MS
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def report(cfg: Config, quick: bool, machine: dict[str, str], rows: dict[int, dict[str, Any]]) -> tuple[str, bool]:
    out = [f"# Scaling: one conversation from {cfg.sizes[0]:,} to {cfg.sizes[-1]:,} messages"
           + (" (--quick: small sizes, no verdict)" if quick else ""), ""]
    out.append(table(["machine", ""], [[k, v] for k, v in machine.items()]))
    out.append("")
    header = ["messages", "log MB", *[f"{c.title} ({'ms' if c.unit != 'x' else 'x file'})" for c in COLUMNS],
              "window RSS MB (peak), 1st open", f"after {cfg.opens} opens"]
    body = []
    for size in cfg.sizes:
        row = rows[size]
        body.append([f"{size:,}", f"{row['file_bytes'] / 1e6:.1f}", *[_fmt(row[c.key], c.unit) for c in COLUMNS],
                     f"{row['rss_mb']:.0f} ({row['hwm_mb']:.0f})",
                     f"{row['rss_after_opens_mb']:.0f} ({row['hwm_after_opens_mb']:.0f})"])
    out.append(table(header, body))
    out.append("")
    rounds = len(rows[cfg.sizes[0]]["load_rounds_s"])
    if rounds > 1:
        out.append(f"The figures above are medians of rounds 2-{rounds} (warm); the first round (cold), each size once,"
                   " and the spread of the warm rounds:")
        out.append("")
        measured = [c for c in COLUMNS if f"{c.key[:-2]}_rounds_s" in rows[cfg.sizes[0]]]
        cold_body = []
        for size in cfg.sizes:
            row = rows[size]
            cells = []
            for c in measured:
                warm = row[f"{c.key[:-2]}_rounds_s"][1:]
                cells.append(f"{_fmt(row[c.key[:-2] + '_cold_s'], c.unit)} ({_fmt(min(warm), c.unit)}-{_fmt(max(warm), c.unit)})")
            cold_body.append([f"{size:,}", *cells])
        out.append(table(["messages, 1st round", *[f"{c.title}: cold (warm min-max) ms" for c in measured]], cold_body))
        out.append("")
    growth_rows = []
    shapes_ok = True
    for column in COLUMNS:
        factors = [rows[b][column.key] / rows[a][column.key] for a, b in zip(cfg.sizes, cfg.sizes[1:])]
        limit = FLAT_LIMIT if column.shape == "flat" else LINEAR_LIMIT
        ok = all(f <= limit for f in factors)
        shapes_ok = shapes_ok and ok
        verdict = "not judged" if quick else ("holds" if ok else "WORSE")
        growth_rows.append([column.title, column.shape, *[f"{f:.2f}x" for f in factors], f"<= {limit:g}x", verdict])
    decades = [f"{a:,} -> {b:,}" for a, b in zip(cfg.sizes, cfg.sizes[1:])]
    out.append("Growth per decade (cost at 10x the messages / cost):")
    out.append("")
    out.append(table(["cost", "must be", *decades, "limit", "verdict"], growth_rows))
    out.append("")
    last = rows[cfg.sizes[-1]]
    open_ms = last["open_s"] * MS
    goal_open = open_ms < GOAL_OPEN_MS
    goal_rss = last["hwm_mb"] < GOAL_RSS_MB
    held = shapes_ok and goal_open and goal_rss
    word = "not judged (--quick)" if quick else ("holds" if held else "missed")
    out.append(
        f"issue 14 · scaling at 10^{len(str(cfg.sizes[-1])) - 1}: {word} (costs flat or linear: "
        f"{'yes' if shapes_ok else 'no'}; window shows the last page in {open_ms:,.0f} ms, goal < {GOAL_OPEN_MS:.0f}; "
        f"window peak RSS after one open {last['hwm_mb']:,.0f} MB, goal < {GOAL_RSS_MB:.0f})"
    )
    return "\n".join(out), held


def window_only(cfg: Config, data: Path, subjects: list[Subject], scratch: Path, baseline: Path | None, rounds: int,
                machine: dict[str, str]) -> str:
    """The window's columns alone (the full run takes long at 10^5), this code and ``baseline`` alternately."""
    codes: list[tuple[str, Path | None]] = [("this code", None)] + ([(f"baseline ({baseline})", baseline)] if baseline else [])
    body = []
    for round_ in range(rounds):
        for name, source in codes:
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            for size, value in measure_window(cfg, data, subjects, scratch, source=source).items():
                opens = value["open_ms"]
                body.append([f"{round_ + 1}", name, f"{size:,}", f"{statistics.median(opens):,.0f} ({', '.join(f'{o:,.0f}' for o in opens)})",
                             f"{value['rss_at_last_page_mb']:.0f}", f"{value['rss_mb']:.0f} ({value['hwm_mb']:.0f})",
                             f"{value['rss_after_opens_mb']:.0f} ({value['hwm_after_opens_mb']:.0f})", load])
                print(f"round {round_ + 1}, {name}, {size:,}: {body[-1]}", file=sys.stderr, flush=True)
    header = ["round", "code", "messages", f"last page ms, median ({cfg.opens} opens)", "RSS at last page MB",
              "RSS MB (peak) after 1st open", f"after {cfg.opens} opens", "load average at start"]
    lines = [f"# The window alone (goal at 10^5: last page < {GOAL_OPEN_MS:.0f} ms, peak RSS < {GOAL_RSS_MB:.0f} MB)", "",
             table(["machine", ""], [[k, v] for k, v in machine.items()]), "", table(header, body)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10^2 and 10^3 messages only: a smoke run")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, the window in this process: its smoke test")
    parser.add_argument("--json", action="store_true", help="also print the raw results as JSON at the end")
    parser.add_argument("--data-dir", type=Path, help="where to make the scratch folder (default: the temp dir)")
    parser.add_argument("--sizes", help="comma-separated message counts instead of the default ones (e.g. 100000)")
    parser.add_argument("--window-only", action="store_true", help="measure only the window (last page, RSS)")
    parser.add_argument("--baseline", type=Path, help="with --window-only: also run the window on this checkout's code")
    parser.add_argument("--rounds", type=int, help="rounds of the in-process measurements (default 3, the 1st cold);"
                        " with --window-only: rounds of (this code, baseline), default 1")
    parser.add_argument("--opens", type=int, help="window opens per size")
    parser.add_argument("--_window", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._window:
        print(json.dumps(child_window(json.loads(args._window))))
        return 0
    cfg = SMOKE if args.smoke else QUICK if args.quick else FULL
    quick = args.quick or args.smoke
    if args.sizes:
        cfg = replace(cfg, sizes=tuple(int(size) for size in args.sizes.split(",")))
    if args.opens:
        cfg = replace(cfg, opens=args.opens)
    if args.rounds and not args.window_only:
        cfg = replace(cfg, rounds=args.rounds)
    if args.data_dir:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="crewagent-bench-scaling-", dir=args.data_dir))
    progress = (lambda message: print(message, file=sys.stderr, flush=True))
    try:
        machine = machine_info(scratch)
        machine.pop("openai-agents", None)
        machine["load average (start)"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
        started = time.perf_counter()
        data, subjects = generate(cfg, scratch)
        progress(f"generated {sum(s.file_bytes for s in subjects) / 1e6:.0f} MB of logs in {time.perf_counter() - started:.1f} s")
        if args.window_only:
            text = window_only(cfg, data, subjects, scratch, args.baseline, args.rounds or 1, machine)
            machine["load average (end)"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
            print(text + f"\n\nload average at the end: {machine['load average (end)']}")
            return 0
        rows = measure_core(cfg, data, subjects, progress)
        for subject in subjects:
            rows[subject.size]["file_bytes"] = subject.file_bytes
        progress("the window ...")
        for size, value in measure_window(cfg, data, subjects, scratch, here=args.smoke).items():
            rows[size].update(open_s=statistics.median(value["open_ms"]) / MS, open_ms=value["open_ms"],
                              **{k: v for k, v in value.items() if k != "open_ms"})
        progress("appends ...")
        for size, p50 in measure_appends(cfg, data, subjects).items():
            rows[size]["append_s"] = p50
        machine["load average (end)"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
        text, _ = report(cfg, quick, machine, rows)
        print(text)
        if args.json:
            print(json.dumps({"quick": quick, "machine": machine, "rows": {str(k): v for k, v in rows.items()}}))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
