#!/usr/bin/env python3
"""MCP benchmark (issue 12, "Performance"): the cost of a stdio MCP tool call, and parallel starts.

    .venv/bin/python benchmarks/bench_mcp.py            # 300 calls, 3 servers
    .venv/bin/python benchmarks/bench_mcp.py --quick    # 20 calls: a smoke run for the tests

1. Echo-call overhead: ``ToolRegistry.execute`` of the edge server's ``echo`` tool over stdio
   (tests/fakes/mcp_edge_server.py, the SDK's own server side) against ``execute`` of an
   in-process tool doing the same; both through the registry, so the difference is what MCP adds:
   the SDK client, JSON-RPC over pipes, the server, the result conversion. Target: p50 < 3 ms.
2. First tool list from 3 configured servers: each server started alone (its own manager), then
   the three together (``McpManager.register_tools``, which starts them in parallel). Target: the
   three together take the slowest single start plus < 50 ms.

Printed as Markdown tables; results are recorded in docs/benchmarks.md. Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "desktop"))

from crewagent.core.mcp import McpManager  # noqa: E402
from crewagent.core.settings import McpSettings  # noqa: E402
from crewagent.core.tools import ToolPolicy, ToolRegistry, default_registry  # noqa: E402
from crewagent.core.tools.registry import Tool, ToolContext  # noqa: E402
from crewagent.core.tools.results import ok  # noqa: E402

MS = 1000.0


def _server(server_id: str) -> dict[str, Any]:
    return {
        "id": server_id,
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_edge_server"],
        "cwd": str(ROOT),
        "trusted": True,
        "startTimeoutSeconds": 300,
    }


async def _echo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return ok(content=args["text"])


async def _p50(registry: ToolRegistry, name: str, ctx: ToolContext, calls: int) -> tuple[float, float]:
    times = []
    for n in range(calls + 5):
        started = time.perf_counter()
        result = await registry.execute(name, {"text": f"ping {n}"}, ctx, call_id=f"c{n}")
        elapsed = time.perf_counter() - started
        assert result["ok"], result
        if n >= 5:  # warm-up calls left out
            times.append(elapsed * MS)
    return statistics.median(times), max(times)


async def call_overhead(calls: int, scratch: Path) -> list[str]:
    manager = McpManager()
    registry = default_registry()
    registry.register(Tool(name="local.echo", description="echo", handler=_echo, parameters={"type": "object", "properties": {"text": {"type": "string"}}}))
    ctx = ToolContext(project_root=scratch, state_dir=scratch / "state", conversation_id="bench")
    try:
        await manager.register_tools(registry, McpSettings.model_validate({"servers": [_server("edge")]}), ToolPolicy())
        local_p50, local_max = await _p50(registry, "local.echo", ctx, calls)
        mcp_p50, mcp_max = await _p50(registry, "mcp__edge__echo", ctx, calls)
    finally:
        await manager.aclose()
    sdk_p50, sdk_max = await _sdk_p50(calls)
    return [
        "| echo call | p50 ms | max ms |",
        "|---|---|---|",
        f"| in process | {local_p50:.3f} | {local_max:.2f} |",
        f"| stdio MCP | {mcp_p50:.3f} | {mcp_max:.2f} |",
        f"| **overhead (p50)** | **{mcp_p50 - local_p50:.3f}** (target < 3) | |",
        f"| the SDK alone: `ClientSession.call_tool` on the same server, no app | {sdk_p50:.3f} | {sdk_max:.2f} |",
        f"| what the app adds to the SDK's call (p50) | {mcp_p50 - sdk_p50:.3f} | |",
    ]


async def _sdk_p50(calls: int) -> tuple[float, float]:
    """The floor: the SDK's own client calling the same server, nothing of the app around it."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    spec = _server("sdk")
    params = StdioServerParameters(command=spec["command"], args=spec["args"], cwd=spec["cwd"])
    times = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for n in range(calls + 5):
            started = time.perf_counter()
            result = await session.call_tool("echo", {"text": f"ping {n}"})
            elapsed = time.perf_counter() - started
            assert not result.is_error, result
            if n >= 5:
                times.append(elapsed * MS)
    return statistics.median(times), max(times)


async def _first_list(ids: list[str]) -> float:
    manager = McpManager()
    try:
        started = time.perf_counter()
        added = await manager.register_tools(default_registry(), McpSettings.model_validate({"servers": [_server(i) for i in ids]}), ToolPolicy())
        elapsed = time.perf_counter() - started
        assert added == ids, added
        return elapsed * MS
    finally:
        await manager.aclose()


async def parallel_starts() -> list[str]:
    singles = [await _first_list([f"s{n}"]) for n in range(3)]
    together = await _first_list(["s0", "s1", "s2"])
    slowest = max(singles)
    return [
        "| first tool list | ms |",
        "|---|---|",
        *[f"| server {n} alone | {t:.0f} |" for n, t in enumerate(singles)],
        f"| 3 servers together | {together:.0f} |",
        f"| **together - slowest alone** | **{together - slowest:.0f}** (target < 50) |",
        f"| the three one after the other (sum), on {os.cpu_count()} cores | {sum(singles):.0f} |",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 calls: a smoke run")
    parser.add_argument("--calls-only", action="store_true", help="only the call overhead (no start timings)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(f"python {sys.version.split()[0]}, {sys.platform}\n")
        print("\n".join(await call_overhead(20 if args.quick else 300, Path(scratch))))
        if not args.calls_only:
            print()
            print("\n".join(await parallel_starts()))


if __name__ == "__main__":
    asyncio.run(main())
