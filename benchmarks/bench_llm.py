#!/usr/bin/env python3
"""LLM adapter overhead benchmark (issue 4, "Performance"); results are recorded in docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_llm.py            # full run, about half a minute
    .venv/bin/python benchmarks/bench_llm.py --quick    # a few rounds: a smoke run for the tests
    .venv/bin/python benchmarks/bench_llm.py --json     # machine-readable results

A local OpenAI-compatible server (``crewagent.core.llm.local_server``) answers every request at
once with a pre-encoded SSE body, so what is left is the client side. Two measurements:

1. **First byte -> first TextDelta**: a transport wrapper stamps the moment the first bytes of
   the response body reach the client; the consumer stamps the first ``TextDelta`` the adapter
   yields (the first SSE event already carries text). The difference is the adapter's path,
   SDK SSE decoding and chunk parsing included. Reported next to the same figure for the bare
   openai SDK (first chunk with content). Goal: < 2 ms.
2. **Per-turn overhead**: one whole turn (request built from a 40-message history with tool
   calls, streamed, accumulated to ``Completed``) against a raw ``httpx2`` request that posts the
   same JSON body (``json=``, so encoding it is in the baseline) and reads the same SSE body
   without parsing it -- the HTTP round trip the adapter cannot avoid. Also the bare openai SDK (create + iterate chunks) in between. Two
   answers: 60 text chunks, and 3 parallel tool calls with arguments in 30 pieces.
   Goal: adapter minus raw httpx < 5 ms (median).

Rounds are interleaved (each configuration once per round, in rotating order) so machine noise
hits all alike. Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

import httpx2
from _timing import Series as _Series, TimingTransport  # benchmarks/ is on sys.path when a script runs
import openai

from crewagent.core.llm import LlmAdapter, LlmRequest, ProviderConfig, TextDelta
from crewagent.core.llm.local_server import JsonReply, LocalServer, Raw, RecordedRequest, Reply, SseReply

MS = 1000.0
MODEL = "bench-text"


# the server side: answers prepared once, sent as raw bytes


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _text_answer(chunks: int) -> list[Raw]:
    words = [f"word{i} " for i in range(chunks)]
    items = [Raw(_chunk({"role": "assistant", "content": words[0]}))]
    items += [Raw(_chunk({"content": w})) for w in words[1:]]
    items.append(Raw(_chunk({}, "stop")))
    return items


def _tool_answer(calls: int, pieces: int) -> list[Raw]:
    items = [Raw(_chunk({"role": "assistant", "content": "Checking."}))]
    for i in range(calls):
        head = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "fs_read", "arguments": ""}}
        items.append(Raw(_chunk({"tool_calls": [head]})))
    arguments = json.dumps({"path": "@project/" + "d/" * 20 + "file.md", "startLine": 1, "endLine": 400})
    size = -(-len(arguments) // pieces)
    parts = [arguments[k : k + size] for k in range(0, len(arguments), size)]
    for part in parts:
        for i in range(calls):
            items.append(Raw(_chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})))
    items.append(Raw(_chunk({}, "tool_calls")))
    return items


class _Responder:
    def __init__(self) -> None:
        self.answers = {"text": _text_answer(60), "tools": _tool_answer(3, 30)}

    def chat_completion(self, request: RecordedRequest) -> Reply:
        model = str(request.body["model"])  # "bench-text" or "bench-tools" picks the answer
        return SseReply(self.answers[model.removeprefix("bench-")])

    def list_models(self, request: RecordedRequest) -> Reply:
        return JsonReply(200, {"object": "list", "data": []})


# the client side


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant. " * 20}]
    for t in range(turns):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "fs.read", "arguments": json.dumps({"path": f"@project/f{t}.md"})}}
        messages += [
            {"role": "user", "content": f"Question {t}: " + "please look at the file " * 10},
            {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": "thinking " * 20},
            {"role": "tool", "tool_call_id": f"c{t}", "content": json.dumps({"ok": True, "content": "line\n" * 100})},
            {"role": "assistant", "content": "Here is what the file says. " * 8},
        ]
    return messages[:40]


TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": n, "description": "d", "parameters": {"type": "object", "properties": {}}}}
    for n in ("fs.read", "fs.list", "fs.search", "fs.write", "fs.apply_patch", "ui.ask_user")
]


async def _run(rounds: int, warmup: int) -> dict[str, Any]:
    server = LocalServer(_Responder()).start()
    base = server.base_url
    timing = TimingTransport()
    config = ProviderConfig(provider="openai-compatible", base_url=base, api_key="k", model=MODEL, include_usage=False)
    adapter = LlmAdapter(config, http_client=openai.DefaultAsyncHttpxClient(transport=timing, trust_env=False))
    sdk_timing = TimingTransport()
    sdk = openai.AsyncOpenAI(
        base_url=base, api_key="k", max_retries=0, http_client=openai.DefaultAsyncHttpxClient(transport=sdk_timing, trust_env=False)
    )
    raw = httpx2.AsyncClient(trust_env=False)
    history = _history(10)
    requests = {kind: LlmRequest(history, tools=TOOLS, model=f"bench-{kind}") for kind in ("text", "tools")}
    # the raw baseline posts the same JSON body the adapter sends (httpx2 encodes it, as any client must)
    wire_bodies = {
        kind: {
            "model": f"bench-{kind}",
            "messages": [{k: v for k, v in m.items() if k != "reasoning_content"} for m in history],
            "tools": [{**t, "function": {**t["function"], "name": t["function"]["name"].replace(".", "_")}} for t in TOOLS],
            "stream": True,
        }
        for kind in ("text", "tools")
    }
    first_byte = {"adapter": _Series("adapter: first byte -> first TextDelta"), "sdk": _Series("openai SDK alone: first byte -> first content chunk")}
    turns: dict[str, dict[str, _Series]] = {
        kind: {
            "raw": _Series(f"raw httpx2 round trip ({kind})"),
            "sdk": _Series(f"openai SDK stream ({kind})"),
            "adapter": _Series(f"LlmAdapter.stream to Completed ({kind})"),
        }
        for kind in ("text", "tools")
    }

    async def adapter_turn(kind: str) -> None:
        timing.marks.clear()
        t0 = time.perf_counter()
        first: float | None = None
        async for event in adapter.stream(requests[kind]):
            if first is None and isinstance(event, TextDelta):
                first = time.perf_counter()
        t1 = time.perf_counter()
        turns[kind]["adapter"].samples.append(t1 - t0)
        if kind == "text" and first is not None:
            first_byte["adapter"].samples.append(first - timing.marks["first_byte"])

    async def sdk_turn(kind: str) -> None:
        sdk_timing.marks.clear()
        t0 = time.perf_counter()
        stream = await sdk.chat.completions.create(
            model=f"bench-{kind}", messages=cast(Any, history), tools=cast(Any, TOOLS), stream=True
        )
        first: float | None = None
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter()
        turns[kind]["sdk"].samples.append(time.perf_counter() - t0)
        if kind == "text" and first is not None:
            first_byte["sdk"].samples.append(first - sdk_timing.marks["first_byte"])

    async def raw_turn(kind: str) -> None:
        t0 = time.perf_counter()
        async with raw.stream(
            "POST",
            f"{base}/chat/completions",
            json=wire_bodies[kind],
            headers={"Authorization": "Bearer k"},
        ) as response:
            async for _ in response.aiter_bytes():
                pass
        turns[kind]["raw"].samples.append(time.perf_counter() - t0)

    runners: list[Callable[[str], Awaitable[None]]] = [raw_turn, sdk_turn, adapter_turn]
    try:
        for r in range(warmup):
            for kind in ("text", "tools"):
                for run in runners:
                    await run(kind)
        for series in [*first_byte.values(), *(s for k in turns.values() for s in k.values())]:
            series.samples.clear()
        for r in range(rounds):
            order = runners[r % 3 :] + runners[: r % 3]
            for kind in ("text", "tools"):
                for run in order:
                    await run(kind)
    finally:
        await adapter.aclose()
        await sdk.close()
        await raw.aclose()
        server.stop()

    result: dict[str, Any] = {"first_byte": [s.row() for s in first_byte.values()], "turns": {}}
    for kind, by_name in turns.items():
        rows = {name: s.row() for name, s in by_name.items()}
        rows["overhead"] = {
            "name": f"overhead: adapter - raw httpx2 ({kind})",
            "p50_ms": rows["adapter"]["p50_ms"] - rows["raw"]["p50_ms"],
            "mean_ms": rows["adapter"]["mean_ms"] - rows["raw"]["mean_ms"],
        }
        result["turns"][kind] = rows
    result["request_bytes"] = len(json.dumps(wire_bodies["text"]))
    return result


def _machine() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {
        "CPU model": cpu,
        "CPUs": str(os.cpu_count()),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": platform.platform(),
        "openai / httpx2": f"{openai.__version__} / {httpx2.__version__}",
        "load average (1, 5, 15 min)": load,
    }


def _print(result: dict[str, Any], machine: dict[str, str], rounds: int) -> None:
    print("## Machine\n")
    print("| | |\n|---|---|")
    for key, value in machine.items():
        print(f"| {key} | {value} |")
    print(f"\n## 1. First byte -> first TextDelta ({rounds} turns, goal < 2 ms)\n")
    print("| measurement | n | p50 ms | p95 ms | mean ms |\n|---|---|---|---|---|")
    for row in result["first_byte"]:
        print(f"| {row['name']} | {row['n']} | {row['p50_ms']:.3f} | {row['p95_ms']:.3f} | {row['mean_ms']:.3f} |")
    verdict = "met" if result["first_byte"][0]["p50_ms"] < 2.0 else "MISSED"
    print(f"\nGoal first byte -> first TextDelta < 2 ms (p50): {verdict}")
    print(f"\n## 2. Per-turn time ({rounds} turns each, request body {result['request_bytes']} bytes, goal overhead < 5 ms)\n")
    print("| measurement | n | p50 ms | p95 ms | mean ms |\n|---|---|---|---|---|")
    for kind, rows in result["turns"].items():
        for name in ("raw", "sdk", "adapter"):
            row = rows[name]
            print(f"| {row['name']} | {row['n']} | {row['p50_ms']:.3f} | {row['p95_ms']:.3f} | {row['mean_ms']:.3f} |")
        over = rows["overhead"]
        print(f"| **{over['name']}** | | **{over['p50_ms']:.3f}** | | {over['mean_ms']:.3f} |")
    worst = max(rows["overhead"]["p50_ms"] for rows in result["turns"].values())
    print(f"\nGoal per-turn overhead < 5 ms (p50, worst answer): {'met' if worst < 5.0 else 'MISSED'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a few rounds only (smoke run)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--json-file", type=Path, default=None, help="also write the JSON to this file (the tables still print)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (10 if args.quick else 300)
    warmup = 0 if args.quick else 20  # --quick only proves the script runs: its figures mean nothing
    result = asyncio.run(_run(rounds, warmup))
    machine = _machine()
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
