#!/usr/bin/env python3
"""Run-mode overhead benchmark (issue 16, "Performance"); results are recorded in docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_run.py            # full run
    .venv/bin/python benchmarks/bench_run.py --quick    # a few rounds: a smoke run for the tests
    .venv/bin/python benchmarks/bench_run.py --json     # machine-readable results

A run turn's own overhead over a chat turn, side by side against the same local
OpenAI-compatible server (answers pre-encoded, sent at once), with the real RuntimeStore. Both
modes go through ``core.turns.run_turn``, the one entry point of the app and the CLI: a chat turn
pays for its own set-up there (the conversation, the agent of the mode), a run turn for its own
(the conversation's active run looked up in the runs index, the installed package from the
process's cache, ``prepare_run``: the state read and parsed, the turn marked running).

- ``text``: the model answers with 60 text chunks. Chat: a chat-mode turn. Run: the same in Run
  mode: the persona and RUN_DIRECTIVE / NODE_BRIEF / USER_INPUT rebuilt before the call, the
  phase persisted in the runs index at the end when it changed.
- ``state write``: the model calls ``fs.apply_patch`` with ``updateFrontmatter`` once, then
  answers. Chat: the patch goes to an ordinary Markdown file. Run: to the run's state, through
  the guard (schema, graph successors, stepsCompleted), followed by a ``RunProgress`` event (from
  the state the patch reports it wrote; other writes of the state are read back). The chat's file
  is written before its first turn as ``create_run`` writes the run's state: atomically, fsync'd.

Each round makes a fresh conversation (and, in Run mode, a fresh run) outside the timing and
times two turns in it: the **first** turn (a chat's first turn names and indexes the
conversation; a run's first turn moves the run from ``idle`` to ``waiting-user``, one rewrite of
the runs index) and the **next** one (the run stays ``waiting-user``). **Run overhead = run turn
- chat turn** (goal < 5 ms), in wall time and in the CPU time the process spent in the turn (all
its threads: the server's work is the same in both modes, and CPU time does not count the waits
for a core that a loaded machine adds). The order of the configurations rotates from round to round. On a
loaded machine the difference of two ~100 ms turns is noisy, so the run's own steps are also
timed directly, per turn: the run's lookup in the runs index, ``prepare_run``, the run context
before each model call, the state guard, the state read back after a write (0 for a frontmatter
patch), and the end of the turn (the runs index and the marker).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

from _timing import Series  # benchmarks/ is on sys.path when a script runs

from crewagent.core.llm import ProviderConfig
from crewagent.core.llm.local_server import LocalServer, Raw, RecordedRequest, Reply, SseReply
from crewagent.core.loop import RunProgress, TurnFinished
from crewagent.core.packages import PackageStore
from crewagent.core.runs import create_run
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.core.run_helpers import write_package  # noqa: E402  (the three-node package of the tests)

MS = 1000.0
KINDS = ("text", "state write")
TURNS = ("first", "next")
MODES = ("chat", "run")
#: What the model writes in the state (or the chat's Markdown file) on the first and the next turn.
UPDATES = ({"currentNodeId": "check", "stepsCompleted": ["write"]}, {"currentNodeId": "done", "stepsCompleted": ["write", "check"]})
GOAL_MS = 5.0


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "b", "object": "chat.completion.chunk", "created": 0, "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


TEXT_SSE = b"".join([_chunk({"role": "assistant", "content": ""}), *(_chunk({"content": f"w{i} "}) for i in range(60)), _chunk({}, "stop")])


class Responder:
    """A tool call to ``patch_path`` when the last message is the user's, else the text answer."""

    def __init__(self) -> None:
        self.patch_path = ""
        self.update: dict[str, Any] = {}

    def list_models(self, request: RecordedRequest) -> Reply:
        return SseReply([Raw(b"")])

    def chat_completion(self, request: RecordedRequest) -> Reply:
        last = request.body["messages"][-1]
        if last["role"] == "tool" or not self.patch_path:
            return SseReply([Raw(TEXT_SSE)])
        args = json.dumps({"path": self.patch_path, "updateFrontmatter": self.update})
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "fs_apply_patch", "arguments": args}}
        return SseReply([Raw(_chunk({"role": "assistant", "content": None}) + _chunk({"tool_calls": [call]}) + _chunk({}, "tool_calls"))])


