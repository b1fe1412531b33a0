#!/usr/bin/env python3
"""Run-mode overhead benchmark (issue 16, "Performance"); results are recorded in docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_run.py            # full run
    .venv/bin/python benchmarks/bench_run.py --quick    # a few rounds: a smoke run for the tests
    .venv/bin/python benchmarks/bench_run.py --json     # machine-readable results

A run turn's own overhead over a chat turn, side by side against the same local
OpenAI-compatible server (answers pre-encoded, sent at once), with the real RuntimeStore:

- ``text``: the model answers with 60 text chunks. Chat: ``ConversationSession.send`` in chat
  mode. Run: the same, in Run mode with a ``RunDriver`` built by ``prepare_run`` (the state file
  read and parsed), the persona and RUN_DIRECTIVE / NODE_BRIEF rebuilt before the call, the phase
  persisted in the runs index at the start and the end.
- ``state write``: the model calls ``fs.apply_patch`` with ``updateFrontmatter`` once, then
  answers. Chat: the patch goes to an ordinary Markdown file. Run: to the run's state, through
  the guard (schema, graph successors, stepsCompleted), followed by the state re-read, a
  ``RunProgress`` event and the runs index update.

**Run overhead = run turn - chat turn** (goal < 5 ms). Rounds are interleaved; each round uses a
fresh conversation (and a fresh run) created outside the timing. On a loaded machine the
difference of two ~100 ms turns is noisy, so the run's own steps are also timed directly, per
turn: ``prepare_run`` (state read and parsed, the turn marked running), the run context before
each model call, the state guard (schema + graph), the state re-read after a write, and the end
of the turn (the phase written to the runs index).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
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

from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.llm.local_server import LocalServer, Raw, RecordedRequest, Reply, SseReply
from crewagent.core.loop import ConversationSession, RunProgress, TurnFinished
from crewagent.core.loop.factory import tool_context, turn_settings
from crewagent.core.packages import PackageStore
from crewagent.core.runs import create_run, prepare_run
from crewagent.core.runs.service import state_schema
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover, default_registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.core.run_helpers import write_package  # noqa: E402  (the three-node package of the tests)

MS = 1000.0
KINDS = ("text", "state write")
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


async def _turn(store: RuntimeStore, project: ProjectInfo, adapter: LlmAdapter, cid: str, *, run: Any = None, package: Any = None) -> float:
    settings = Settings()
    started = time.perf_counter()
    driver = None
    if run is not None:
        driver = await asyncio.to_thread(prepare_run, project, run, package, schema=state_schema)
    ctx = tool_context(
        project, settings, conversation_id=cid, approver=AutoApprover(),
        run_id=run.runId if run else None, pkg_dir=package.root if package else None,
        frontmatter_guard=driver.guard if driver else None,
    )
    session = ConversationSession(store, project, cid, adapter=adapter, registry=default_registry(), tool_context=ctx)
    mode = "run" if driver else "chat"
    per_turn = turn_settings(settings, mode, run=driver, run_id=run.runId if run else None, workflow_id="notes" if run else None)
    finished = None
    progress = 0
    async with aclosing(session.send("go on", per_turn)) as events:
        async for event in events:
            if isinstance(event, TurnFinished):
                finished = event
            progress += isinstance(event, RunProgress)
    elapsed = time.perf_counter() - started
    assert finished is not None and finished.reason in ("completed", "waiting_user"), finished
    return elapsed


class StepTimer:
    """Time spent in the run's own steps during the timed turns (wraps them in place)."""

    STEPS = (
        ("prepare_run", "crewagent.core.runs.engine", None, "prepare_run"),
        ("run context (per call)", "crewagent.core.runs.engine", "RunDriver", "context"),
        ("state guard", "crewagent.core.runs.guard", "StateGuard", "__call__"),
        ("state re-read after a write", "crewagent.core.runs.engine", "RunDriver", "read_state"),
        ("end of turn (runs index)", "crewagent.core.runs.engine", "RunDriver", "_end_turn"),
    )

    def __init__(self) -> None:
        import importlib

        self.active = False
        self.inside = False
        self.turn: dict[str, float] = {}
        self.per_turn: dict[str, dict[str, list[float]]] = {kind: {name: [] for name, *_ in self.STEPS} for kind in KINDS}
        global prepare_run
        for name, module_name, cls, attr in self.STEPS:
            owner: Any = importlib.import_module(module_name)
            if cls is not None:
                owner = getattr(owner, cls)
            original = getattr(owner, attr)
            wrapped = self._wrap(name, original)
            setattr(owner, attr, wrapped)
            if attr == "prepare_run":
                prepare_run = wrapped  # this module imported it by name

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

    def stop(self, kind: str, keep: bool) -> None:
        self.active = False
        if keep:
            for name, *_ in self.STEPS:
                self.per_turn[kind][name].append(self.turn.get(name, 0.0))


