#!/usr/bin/env python3
"""Tool loop overhead benchmark (issue 4, "Performance"); results are recorded in docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_loop.py            # full run, about a minute
    .venv/bin/python benchmarks/bench_loop.py --quick    # a few rounds: a smoke run for the tests
    .venv/bin/python benchmarks/bench_loop.py --json     # machine-readable results

A local OpenAI-compatible server (``crewagent.core.llm.local_server``) answers every request at
once with a pre-encoded SSE body. A turn is one whole ``ConversationSession.send`` as the app
and ``crewagent chat`` run it: turn lock, recovery check, the user message appended, the log
loaded, the context built (system prefix + a 40-message history with tool calls), the pre-send
check, the stream through the adapter, the answer persisted, the store flushed.

1. **Per-turn time**, two answers: ``text`` (60 text chunks) and ``tools`` (three parallel calls
   to a no-op ``bench.echo`` tool, then a 60-chunk answer: two model calls and three results).
   Each is run three ways:

   - ``raw httpx2``: the same request bodies the session sent (captured from a warm-up turn),
     posted with ``json=`` and the SSE bodies read without parsing -- the HTTP round trips no
     loop can avoid (two for ``tools``);
   - ``LlmAdapter alone``: the same captured requests through ``LlmAdapter.stream`` to
     ``Completed`` (what ``bench_llm.py`` measures), to split the overhead into the adapter's
     share and the loop's own share (context build, pre-send check, events, tools, store hops);
   - ``session, in-memory store``: the store's log, index and checkpoint kept in memory (the
     turn lock is still the real file lock), no tool audit. **Loop overhead = this - raw.**
   - ``session, RuntimeStore``: the real store (each append fsync'd, index staged) and the
     real execution audit. **Persistence cost = this - in-memory.**

2. **First byte -> first TextDelta event**: a transport wrapper stamps the arrival of the first
   body bytes of the response; the consumer of ``session.send`` stamps the first ``TextDelta``
   it receives (the adapter's event, through the loop's queue and both generators). Goal < 2 ms.

Rounds are interleaved (each configuration once per round, in rotating order) so that machine
noise hits all alike. Each round uses a fresh conversation holding the same history (created
and deleted outside the timing). Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

import httpx2
from _timing import Series as _Series, TimingTransport  # benchmarks/ is on sys.path when a script runs
import openai

from crewagent.core.llm import LlmAdapter, LlmRequest, ProviderConfig, TextDelta
from crewagent.core.llm.local_server import JsonReply, LocalServer, Raw, RecordedRequest, Reply, SseReply
from crewagent.core.loop import ConversationSession, TurnFinished, TurnSettings
from crewagent.core.messages import ConversationMessage, from_openai
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.log import LoadResult
from crewagent.core.tools import AuditLog, AutoApprover, ApprovalGate, Tool, ToolContext, audit_path, default_registry, ok

MS = 1000.0
KINDS = ("text", "tools")


# the server side: answers prepared once, sent as raw bytes


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _text_answer(chunks: int) -> list[Raw]:
    words = [f"word{i} " for i in range(chunks)]
    items = [Raw(_chunk({"role": "assistant", "content": words[0]}))]
    items += [Raw(_chunk({"content": w})) for w in words[1:]]
    items.append(Raw(_chunk({}, "stop")))
    return items


def _tool_answer(calls: int) -> list[Raw]:
    items = [Raw(_chunk({"role": "assistant", "content": "Checking."}))]
    for i in range(calls):
        head = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "bench_echo", "arguments": ""}}
        items.append(Raw(_chunk({"tool_calls": [head]})))
        for part in ('{"value": ', f'"item {i}"', "}"):
            items.append(Raw(_chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})))
    items.append(Raw(_chunk({}, "tool_calls")))
    return items


class _Responder:
    """``tools`` turns: tool calls first, the text answer once the last message is a tool result."""

    def __init__(self) -> None:
        self.text = _text_answer(60)
        self.calls = _tool_answer(3)

    def chat_completion(self, request: RecordedRequest) -> Reply:
        body = request.body
        last = body["messages"][-1]
        if str(last.get("content", "")).startswith("tools") and last["role"] == "user":
            return SseReply(self.calls)
        return SseReply(self.text)

    def list_models(self, request: RecordedRequest) -> Reply:
        return JsonReply(200, {"object": "list", "data": []})


# the client side


class MemoryStore(RuntimeStore):
    """A RuntimeStore whose logs and checkpoints live in memory (the turn lock stays the real one)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.logs: dict[str, list[ConversationMessage]] = defaultdict(list)
        self.checkpoints: dict[str, dict[str, Any]] = {}

    def append_message(self, project_id: str, conversation_id: str, message: ConversationMessage) -> ConversationMessage:
        self.logs[conversation_id].append(message)
        return message

    def load_messages(self, project_id: str, conversation_id: str) -> LoadResult:
        return LoadResult(list(self.logs[conversation_id]))

    def flush(self) -> None:
        pass

    def save_stream_checkpoint(self, project_id: str, conversation_id: str, data: dict[str, Any]) -> None:
        self.checkpoints[conversation_id] = data

    def read_stream_checkpoint(self, project_id: str, conversation_id: str) -> dict[str, Any] | None:
        return self.checkpoints.get(conversation_id)

    def clear_stream_checkpoint(self, project_id: str, conversation_id: str) -> None:
        self.checkpoints.pop(conversation_id, None)


