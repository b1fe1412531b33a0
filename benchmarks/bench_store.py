#!/usr/bin/env python3
"""Runtime store benchmark (issue 2, "Performance"); results are recorded in docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_store.py            # full run, a few minutes on 2 cores
    .venv/bin/python benchmarks/bench_store.py --quick    # tiny sizes: a smoke run
    .venv/bin/python benchmarks/bench_store.py --smoke    # --quick, the RSS probe in this process: the tests
    make bench                                            # installs the `bench` extra, full run

Three measurements, each printed as a Markdown table:

1. Append latency (one ``RuntimeStore.append_message``, fsync'd as the store always does) into a
   conversation of 10 messages and one of 10,000 messages. Goal: within 2x of each other. With
   them, in shuffled rounds, the bare write + fdatasync of the same lines (the floor with no
   other neighbours, for reference).
2. Side by side at 1k and 10k existing messages, interleaved round by round (the same message
   for all, in a shuffled order each round) so that machine noise, and the disk work a neighbour
   leaves behind, hits every configuration alike: this store; the bare write + fdatasync floor;
   the original design (the whole ``messages.json`` array rewritten atomically on every append:
   tmp file, fsync, rename, dir fsync); openai-agents' ``SQLiteSession.add_items`` of one item on a file-backed database
   (its own settings: WAL journal, SQLite's default ``synchronous``, read back and printed).
   Goals: >= 20x faster than the original design at 10k, and not slower than SQLiteSession.
3. Loading a 10,000-message conversation holding 200 inline tool results of 40 KB: time (goal
   < 0.5 s), MB/s, peak memory with tracemalloc relative to the file size (goal < 3x), and the
   peak-RSS delta of a fresh child process (reported, not the goal: it includes allocator slack).

Pre-filled conversations are written to ``messages.jsonl`` in bulk (the same encoder the store
uses), then the index is made consistent through ``RuntimeStore.update_conversation`` and the
load is checked (message count, no damaged lines). Nothing here is a timed test: the numbers
depend on the machine and on its neighbours; the machine is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

from crewagent.core.messages import ConversationMessage
from crewagent.core.store import TOOL_OUTPUT_THRESHOLD, RuntimeStore
from crewagent.core.store.log import encode_message

MS = 1000.0
BARE = "bare write + fdatasync (floor)"


# -- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    small: int  # section 1: the short conversation
    large: int  # section 1: the long conversation
    side_sizes: tuple[int, ...]  # section 2
    appends: int  # timed appends per configuration (this store, SQLiteSession)
    original_appends: dict[int, int]  # timed appends of the original design, by size
    warmup: int
    load_messages: int
    load_tool_results: int
    tool_result_bytes: int
    load_repeats: int


FULL = Config(
    small=10,
    large=10_000,
    side_sizes=(1_000, 10_000),
    appends=200,
    original_appends={1_000: 100, 10_000: 40},
    warmup=5,
    load_messages=10_000,
    load_tool_results=200,
    tool_result_bytes=40 * 1024,
    load_repeats=5,
)

QUICK = Config(
    small=10,
    large=200,
    side_sizes=(50, 200),
    appends=8,
    original_appends={50: 4, 200: 4},
    warmup=1,
    load_messages=200,
    load_tool_results=4,
    tool_result_bytes=40 * 1024,
    load_repeats=1,
)


# -- realistic messages -----------------------------------------------------------------------

_WORDS = (
    "the store appends one line per message and fsyncs it before returning so a crash never "
    "loses an acknowledged message while the tool loop keeps the protocol complete after "
    "every restart résumé naïve → ✓ build test deploy read write project artifacts workflow"
).split()


def _text(rng: random.Random, chars: int) -> str:
    # Words drawn in batches (``choices``), not one ``choice`` each: a tenth of the calls.
    words: list[str] = []
    while True:
        words += rng.choices(_WORDS, k=chars // 5 + 2)  # the words average 6 characters with their space
        text = " ".join(words)
        if len(text) >= chars:
            return text[:chars]


class MessageFactory:
    """A deterministic stream shaped like an agent conversation.

    Repeating turn of four: user text (~300 chars), assistant tool call, tool result (~1.5 KB),
    assistant answer (~700 chars); about 0.9 KB per log line on average.
    """

    def __init__(self, seed: int = 2):
        self.rng = random.Random(seed)
        self.n = 0

    def next(self) -> ConversationMessage:
        rng, n = self.rng, self.n
        self.n += 1
        call_id = f"call_{n // 4:08d}"
        kind = n % 4
        if kind == 0:
            return ConversationMessage.new("user", _text(rng, rng.randint(150, 450)), mode="agent")
        if kind == 1:
            args = json.dumps({"path": f"@project/src/module_{n % 97}.py", "query": _text(rng, 120)})
            return ConversationMessage.new(
                "assistant",
                None,
                tool_calls=[{"id": call_id, "type": "function", "function": {"name": "fs.read", "arguments": args}}],
                partType="tool_start",
                mode="agent",
            )
        if kind == 2:
            return self.tool_result(call_id, rng.randint(800, 2200))
        return ConversationMessage.new("assistant", _text(rng, rng.randint(400, 1000)), mode="agent")

    def tool_result(self, call_id: str, chars: int) -> ConversationMessage:
        return ConversationMessage.new(
            "tool",
            _text(self.rng, chars),
            tool_call_id=call_id,
            toolName="fs.read",
            partType="tool_result",
            duration=12.5,
            mode="agent",
        )

    def batch(self, count: int) -> list[ConversationMessage]:
        return [self.next() for _ in range(count)]


# -- statistics and tables --------------------------------------------------------------------


def percentile(samples: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class Latency:
    name: str
    existing: int
    samples: list[float] = field(default_factory=list)  # seconds
    note: str = ""

    @property
    def p50(self) -> float:
        return percentile(self.samples, 50)

    @property
    def p99(self) -> float:
        return percentile(self.samples, 99)

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else float("nan")

    def row(self) -> list[str]:
        if not self.samples:
            return [self.name, f"{self.existing:,}", "0", "-", "-", "-", self.note]
        return [
            self.name,
            f"{self.existing:,}",
            str(len(self.samples)),
            f"{self.p50 * MS:.3f}",
            f"{self.p99 * MS:.3f}",
            f"{self.mean * MS:.3f}",
            self.note,
        ]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "existing": self.existing, "n": len(self.samples)}
        if self.samples:
            data.update(p50_ms=self.p50 * MS, p99_ms=self.p99 * MS, mean_ms=self.mean * MS)
        if self.note:
            data["note"] = self.note
        return data


LATENCY_HEADER = ["configuration", "existing msgs", "appends", "p50 ms", "p99 ms", "mean ms", "note"]


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def _verdict(ok: bool) -> str:
    return "HOLDS" if ok else "MISSED"


def _not_judged(ok: bool) -> str:
    return "not judged (--quick)"


# -- machine ----------------------------------------------------------------------------------


def _first(path: str, prefix: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "unknown"


def machine_info(data_dir: Path) -> dict[str, str]:
    try:
        df = subprocess.run(["df", "-T", str(data_dir)], capture_output=True, text=True, timeout=10).stdout
        fs_type = df.splitlines()[1].split()[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        fs_type = "unknown"
    mem_kb = _first("/proc/meminfo", "MemTotal")
    try:
        mem = f"{int(mem_kb.split()[0]) / 1024 / 1024:.1f} GiB"
    except (ValueError, IndexError):
        mem = mem_kb
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    try:
        from importlib.metadata import version

        agents_version = version("openai-agents")
    except Exception:  # noqa: BLE001 - an optional baseline
        agents_version = "not installed"
    import pydantic

    return {
        "cpus (nproc)": str(usable),
        "cpu model": _first("/proc/cpuinfo", "model name"),
        "ram": mem,
        "data dir": str(data_dir),
        "data dir filesystem (df -T)": fs_type,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "os": f"{_first('/etc/os-release', 'PRETTY_NAME=')} ({platform.system()} {platform.release()})",
        "pydantic": pydantic.VERSION,
        "sqlite": sqlite3.sqlite_version,
        "openai-agents": agents_version,
    }


# -- fixtures ---------------------------------------------------------------------------------


def prefilled_conversation(
    store: RuntimeStore, project_id: str, title: str, messages: list[ConversationMessage]
) -> str:
    """A conversation whose log is written in bulk, its index entry fixed through the store API."""
    meta = store.create_conversation(project_id, title=title)
    log_path = store.log_path(project_id, meta.id)
    with open(log_path, "wb") as handle:
        for message in messages:
            handle.write(encode_message(message))
        handle.flush()
        os.fsync(handle.fileno())
    store.update_conversation(
        project_id,
        meta.id,
        messageCount=len(messages),
        lastActiveAt=messages[-1].createdAt if messages else meta.lastActiveAt,
    )
    return meta.id


class OriginalDesign:
    """The original Electron app: the whole messages.json array rewritten on every append.

    Generous to it: the array stays in memory (no re-read per append) and is written compact;
    each append is serialise, tmp file, write, fsync, rename over, fsync the directory.
    """

    def __init__(self, folder: Path, messages: list[ConversationMessage]):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "messages.json"
        self.items = [message.to_log_dict() for message in messages]
        self._write()

    def append(self, message: ConversationMessage) -> None:
        self.items.append(message.to_log_dict())
        self._write()

    def _write(self) -> None:
        data = json.dumps(self.items, ensure_ascii=False).encode("utf-8")
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def sqlite_settings(db_path: Path) -> dict[str, Any]:
    """What SQLiteSession runs with: its journal mode (persistent in the file) and the defaults."""
    with sqlite3.connect(db_path) as conn:
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
    return {"journal_mode": journal, "synchronous": f"{names.get(sync, sync)} ({sync})"}


# -- section 1: append latency, short vs long -------------------------------------------------


def bench_append_scaling(cfg: Config, root: Path) -> dict[str, Any]:
    store = RuntimeStore(root / "data-append")
    project = store.create_project(root / "project-append", "bench append")
    factory = MessageFactory(seed=1)
    convs = {
        size: prefilled_conversation(store, project.id, f"{size} messages", factory.batch(size))
        for size in (cfg.small, cfg.large)
    }
    results = {size: Latency("this store", size) for size in convs}
    # The floor without neighbours: the same line, a file of the log's size, the same rounds.
    floors = {size: Latency(BARE, size) for size in convs}
    bares = {}
    for size, conversation_id in convs.items():
        log_path = store.log_path(project.id, conversation_id)
        bares[size] = BareAppend(log_path.with_name("bare.jsonl"), prefill=log_path)
    feed = MessageFactory(seed=11)
    order_rng = random.Random(12)
    # Every configuration once per round, in a shuffled order, so that a noisy neighbour slows all alike.
    for round_ in range(cfg.warmup + cfg.appends):
        messages = {size: feed.next() for size in convs}
        jobs = [(size, floor) for size in convs for floor in (False, True)]
        order_rng.shuffle(jobs)
        for size, floor in jobs:
            line = encode_message(messages[size]) if floor else b""
            start = time.perf_counter()
            if floor:
                bares[size].append(line)
            else:
                store.append_message(project.id, convs[size], messages[size])
            elapsed = time.perf_counter() - start
            if round_ >= cfg.warmup:
                (floors if floor else results)[size].samples.append(elapsed)
    for bare in bares.values():
        bare.close()
    for size, conversation_id in convs.items():
        loaded = store.load_messages(project.id, conversation_id)
        expected = size + cfg.warmup + cfg.appends
        assert len(loaded.messages) == expected and not loaded.problems, (len(loaded.messages), expected)
        assert store.get_conversation(project.id, conversation_id).messageCount == expected
    small, large = results[cfg.small], results[cfg.large]
    ratio_p50 = large.p50 / small.p50
    ratio_p99 = large.p99 / small.p99
    ratio_mean = large.mean / small.mean
    return {
        "rows": [small, large],
        "floor_rows": [floors[cfg.small], floors[cfg.large]],
        "ours_over_bare": {size: results[size].p50 / floors[size].p50 for size in convs},
        "ratio_p50": ratio_p50,
        "ratio_p99": ratio_p99,
        "ratio_mean": ratio_mean,
        "goal": ratio_p50 <= 2.0 and ratio_mean <= 2.0,
    }


def profile_appends(cfg: Config, root: Path) -> str:
    """cProfile of appends into the long conversation: where an append's time goes (--profile)."""
    import cProfile
    import io
    import pstats

    store = RuntimeStore(root / "data-profile")
    project = store.create_project(root / "project-profile", "bench profile")
    conversation_id = prefilled_conversation(store, project.id, "profile", MessageFactory(seed=5).batch(cfg.large))
    feed = MessageFactory(seed=55)
    for _ in range(cfg.warmup):
        store.append_message(project.id, conversation_id, feed.next())
    messages = feed.batch(cfg.appends)
    profiler = cProfile.Profile()
    profiler.enable()
    for message in messages:
        store.append_message(project.id, conversation_id, message)
    profiler.disable()
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats("tottime").print_stats(12)
    stats.sort_stats("cumulative").print_stats(r"crewagent", 12)
    return buffer.getvalue()


