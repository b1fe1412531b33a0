#!/usr/bin/env python3
"""Where the client's CPU goes in a stdio MCP echo call (issue 12): cProfile of one process making
N calls through the app (``ToolRegistry.execute`` of an MCP tool), grouped by the parts of the
SDK's client they run in.

    .venv/bin/python benchmarks/profile_mcp_client.py [--calls 2000] [--server pipe|lowlevel|edge|everything]
                                                      [--transport sdk|direct] [--compare ROUNDS] [--top 25]

The server is one of benchmarks/bench_mcp.py's (default ``pipe``: the cheapest Python server, so
the client's share is the largest). ``--transport`` picks the stdio transport of the connection:
the SDK's ``stdio_client`` (what the app uses) or the experiment benchmarks/mcp_direct_stdio.py
(``--compare``: no profile, the two alternated). Printed: the client's CPU per call
with and without the profiler, the inclusive CPU per call of each part (parts nest: the reader
task contains the parse), and the functions with the most CPU of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_mcp import _echo_args, _server  # noqa: E402

import mcp_direct_stdio  # noqa: E402
from crewagent.core.mcp import McpManager  # noqa: E402
from crewagent.core.settings import McpSettings  # noqa: E402
from crewagent.core.tools import ToolPolicy, default_registry  # noqa: E402
from crewagent.core.tools.registry import ToolContext  # noqa: E402

#: The parts of a call, each as (label, file suffix, function name): inclusive CPU per call.
PARTS = [
    ("the whole call: ToolRegistry.execute", "tools/registry.py", "execute"),
    ("McpServer.call (app)", "core/mcp/connection.py", "call"),
    ("Client.call_tool (SDK, high level)", "mcp/client/client.py", "call_tool"),
    ("ClientSession.call_tool", "mcp/client/session.py", "call_tool"),
    ("ClientSession.send_request", "mcp/client/session.py", "send_request"),
    ("  result validation: CallToolResult from the reply dict", "pydantic/type_adapter.py", "validate_python"),
    ("  validate_tool_result (output schema)", "mcp/client/session.py", "validate_tool_result"),
    ("JSONRPCDispatcher.send_raw_request", "mcp/shared/jsonrpc_dispatcher.py", "send_raw_request"),
    ("  otel span", "mcp/shared/_otel.py", "otel_span"),
    ("JSONRPCDispatcher.run: the receive loop", "mcp/shared/jsonrpc_dispatcher.py", "run"),
    ("  _dispatch (routing a reply to its waiter)", "mcp/shared/jsonrpc_dispatcher.py", "_dispatch"),
    ("SDK stdio: stdout_reader task", "mcp/client/stdio.py", "stdout_reader"),
    ("  _parse_line (pydantic JSON-RPC validation)", "mcp/client/stdio.py", "_parse_line"),
    ("SDK stdio: stdin_writer task", "mcp/client/stdio.py", "stdin_writer"),
    ("  model_dump_json (serialisation)", "pydantic/main.py", "model_dump_json"),
    ("direct stdio: reading and validating a reply", "benchmarks/mcp_direct_stdio.py", "receive"),
    ("direct stdio: serialising and writing a request", "benchmarks/mcp_direct_stdio.py", "send"),
    ("anyio memory streams: send", "anyio/streams/memory.py", "send"),
    ("anyio memory streams: receive", "anyio/streams/memory.py", "receive"),
    ("asyncio loop: select (waiting included in CPU only as syscalls)", "selectors.py", "select"),
    ("asyncio loop: one iteration", "asyncio/base_events.py", "_run_once"),
]


async def _run(calls: int, server: str, transport: str, profile: bool) -> tuple[float, pstats.Stats | None]:
    """The client's CPU per call (ms), and the profile when asked."""
    undo = mcp_direct_stdio.install() if transport == "direct" else None
    registry = default_registry()
    with tempfile.TemporaryDirectory() as scratch:
        ctx = ToolContext(project_root=Path(scratch), state_dir=Path(scratch) / "state", conversation_id="profile")
        manager = McpManager()
        try:
            await manager.register_tools(registry, McpSettings.model_validate({"servers": [_server(server, server)]}), ToolPolicy())
            name = f"mcp__{server}__echo"
            for n in range(20):  # warm up: imports, caches, the output schema's validator
                assert (await registry.execute(name, _echo_args(server, n), ctx, call_id=f"w{n}"))["ok"]
            profiler = cProfile.Profile(time.process_time) if profile else None  # CPU, not wall: a loaded machine preempts us inside write()
            cpu = time.process_time()
            if profiler is not None:
                profiler.enable()
            for n in range(calls):
                result = await registry.execute(name, _echo_args(server, n), ctx, call_id=f"c{n}")
                assert result["ok"], result
            if profiler is not None:
                profiler.disable()
            per_call = (time.process_time() - cpu) * 1000 / calls
        finally:
            await manager.aclose()
            if undo is not None:
                undo()
    return per_call, pstats.Stats(profiler) if profiler is not None else None


def _parts(stats: pstats.Stats, calls: int) -> list[str]:
    table = stats.stats  # type: ignore[attr-defined]
    rows = ["| part of the call (inclusive, profiled) | CPU ms per call |", "|---|---|"]
    for label, suffix, func in PARTS:
        total = sum(v[3] for (file, _line, name), v in table.items() if name == func and file.replace(os.sep, "/").endswith(suffix))
        if total:
            rows.append(f"| {label} | {total * 1000 / calls:.3f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--server", default="pipe", choices=("pipe", "lowlevel", "edge", "everything"))
    parser.add_argument("--transport", default="sdk", choices=("sdk", "direct"))
    parser.add_argument("--top", type=int, default=25, help="functions listed by their own CPU")
    parser.add_argument("--compare", type=int, default=0, metavar="ROUNDS",
                        help="no profile: the client's CPU per call with each transport, ROUNDS runs of each, alternated")
    args = parser.parse_args()
    if args.compare:
        print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}, {args.calls} calls a run, server {args.server}\n")
        runs: dict[str, list[float]] = {"sdk": [], "direct": []}
        for _ in range(args.compare):
            for transport, values in runs.items():
                values.append(asyncio.run(_run(args.calls, args.server, transport, profile=False))[0])
        print("| client CPU per call, ms | runs | median |\n|---|---|---|")
        for transport, values in runs.items():
            label = "the SDK's stdio_client (the app)" if transport == "sdk" else "mcp_direct_stdio (no relay tasks)"
            print(f"| {label} | {' / '.join(f'{v:.3f}' for v in values)} | {statistics.median(values):.3f} |")
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
        return
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}, {args.calls} calls, server {args.server}, transport {args.transport}\n")
    plain, _ = asyncio.run(_run(args.calls, args.server, args.transport, profile=False))
    profiled, stats = asyncio.run(_run(args.calls, args.server, args.transport, profile=True))
    assert stats is not None
    print(f"client CPU per call: {plain:.3f} ms without the profiler, {profiled:.3f} ms with it\n")
    print("\n".join(_parts(stats, args.calls)))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