def _history(turns: int) -> list[ConversationMessage]:
    messages: list[dict[str, Any]] = []
    for t in range(turns):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "fs.read", "arguments": json.dumps({"path": f"@project/f{t}.md"})}}
        messages += [
            {"role": "user", "content": f"Question {t}: " + "please look at the file " * 10},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{t}", "content": json.dumps({"ok": True, "content": "line\n" * 100}), "toolName": "fs.read"},
            {"role": "assistant", "content": "Here is what the file says. " * 8},
        ]
    return [from_openai(m, mode="chat") for m in messages[:40]]


async def _echo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return ok(echo=args.get("value"))


ECHO = Tool("bench.echo", "returns its argument", _echo, parameters={"type": "object", "properties": {"value": {"type": "string"}}})


class _Setup:
    """One way of running turns (in-memory or on-disk store) with its own adapter and timing transport."""

    def __init__(self, label: str, store: RuntimeStore, project: ProjectInfo, base_url: str, history: list[ConversationMessage]) -> None:
        self.label = label
        self.store = store
        self.project = project
        self.history = history
        self.timing = TimingTransport()
        config = ProviderConfig(provider="openai-compatible", base_url=base_url, api_key="k", model="bench", include_usage=False)
        self.adapter = LlmAdapter(config, http_client=openai.DefaultAsyncHttpxClient(transport=self.timing, trust_env=False))
        self.registry = default_registry()
        self.registry.register(ECHO)

    def _conversation(self) -> str:
        pid = self.project.id
        meta = self.store.create_conversation(pid, title="bench")
        if isinstance(self.store, MemoryStore):
            self.store.logs[meta.id] = list(self.history)
        else:
            self.store.append_messages(pid, meta.id, list(self.history))
        return meta.id

    def _context(self, conversation_id: str) -> ToolContext:
        if isinstance(self.store, MemoryStore):
            return ToolContext.for_project(self.project, approval=ApprovalGate(AutoApprover()), conversation_id=conversation_id)
        audit = AuditLog(audit_path(self.project.runtime_dir / "state", conversation_id=conversation_id))
        return ToolContext.for_project(self.project, approval=ApprovalGate(AutoApprover()), audit=audit, conversation_id=conversation_id)

    async def turn(self, kind: str) -> tuple[float, float | None]:
        """One timed turn; returns (seconds, first byte -> first TextDelta seconds or None)."""
        cid = await asyncio.to_thread(self._conversation)
        session = ConversationSession(self.store, self.project, cid, adapter=self.adapter, registry=self.registry, tool_context=self._context(cid))
        settings = TurnSettings()
        self.timing.marks.clear()
        first: float | None = None
        finished: TurnFinished | None = None
        t0 = time.perf_counter()
        async with aclosing(session.send(f"{kind}: go", settings)) as events:
            async for event in events:
                if first is None and isinstance(event, TextDelta):
                    first = time.perf_counter()
                elif isinstance(event, TurnFinished):
                    finished = event
        elapsed = time.perf_counter() - t0
        if finished is None or not finished.ok:
            raise RuntimeError(f"the {kind} turn did not complete: {finished}")
        first_byte = self.timing.marks.get("first_byte")
        await asyncio.to_thread(self.store.delete_conversation, self.project.id, cid)
        return elapsed, (first - first_byte) if (first is not None and first_byte is not None and kind == "text") else None

    async def aclose(self) -> None:
        await self.adapter.aclose()