# -- section 2: side by side ------------------------------------------------------------------


@dataclass
class Contender:
    latency: Latency
    append: Callable[[ConversationMessage], Any]  # sync, or async (returns an awaitable)
    every: int = 1  # time an append only every N-th round
    is_async: bool = False
    prepare: Callable[[ConversationMessage], Any] | None = None  # untimed: what ``append`` is given


class BareAppend:
    """The physical floor of one durable append: ``write`` + ``fdatasync`` of the already encoded
    line on a descriptor kept open, in the same folder as the store's log (issue 14's baseline).

    ``prefill``: the file starts as a copy of the store's log, so that both files have the same
    size and grow alike (a fair floor: same line, same folder, same file size, same rounds).
    """

    def __init__(self, path: Path, prefill: Path | None = None):
        if prefill is not None:
            shutil.copyfile(prefill, path)
            with open(path, "rb+") as handle:
                os.fsync(handle.fileno())
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def append(self, line: bytes) -> None:
        os.write(self.fd, line)
        getattr(os, "fdatasync", os.fsync)(self.fd)

    def close(self) -> None:
        os.close(self.fd)


async def _run_side_by_side(cfg: Config, contenders: list[Contender], warmup: int) -> None:
    """Every contender appends the same message once per round, in a new random order each round.

    The order matters on a disk that discards freed blocks (ext4 mounted with ``discard``, as
    here): the original design's rename-over frees its old ``messages.json`` (1 or 10 MB), the
    discard of those blocks runs after the journal commit, and the next ``fdatasync`` on the disk,
    whoever makes it, waits behind it. With a fixed order the same contender always came next
    (this store at 10,000 messages after the original design at 1,000, every second round), so it
    paid for its neighbour and the bare floor, always run right after the store, never did. A
    seeded shuffle gives every contender the same chance to follow each neighbour.
    """
    feed = MessageFactory(seed=22)
    order_rng = random.Random(23)
    for round_ in range(warmup + cfg.appends):
        message = feed.next()  # the same line for every contender of the round
        order = list(contenders)
        order_rng.shuffle(order)
        for contender in order:
            if round_ >= warmup and (round_ - warmup) % contender.every:
                continue
            if round_ < warmup and round_ >= 2 and contender.every > 1:
                continue  # the slow original design: two warm-up appends are plenty
            item = message if contender.prepare is None else contender.prepare(message)
            start = time.perf_counter()
            if contender.is_async:
                await contender.append(item)
            else:
                contender.append(item)
            elapsed = time.perf_counter() - start
            if round_ >= warmup:
                contender.latency.samples.append(elapsed)