async def _bench(rounds: int) -> dict[str, Any]:
    responder = Responder()
    timer = StepTimer()
    series = {(kind, mode): Series(f"{mode} turn ({kind})") for kind in KINDS for mode in ("chat", "run")}
    with tempfile.TemporaryDirectory(prefix="crewagent-bench-run-") as scratch, LocalServer(responder) as server:
        root = Path(scratch)
        store = RuntimeStore(root / "data")
        project = store.create_project(root / "project", "bench")
        package = PackageStore(root / "data").import_package(write_package(root / "pkg"))
        doc = project.root / "doc.md"
        config = ProviderConfig(provider="openai-compatible", base_url=server.base_url, api_key="sk-bench", model="bench", timeout=10.0)
        async with LlmAdapter(config) as adapter:
            for n in range(rounds + 2):  # two warm-up rounds
                order = [(kind, mode) for kind in KINDS for mode in ("chat", "run")]
                order = order[n % len(order):] + order[: n % len(order)]
                for kind, mode in order:
                    meta = await asyncio.to_thread(store.create_conversation, project.id, entry_type=mode)
                    run = None
                    if mode == "run":
                        run = await asyncio.to_thread(create_run, store, project, meta.id, package, "notes")
                    if kind == "state write":
                        if run is not None:
                            responder.patch_path = run.state_alias
                        else:
                            doc.write_text("---\ncurrentNodeId: write\nstepsCompleted: []\n---\nbody\n", encoding="utf-8")
                            responder.patch_path = "@project/doc.md"
                        responder.update = {"currentNodeId": "check", "stepsCompleted": ["write"]}
                    else:
                        responder.patch_path = ""
                    if run is not None:
                        timer.start()
                    elapsed = await _turn(store, project, adapter, meta.id, run=run, package=package if run else None)
                    if run is not None:
                        timer.stop(kind, keep=n >= 2)
                    if n >= 2:
                        series[(kind, mode)].samples.append(elapsed)
    rows: dict[str, Any] = {}
    for kind in KINDS:
        chat, run_ = series[(kind, "chat")].row(), series[(kind, "run")].row()
        rows[kind] = {"chat": chat, "run": run_, "overhead_p50_ms": run_["p50_ms"] - chat["p50_ms"], "overhead_mean_ms": run_["mean_ms"] - chat["mean_ms"]}
    steps: dict[str, Any] = {}
    for kind in KINDS:
        medians = {name: sorted(values)[len(values) // 2] * MS for name, values in timer.per_turn[kind].items() if values}
        totals = sorted(sum(parts) for parts in zip(*timer.per_turn[kind].values()))
        steps[kind] = {"p50_ms": medians, "total_p50_ms": totals[len(totals) // 2] * MS if totals else 0.0}
    return {"rounds": rounds, "python": platform.python_version(), "turns": rows, "run_steps": steps}


def _table(result: dict[str, Any]) -> str:
    lines = ["## Run turn vs chat turn (same server, real RuntimeStore)", "", "| configuration | n | p50 ms | p95 ms | mean ms |", "|---|---|---|---|---|"]
    for kind, rows in result["turns"].items():
        for mode in ("chat", "run"):
            row = rows[mode]
            lines.append(f"| {row['name']} | {row['n']} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {row['mean_ms']:.2f} |")
        lines.append(f"| **run overhead ({kind})** | | **{rows['overhead_p50_ms']:.2f}** | | **{rows['overhead_mean_ms']:.2f}** |")
    lines += ["", "## The run's own steps, per turn (p50 ms)", "", "| step | " + " | ".join(KINDS) + " |", "|---|" + "---|" * len(KINDS)]
    for name, *_ in StepTimer.STEPS:
        lines.append(f"| {name} | " + " | ".join(f"{result['run_steps'][k]['p50_ms'].get(name, 0.0):.2f}" for k in KINDS) + " |")
    lines.append("| **total of the run's steps** | " + " | ".join(f"**{result['run_steps'][k]['total_p50_ms']:.2f}**" for k in KINDS) + " |")
    lines += ["", f"Goal run overhead per turn < {GOAL_MS:g} ms"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds (smoke run)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 40)
    result = asyncio.run(_bench(rounds))
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