async def _turn(store: RuntimeStore, project: ProjectInfo, config: ProviderConfig, config_dir: Path, cid: str, mode: str) -> tuple[float, float]:
    """The turn's wall time and the CPU time the process spent in it (all threads, the server's too)."""
    started, cpu = time.perf_counter(), time.process_time()
    finished = None
    progress = 0
    turn = run_turn(
        store, project, cid, "go on", mode=mode, settings=Settings(), config=config,
        hooks=TurnHooks(approver=AutoApprover()), config_dir=config_dir,
    )
    async with aclosing(turn) as events:
        async for event in events:
            if isinstance(event, TurnFinished):
                finished = event
            progress += isinstance(event, RunProgress)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert finished is not None and finished.reason in ("completed", "waiting_user"), finished
    return elapsed, cpu


class StepTimer:
    """Time spent in the run's own steps during the timed turns (wraps them in place)."""

    STEPS = (
        ("run lookup (runs index)", "crewagent.core.turns", None, "active_run"),
        ("prepare_run", "crewagent.core.runs.service", None, "prepare_run"),
        ("run context (per call)", "crewagent.core.runs.engine", "RunDriver", "context"),
        ("state guard", "crewagent.core.runs.guard", "StateGuard", "__call__"),
        ("state re-read after a write", "crewagent.core.runs.engine", "RunDriver", "read_state"),
        ("end of turn (runs index, marker)", "crewagent.core.runs.engine", "RunDriver", "_end_turn"),
    )

    def __init__(self) -> None:
        import importlib

        self.active = False
        self.inside = False
        self.turn: dict[str, float] = {}
        self.per_turn: dict[tuple[str, str], dict[str, list[float]]] = {
            (kind, turn): {name: [] for name, *_ in self.STEPS} for kind in KINDS for turn in TURNS
        }
        for name, module_name, cls, attr in self.STEPS:
            owner: Any = importlib.import_module(module_name)
            if cls is not None:
                owner = getattr(owner, cls)
            original = getattr(owner, attr)
            wrapped = self._wrap(name, original)
            setattr(owner, attr, wrapped)

    def _wrap(self, name: str, original: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            outer = not self.inside  # prepare_run reads the state too: count it once
            self.inside = True
            try:
                return original(*args, **kwargs)
            finally:
                if outer:
                    self.inside = False
                    if self.active:
                        self.turn[name] = self.turn.get(name, 0.0) + time.perf_counter() - started

        return timed

    def start(self) -> None:
        self.turn, self.active = {}, True

    def stop(self, key: tuple[str, str], keep: bool) -> None:
        self.active = False
        if keep:
            for name, *_ in self.STEPS:
                self.per_turn[key][name].append(self.turn.get(name, 0.0))


class SideTimer:
    """The steps both kinds of turn take, timed in the chat and the run turn alike (issue 16).

    The run's own steps above miss what a run turn does differently inside the steps a chat turn
    takes too: the request build (the run blocks and their token count) and the state write
    itself (the path, the frontmatter update, the durable write). Nested rows ("  of which") are
    parts of the row above them; the durable write is the same function with the same fsyncs in
    both modes (temp file fsync'd, renamed, folder fsync'd).
    """

    STEPS = (
        ("request build (per call; run: + run context)", "crewagent.core.loop.session", "ConversationSession", "_build"),
        ("  of which token counting (uncached texts)", None, None, "count"),
        ("the write tool (fs.apply_patch, whole call)", "crewagent.core.tools.registry", "ToolRegistry", "execute"),
        ("  of which path resolution (sandbox)", "crewagent.core.tools.sandbox", "Sandbox", "resolve"),
        ("  of which frontmatter update (parse, merge, guard, YAML)", "crewagent.core.tools.patch", None, "_update_frontmatter"),
        ("  of which the durable write (fsync, rename, fsync dir)", "crewagent.core.tools.patch", None, "atomic_write"),
        ("log appends (messages.jsonl, fsync'd)", "crewagent.core.store.runtime", "RuntimeStore", "append_message"),
    )

    def __init__(self) -> None:
        import importlib

        from crewagent.core.context.tokens import default_counter

        self.key: tuple[str, str, str] | None = None
        self.per_turn: dict[tuple[str, str, str], dict[str, list[float]]] = {}
        self.turn: dict[str, float] = {}
        for name, module_name, cls, attr in self.STEPS:
            owner: Any = default_counter() if module_name is None else importlib.import_module(module_name)
            if cls is not None:
                owner = getattr(owner, cls)
            if module_name is None:  # the counter's cached count: its misses are the cost
                attr = "_count" if hasattr(owner, "_count") else "count"
            setattr(owner, attr, self._wrap(name, getattr(owner, attr)))

    def _wrap(self, name: str, original: Any) -> Any:
        def add(started: float) -> None:
            if self.key is not None:
                self.turn[name] = self.turn.get(name, 0.0) + time.perf_counter() - started

        if asyncio.iscoroutinefunction(original):
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    add(started)

            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                add(started)

        return timed

    def start(self, key: tuple[str, str, str]) -> None:
        self.key, self.turn = key, {}

    def stop(self, keep: bool) -> None:
        if keep and self.key is not None:
            per_step = self.per_turn.setdefault(self.key, {name: [] for name, *_ in self.STEPS})
            for name, *_ in self.STEPS:
                per_step[name].append(self.turn.get(name, 0.0))
        self.key = None

    def rows(self) -> dict[str, Any]:
        return {
            ", ".join(key): {name: statistics.median(values) * MS for name, values in per_step.items() if values}
            for key, per_step in self.per_turn.items()
        }


async def _bench(rounds: int, warmup: int = 2) -> dict[str, Any]:
    responder = Responder()
    timer = StepTimer()
    side = SideTimer()
    series = {(kind, turn, mode): Series(f"{mode} turn ({kind}, {turn})") for kind in KINDS for turn in TURNS for mode in MODES}
    cpu_series = {key: Series(value.name) for key, value in series.items()}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="crewagent-bench-run-") as scratch, LocalServer(responder) as server:
        root = Path(scratch)
        store = RuntimeStore(root / "data")
        project = store.create_project(root / "project", "bench")
        package = PackageStore(root / "data").import_package(write_package(root / "pkg"))
        doc = project.root / "doc.md"
        config = ProviderConfig(provider="openai-compatible", base_url=server.base_url, api_key="sk-bench", model="bench", timeout=10.0)
        for n in range(rounds + warmup):  # the warm-up rounds first
            order = [(kind, mode) for kind in KINDS for mode in MODES]
            order = order[n % len(order):] + order[: n % len(order)]
            for kind, mode in order:
                meta = await asyncio.to_thread(store.create_conversation, project.id, entry_type=mode)
                run = None
                if mode == "run":
                    run = await asyncio.to_thread(create_run, store, project, meta.id, package, "notes")
                if kind == "state write" and run is None:
                    # Written as create_run writes the run's state (atomically, fsync'd), so that both
                    # first turns replace a file whose blocks are allocated. Unsynced, the chat's file
                    # was still in delayed allocation, and replacing it skipped the synchronous discard
                    # of its blocks that replacing the run's state pays on this disk (2-4 ms; see
                    # docs/benchmarks.md, Run mode, session 8): a set-up difference, not the run's.
                    atomic_write_bytes(doc, b"---\ncurrentNodeId: write\nstepsCompleted: []\n---\nbody\n")
                responder.patch_path = "" if kind == "text" else run.state_alias if run is not None else "@project/doc.md"
                for turn, update in zip(TURNS, UPDATES):
                    responder.update = update
                    if run is not None:
                        timer.start()
                    side.start((kind, turn, mode))
                    elapsed, cpu = await _turn(store, project, config, root / "config", meta.id, mode)
                    side.stop(keep=n >= warmup)
                    if run is not None:
                        timer.stop((kind, turn), keep=n >= warmup)
                    if n >= warmup:
                        series[(kind, turn, mode)].samples.append(elapsed)
                        cpu_series[(kind, turn, mode)].samples.append(cpu)
    load.append(os.getloadavg()[0])
    rows: dict[str, Any] = {}
    for kind in KINDS:
        rows[kind] = {}
        for turn in TURNS:
            chat, run_ = series[(kind, turn, "chat")].row(), series[(kind, turn, "run")].row()
            chat["cpu_p50_ms"] = cpu_series[(kind, turn, "chat")].row()["p50_ms"]
            run_["cpu_p50_ms"] = cpu_series[(kind, turn, "run")].row()["p50_ms"]
            rows[kind][turn] = {
                "chat": chat, "run": run_,
                "overhead_p50_ms": run_["p50_ms"] - chat["p50_ms"], "overhead_mean_ms": run_["mean_ms"] - chat["mean_ms"],
                "overhead_cpu_p50_ms": run_["cpu_p50_ms"] - chat["cpu_p50_ms"],
                # Round by round (the chat and the run turn of a round ran a few hundred ms apart,
                # under about the same load): the median of the differences.
                "paired_p50_ms": _paired(series, kind, turn), "paired_cpu_p50_ms": _paired(cpu_series, kind, turn),
            }
    steps: dict[str, Any] = {}
    for (kind, turn), per_step in timer.per_turn.items():
        medians = {name: sorted(values)[len(values) // 2] * MS for name, values in per_step.items() if values}
        totals = sorted(sum(parts) for parts in zip(*per_step.values()))
        steps[f"{kind}, {turn}"] = {"p50_ms": medians, "total_p50_ms": totals[len(totals) // 2] * MS if totals else 0.0}
    return {
        "rounds": rounds, "python": platform.python_version(), "load_average": load, "turns": rows, "run_steps": steps,
        "side_steps": side.rows(),
    }


def _paired(series: dict[tuple[str, str, str], Series], kind: str, turn: str) -> float:
    chat, run = series[(kind, turn, "chat")].samples, series[(kind, turn, "run")].samples
    return statistics.median(r - c for c, r in zip(chat, run)) * MS


def _table(result: dict[str, Any]) -> str:
    lines = ["## Run turn vs chat turn (same server, real RuntimeStore, both through run_turn)", ""]
    lines += ["| configuration | n | p50 ms | p95 ms | mean ms | CPU p50 ms |", "|---|---|---|---|---|---|"]
    for kind, per_turn in result["turns"].items():
        for turn, rows in per_turn.items():
            for mode in MODES:
                row = rows[mode]
                lines.append(
                    f"| {row['name']} | {row['n']} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {row['mean_ms']:.2f} | {row['cpu_p50_ms']:.2f} |"
                )
            lines.append(
                f"| **run overhead ({kind}, {turn})** | | **{rows['overhead_p50_ms']:.2f}** | | **{rows['overhead_mean_ms']:.2f}** "
                f"| **{rows['overhead_cpu_p50_ms']:.2f}** |"
            )
            lines.append(
                f"| run overhead, median of the rounds' differences | | {rows['paired_p50_ms']:.2f} | | | {rows['paired_cpu_p50_ms']:.2f} |"
            )
    columns = list(result["run_steps"])
    lines += ["", "## The run's own steps, per turn (p50 ms)", "", "| step | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, *_ in StepTimer.STEPS:
        lines.append(f"| {name} | " + " | ".join(f"{result['run_steps'][c]['p50_ms'].get(name, 0.0):.2f}" for c in columns) + " |")
    lines.append("| **total of the run's steps** | " + " | ".join(f"**{result['run_steps'][c]['total_p50_ms']:.2f}**" for c in columns) + " |")
    lines += ["", "## The state write and the request build, chat turn vs run turn (state write, p50 ms per turn)", ""]
    lines += ["| step | chat, first | run, first | chat, next | run, next | difference, next |", "|---|---|---|---|---|---|"]
    side = result["side_steps"]
    for name, *_ in SideTimer.STEPS:
        cells = [side.get(f"state write, {turn}, {mode}", {}).get(name, 0.0) for turn in TURNS for mode in MODES]
        lines.append(f"| {name} | " + " | ".join(f"{cell:.2f}" for cell in cells) + f" | {cells[3] - cells[2]:+.2f} |")
    start, end = result["load_average"]
    lines += ["", f"Goal run overhead per turn < {GOAL_MS:g} ms. Load average {start:.1f} at the start, {end:.1f} at the end."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds (smoke run)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 40)
    # --quick only proves the script runs (its figures mean nothing): no warm-up rounds.
    result = asyncio.run(_bench(rounds, warmup=0 if args.quick else 2))
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