async def _run(rounds: int, warmup: int, scratch: Path) -> dict[str, Any]:
    server = LocalServer(_Responder()).start()
    base = server.base_url
    history = _history(10)
    disk = RuntimeStore(scratch / "disk")
    memory = MemoryStore(scratch / "memory")
    setups = {
        "memory": _Setup("session, in-memory store", memory, memory.create_project(scratch / "project-memory", "bench"), base, history),
        "disk": _Setup("session, RuntimeStore (fsync)", disk, disk.create_project(scratch / "project-disk", "bench"), base, history),
    }
    raw = httpx2.AsyncClient(trust_env=False)
    # the bodies the session sends, captured from one turn of each kind
    bodies: dict[str, list[Any]] = {}
    for kind in KINDS:
        before = len(server.requests)
        await setups["memory"].turn(kind)
        bodies[kind] = [r.body for r in server.requests[before:]]

    turns: dict[str, dict[str, _Series]] = {
        kind: {
            "raw": _Series(f"raw httpx2 round trip{'s (2 requests)' if kind == 'tools' else ''} ({kind})"),
            "adapter": _Series(f"LlmAdapter.stream alone, same request{'s' if kind == 'tools' else ''} ({kind})"),
            "memory": _Series(f"session turn, in-memory store ({kind})"),
            "disk": _Series(f"session turn, RuntimeStore with fsync ({kind})"),
        }
        for kind in KINDS
    }
    first_byte = {name: _Series(f"{setup.label}: first byte -> first TextDelta event") for name, setup in setups.items()}

    async def raw_turn(kind: str) -> None:
        t0 = time.perf_counter()
        for body in bodies[kind]:
            async with raw.stream("POST", f"{base}/chat/completions", json=body, headers={"Authorization": "Bearer k"}) as response:
                async for _ in response.aiter_bytes():
                    pass
        turns[kind]["raw"].samples.append(time.perf_counter() - t0)

    plain = LlmAdapter(ProviderConfig(provider="openai-compatible", base_url=base, api_key="k", model="bench", include_usage=False))
    requests = {kind: [LlmRequest(messages=b["messages"], tools=b.get("tools") or ()) for b in bodies[kind]] for kind in KINDS}

    async def adapter_turn(kind: str) -> None:
        t0 = time.perf_counter()
        for request in requests[kind]:
            completed = await plain.complete(request)
            assert completed.finish_reason in ("stop", "tool_calls")
        turns[kind]["adapter"].samples.append(time.perf_counter() - t0)

    def session_turn(name: str) -> Callable[[str], Awaitable[None]]:
        async def run(kind: str) -> None:
            elapsed, first = await setups[name].turn(kind)
            turns[kind][name].samples.append(elapsed)
            if first is not None:
                first_byte[name].samples.append(first)

        return run

    runners: list[Callable[[str], Awaitable[None]]] = [raw_turn, adapter_turn, session_turn("memory"), session_turn("disk")]
    try:
        for _ in range(warmup):
            for kind in KINDS:
                for run in runners:
                    await run(kind)
        for series in [*first_byte.values(), *(s for k in turns.values() for s in k.values())]:
            series.samples.clear()
        for r in range(rounds):
            order = runners[r % len(runners) :] + runners[: r % len(runners)]
            for kind in KINDS:
                for run in order:
                    await run(kind)
    finally:
        for setup in setups.values():
            await setup.aclose()
        await plain.aclose()
        await raw.aclose()
        server.stop()

    result: dict[str, Any] = {"first_byte": [s.row() for s in first_byte.values()], "turns": {}}
    for kind, by_name in turns.items():
        rows: dict[str, Any] = {name: s.row() for name, s in by_name.items()}
        for key, a, b, label in (
            ("loop", "memory", "raw", "loop overhead: in-memory session - raw"),
            ("adapter_share", "adapter", "raw", "of which the adapter: adapter alone - raw"),
            ("loop_share", "memory", "adapter", "of which the loop: in-memory session - adapter alone"),
            ("persistence", "disk", "memory", "persistence: RuntimeStore - in-memory"),
            ("total", "disk", "raw", "total: RuntimeStore session - raw"),
        ):
            rows[key] = {
                "name": f"{label} ({kind})",
                "p50_ms": rows[a]["p50_ms"] - rows[b]["p50_ms"],
                "mean_ms": rows[a]["mean_ms"] - rows[b]["mean_ms"],
            }
        result["turns"][kind] = rows
    result["request_bytes"] = {kind: [len(json.dumps(b)) for b in bodies[kind]] for kind in KINDS}
    return result