def bench_side_by_side(cfg: Config, root: Path) -> dict[str, Any]:
    store = RuntimeStore(root / "data-side")
    project = store.create_project(root / "project-side", "bench side by side")
    contenders: list[Contender] = []
    sqlite_info: dict[str, Any] = {}
    try:
        from agents import SQLiteSession
    except ImportError:
        SQLiteSession = None  # noqa: N806
    sessions: list[Any] = []
    bares: list[BareAppend] = []
    skipped: list[Latency] = []

    for size in cfg.side_sizes:
        history = MessageFactory(seed=100 + size).batch(size)
        conversation_id = prefilled_conversation(store, project.id, f"{size} messages", history)
        contenders.append(
            Contender(
                Latency("this store", size),
                lambda m, c=conversation_id: store.append_message(project.id, c, m),
            )
        )

        log_path = store.log_path(project.id, conversation_id)
        bare = BareAppend(log_path.with_name("bare.jsonl"), prefill=log_path)
        bares.append(bare)
        contenders.append(Contender(Latency(BARE, size), bare.append, prepare=encode_message))

        async def via_thread(m: ConversationMessage, c: str = conversation_id) -> None:
            await asyncio.to_thread(store.append_message, project.id, c, m)

        conversation_id_t = prefilled_conversation(store, project.id, f"{size} messages (thread)", history)
        contenders.append(
            Contender(
                Latency("this store via asyncio.to_thread", size),
                lambda m, c=conversation_id_t: via_thread(m, c),
                is_async=True,
            )
        )
        original = OriginalDesign(root / f"original-{size}", history)
        every = max(1, cfg.appends // cfg.original_appends[size])
        contenders.append(
            Contender(Latency("original design (rewrite messages.json)", size), original.append, every=every)
        )
        if SQLiteSession is not None:
            db_path = root / f"sqlite-{size}.db"
            session = SQLiteSession(f"bench-{size}", db_path)
            sessions.append(session)
            asyncio.run(session.add_items([m.to_log_dict() for m in history]))
            sqlite_info = sqlite_settings(db_path)
            contenders.append(
                Contender(
                    Latency("openai-agents SQLiteSession.add_items", size),
                    lambda m, s=session: s.add_items([m.to_log_dict()]),
                    is_async=True,
                )
            )
        else:
            skipped.append(
                Latency("openai-agents SQLiteSession.add_items", size, note="skipped: openai-agents not installed")
            )

    # Every configuration gets the same rounds; the original design only every N-th round.
    async def run() -> None:
        await _run_side_by_side(cfg, contenders, cfg.warmup)

    asyncio.run(run())
    for session in sessions:
        session.close()
    for bare in bares:
        bare.close()

    rows = sorted([c.latency for c in contenders] + skipped, key=lambda r: r.existing)
    by = {(r.name, r.existing): r for r in rows}
    big = max(cfg.side_sizes)
    ours_big = by[("this store", big)]
    orig_big = by[("original design (rewrite messages.json)", big)]
    speedup_p50 = orig_big.p50 / ours_big.p50
    speedup_mean = orig_big.mean / ours_big.mean
    vs_bare = {size: by[("this store", size)].p50 / by[(BARE, size)].p50 for size in cfg.side_sizes}
    vs_sqlite = {}
    for size in cfg.side_sizes:
        sq = by[("openai-agents SQLiteSession.add_items", size)]
        if sq.samples:
            ours = by[("this store", size)]
            thread = by[("this store via asyncio.to_thread", size)]
            vs_sqlite[size] = {
                "p50": ours.p50 / sq.p50,
                "mean": ours.mean / sq.mean,
                "p99": ours.p99 / sq.p99,
                "to_thread_p50": thread.p50 / sq.p50,
            }
    return {
        "rows": rows,
        "speedup_vs_original_p50": speedup_p50,
        "speedup_vs_original_mean": speedup_mean,
        "goal_original": speedup_p50 >= 20.0,
        "ours_over_sqlite": vs_sqlite,
        "goal_sqlite": (all(v["p50"] <= 1.0 for v in vs_sqlite.values()) if vs_sqlite else None),
        "ours_over_bare": vs_bare,
        "goal_bare": all(ratio <= 1.5 for ratio in vs_bare.values()),
        "sqlite_settings": sqlite_info,
    }


# -- section 3: load --------------------------------------------------------------------------


def build_load_fixture(cfg: Config, root: Path) -> tuple[Path, str, str, int]:
    data_dir = root / "data-load"
    store = RuntimeStore(data_dir)
    project = store.create_project(root / "project-load", "bench load")
    factory = MessageFactory(seed=3)
    messages = factory.batch(cfg.load_messages)
    tool_positions = [i for i, m in enumerate(messages) if m.role == "tool"]
    step = max(1, len(tool_positions) // cfg.load_tool_results)
    chosen = tool_positions[::step][: cfg.load_tool_results]
    assert len(chosen) == cfg.load_tool_results, "not enough tool messages for the big results"
    for i in chosen:
        old = messages[i]
        big = factory.tool_result(old.tool_call_id or "call", cfg.tool_result_bytes)
        assert len(big.text.encode("utf-8")) <= TOOL_OUTPUT_THRESHOLD  # stays inline
        messages[i] = big
    conversation_id = prefilled_conversation(store, project.id, "load", messages)
    size = store.log_path(project.id, conversation_id).stat().st_size
    return data_dir, project.id, conversation_id, size


def _load_once(data_dir: Path, project_id: str, conversation_id: str) -> Any:
    return RuntimeStore(data_dir).load_messages(project_id, conversation_id)


def bench_load(cfg: Config, root: Path, rss_here: bool = False) -> dict[str, Any]:
    data_dir, project_id, conversation_id, file_size = build_load_fixture(cfg, root)
    check = _load_once(data_dir, project_id, conversation_id)
    assert len(check.messages) == cfg.load_messages and not check.problems
    inline_big = sum(1 for m in check.messages if m.role == "tool" and len(m.text) >= cfg.tool_result_bytes)
    assert inline_big == cfg.load_tool_results and not any(m.is_offloaded for m in check.messages)
    del check
    gc.collect()

    times = []
    for _ in range(cfg.load_repeats):
        gc.collect()
        start = time.perf_counter()
        result = _load_once(data_dir, project_id, conversation_id)
        times.append(time.perf_counter() - start)
        del result
    median = percentile(times, 50)

    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = _load_once(data_dir, project_id, conversation_id)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result

    rss = _rss_here(data_dir, project_id, conversation_id) if rss_here else _rss_in_child(data_dir, project_id, conversation_id)
    return {
        "messages": cfg.load_messages,
        "tool_results": cfg.load_tool_results,
        "tool_result_bytes": cfg.tool_result_bytes,
        "file_bytes": file_size,
        "times_s": times,
        "median_s": median,
        "best_s": min(times),
        "mb_per_s": file_size / 1e6 / median,
        "tracemalloc_peak_bytes": peak,
        "tracemalloc_retained_bytes": current,
        "peak_over_file": peak / file_size,
        "rss_delta_bytes": rss["delta"] if rss else None,
        "rss_source": rss["source"] if rss else None,
        "goal_time": median < 0.5,
        "goal_memory": peak / file_size < 3.0,
    }


def _rss_in_child(data_dir: Path, project_id: str, conversation_id: str) -> dict[str, Any] | None:
    """Peak-RSS growth of one load in a fresh process (ru_maxrss is a process-wide high-water mark)."""
    if not hasattr(resource, "getrusage"):
        return None
    proc = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(data_dir), project_id, conversation_id],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rss_here(data_dir: Path, project_id: str, conversation_id: str) -> dict[str, Any]:
    """``--smoke``: the child's probe run in this process, its output read as the parent reads the
    child's. The figure means nothing (this process's high-water mark is older than the load);
    the smoke test only proves that the section runs without a new interpreter (~0.4 CPU-s)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rss_child(str(data_dir), project_id, conversation_id)
    result: dict[str, Any] = json.loads(out.getvalue().strip().splitlines()[-1])
    return result


def _peak_rss_bytes() -> tuple[int, str]:
    """The process's peak RSS so far, and where it was read from.

    On Linux, VmHWM from /proc/self/status: getrusage's ru_maxrss survives fork + exec, so a child
    started by a big parent would report the parent's high-water mark and a delta of zero.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024, "VmHWM"
    except (OSError, ValueError):
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale, "ru_maxrss"


def rss_child(data_dir: str, project_id: str, conversation_id: str) -> None:
    gc.collect()
    before, _ = _peak_rss_bytes()
    result = _load_once(Path(data_dir), project_id, conversation_id)
    after, source = _peak_rss_bytes()
    assert result.messages
    print(json.dumps({"delta": after - before, "source": source}))


# -- report -----------------------------------------------------------------------------------


def report(cfg: Config, quick: bool, machine: dict[str, str], s1: dict, s2: dict, s3: dict) -> str:
    verdict = _not_judged if quick else _verdict
    out: list[str] = []
    out.append(f"# Runtime store benchmark{' (--quick: tiny sizes, figures meaningless)' if quick else ''}")
    out.append("")
    out.append(table(["machine", ""], [[k, v] for k, v in machine.items()]))
    out.append("")
    out.append(f"## 1. Append latency: {cfg.small:,} vs {cfg.large:,} existing messages (fsync'd, interleaved)")
    out.append("")
    out.append(table(LATENCY_HEADER, [r.row() for r in [*s1["rows"], *s1["floor_rows"]]]))
    out.append("")
    out.append(
        f"long/short: p50 {s1['ratio_p50']:.2f}x, mean {s1['ratio_mean']:.2f}x, p99 {s1['ratio_p99']:.2f}x "
        f"-> goal 'within 2x' (p50 and mean): {verdict(s1['goal'])}"
    )
    out.append(
        "this store / bare write + fdatasync, no other neighbours (p50, for reference; issue 14's verdict "
        "is section 2's): " + ", ".join(f"{size:,}: {ratio:.2f}x" for size, ratio in s1["ours_over_bare"].items())
    )
    out.append("")
    out.append(f"## 2. Side by side at {' and '.join(f'{s:,}' for s in cfg.side_sizes)} existing messages")
    out.append("")
    out.append(table(LATENCY_HEADER, [r.row() for r in s2["rows"]]))
    out.append("")
    settings = s2["sqlite_settings"]
    if settings:
        out.append(
            f"SQLiteSession durability: file-backed db, journal_mode={settings['journal_mode']} (set by "
            f"SQLiteSession), synchronous={settings['synchronous']} (SQLite's default, not changed by "
            "SQLiteSession): each commit fsyncs the WAL once."
        )
    big = max(cfg.side_sizes)
    out.append(
        f"vs original design at {big:,}: {s2['speedup_vs_original_p50']:.1f}x faster (p50), "
        f"{s2['speedup_vs_original_mean']:.1f}x (mean) -> goal '>= 20x': {verdict(s2['goal_original'])}"
    )
    if s2["ours_over_sqlite"]:
        parts = ", ".join(
            f"{size:,}: p50 {v['p50']:.2f}x, mean {v['mean']:.2f}x, p99 {v['p99']:.2f}x "
            f"(via to_thread p50 {v['to_thread_p50']:.2f}x)"
            for size, v in s2["ours_over_sqlite"].items()
        )
        out.append(
            f"this store / SQLiteSession (< 1 = faster): {parts} -> goal 'not slower' (p50): "
            f"{verdict(bool(s2['goal_sqlite']))}"
        )
    else:
        out.append("SQLiteSession: skipped (install the bench extra: pip install -e '.[test,bench]')")
    out.append(
        "this store / bare write + fdatasync of the same line (p50): "
        + ", ".join(f"{size:,}: {ratio:.2f}x" for size, ratio in s2["ours_over_bare"].items())
        + f" -> goal '<= 1.5x': {verdict(s2['goal_bare'])}"
    )
    out.append("")
    out.append(issue14_verdict(quick, s2))
    out.append("")
    out.append(
        f"## 3. Load: {s3['messages']:,} messages, {s3['tool_results']} inline tool results of "
        f"{s3['tool_result_bytes'] // 1024} KB"
    )
    out.append("")
    rss = s3["rss_delta_bytes"]
    out.append(
        table(
            ["file MB", "load median s", "best s", "runs", "MB/s", "tracemalloc peak MB", "peak / file", "retained MB", f"peak RSS delta MB ({s3['rss_source'] or 'n/a'})"],
            [
                [
                    f"{s3['file_bytes'] / 1e6:.1f}",
                    f"{s3['median_s']:.3f}",
                    f"{s3['best_s']:.3f}",
                    str(len(s3["times_s"])),
                    f"{s3['mb_per_s']:.1f}",
                    f"{s3['tracemalloc_peak_bytes'] / 1e6:.1f}",
                    f"{s3['peak_over_file']:.2f}x",
                    f"{s3['tracemalloc_retained_bytes'] / 1e6:.1f}",
                    "n/a" if rss is None else f"{rss / 1e6:.1f} ({rss / s3['file_bytes']:.2f}x)",
                ]
            ],
        )
    )
    out.append("")
    out.append(
        f"goal 'load < 0.5 s' (median): {verdict(s3['goal_time'])}; goal 'peak memory < 3x the file' "
        f"(tracemalloc peak; RSS delta in a fresh process shown for reference): {verdict(s3['goal_memory'])}"
    )
    return "\n".join(out)


def issue14_verdict(quick: bool, s2: dict) -> str:
    """Issue 14's one line about appends: within 1.5x of a bare durable write, not slower than SQLiteSession."""
    bare = ", ".join(f"{size:,} {ratio:.2f}x" for size, ratio in s2["ours_over_bare"].items())
    sqlite = ", ".join(f"{size:,} {v['p50']:.2f}x" for size, v in s2["ours_over_sqlite"].items()) or "not measured"
    ok = s2["goal_bare"] and bool(s2["goal_sqlite"])
    word = "not judged (--quick)" if quick else ("holds" if ok else "missed")
    return (
        f"issue 14 · appends: {word} (p50 of this store / bare write+fdatasync: {bare}, goal <= 1.5x; "
        f"/ SQLiteSession.add_items: {sqlite}, goal <= 1x)"
    )


def to_json(cfg: Config, quick: bool, machine: dict, s1: dict, s2: dict, s3: dict) -> dict[str, Any]:
    def clean(section: dict) -> dict:
        return {k: ([r.to_json() for r in v] if k in ("rows", "floor_rows") else v) for k, v in section.items()}

    s1_clean = clean(s1)
    s1_clean["ours_over_bare"] = {str(k): v for k, v in s1["ours_over_bare"].items()}
    s2_clean = clean(s2)
    s2_clean["ours_over_sqlite"] = {str(k): v for k, v in s2["ours_over_sqlite"].items()}
    s2_clean["ours_over_bare"] = {str(k): v for k, v in s2["ours_over_bare"].items()}
    return {
        "quick": quick,
        "machine": machine,
        "append_scaling": s1_clean,
        "side_by_side": s2_clean,
        "load": s3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run (figures meaningless)")
    parser.add_argument("--smoke", action="store_true",
                        help="--quick, and section 3's RSS probe in this process, not a new one (the tests)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    parser.add_argument("--json-file", type=Path, help="also write the results as JSON to this file (the tables still print)")
    parser.add_argument("--data-dir", help="where to create the scratch data (default: a temp dir); "
                        "its filesystem decides the fsync cost")
    parser.add_argument("--keep", action="store_true", help="keep the scratch data")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the long-conversation appends")
    parser.add_argument("--rss-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:
        rss_child(*args.rss_child)
        return 0
    args.quick = args.quick or args.smoke

    cfg = QUICK if args.quick else FULL
    parent = Path(args.data_dir).expanduser().resolve() if args.data_dir else None
    if parent:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="crewagent-bench-", dir=parent))
    try:
        machine = machine_info(root)
        progress = (lambda *a: None) if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
        progress("1/3 append latency, short vs long conversation ...")
        s1 = bench_append_scaling(cfg, root)
        progress("2/3 side by side: this store, original design, SQLiteSession ...")
        s2 = bench_side_by_side(cfg, root)
        progress("3/3 load ...")
        s3 = bench_load(cfg, root, rss_here=args.smoke)
        if args.json:
            print(json.dumps(to_json(cfg, args.quick, machine, s1, s2, s3), indent=2))
        else:
            print(report(cfg, args.quick, machine, s1, s2, s3))
        if args.json_file:
            args.json_file.write_text(json.dumps(to_json(cfg, args.quick, machine, s1, s2, s3), indent=2), encoding="utf-8")
        if args.profile:
            progress("profile ...")
            print("\n## Profile: appends into the long conversation\n", file=sys.stderr if args.json else sys.stdout)
            print(profile_appends(cfg, root), file=sys.stderr if args.json else sys.stdout)
    finally:
        if args.keep:
            print(f"scratch data kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