def _machine(scratch: Path) -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    fs = "?"
    try:
        best = ""
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if str(scratch.resolve()).startswith(parts[1]) and len(parts[1]) > len(best):
                best, fs = parts[1], f"{parts[2]} ({parts[1]} on {parts[0]})"
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {
        "CPU model": cpu,
        "CPUs": str(os.cpu_count()),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": platform.platform(),
        "openai / httpx2": f"{openai.__version__} / {httpx2.__version__}",
        "scratch filesystem": fs,
        "load average (1, 5, 15 min)": load,
    }


def _print(result: dict[str, Any], machine: dict[str, str], rounds: int) -> None:
    print("## Machine\n")
    print("| | |\n|---|---|")
    for key, value in machine.items():
        print(f"| {key} | {value} |")
    print(f"\n## 1. First byte -> first TextDelta event ({rounds} text turns, goal < 2 ms)\n")
    print("| measurement | n | p50 ms | p95 ms | mean ms |\n|---|---|---|---|---|")
    for row in result["first_byte"]:
        print(f"| {row['name']} | {row['n']} | {row['p50_ms']:.3f} | {row['p95_ms']:.3f} | {row['mean_ms']:.3f} |")
    worst_first = max(row["p50_ms"] for row in result["first_byte"])
    print(f"\nGoal first byte -> first TextDelta event < 2 ms (p50): {'met' if worst_first < 2.0 else 'MISSED'}")
    sizes = ", ".join(f"{kind} {'+'.join(str(n) for n in ns)}" for kind, ns in result["request_bytes"].items())
    print(f"\n## 2. Per-turn time ({rounds} turns each; request bodies {sizes} bytes; goal loop overhead < 5 ms)\n")
    print("| measurement | n | p50 ms | p95 ms | mean ms |\n|---|---|---|---|---|")
    for kind, rows in result["turns"].items():
        for name in ("raw", "adapter", "memory", "disk"):
            row = rows[name]
            print(f"| {row['name']} | {row['n']} | {row['p50_ms']:.3f} | {row['p95_ms']:.3f} | {row['mean_ms']:.3f} |")
        for name in ("loop", "adapter_share", "loop_share", "persistence", "total"):
            row = rows[name]
            bold = name == "loop"
            label = f"**{row['name']}**" if bold else row["name"]
            value = f"**{row['p50_ms']:.3f}**" if bold else f"{row['p50_ms']:.3f}"
            print(f"| {label} | | {value} | | {row['mean_ms']:.3f} |")
    worst = max(rows["loop"]["p50_ms"] for rows in result["turns"].values())
    print(f"\nGoal loop overhead per turn < 5 ms (p50, worst answer): {'met' if worst < 5.0 else 'MISSED'}")
    persist = ", ".join(f"{kind} {rows['persistence']['p50_ms']:.1f} ms" for kind, rows in result["turns"].items())
    print(f"Persistence cost per turn (p50, reported separately, no goal): {persist}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a few rounds only (smoke run)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--json-file", type=Path, default=None, help="also write the JSON to this file (the tables still print)")
    parser.add_argument("--data-dir", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (5 if args.quick else 200)
    # --quick only proves the script runs (its figures mean nothing): no warm-up rounds; the
    # bodies are still captured from a first turn of each kind, and the series still cleared.
    warmup = 0 if args.quick else 15
    with tempfile.TemporaryDirectory(prefix="crewagent-bench-loop-", dir=args.data_dir) as tmp:
        scratch = Path(tmp)
        result = asyncio.run(_run(rounds, warmup, scratch))
        machine = _machine(scratch)
    data = {"machine": machine, "rounds": rounds, **result}
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        _print(result, machine, rounds)
    if args.json_file:
        args.json_file.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
