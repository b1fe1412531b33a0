#!/usr/bin/env python3
"""MCP benchmark (issue 12, "Performance"): the cost of a stdio MCP tool call, and parallel starts.

    .venv/bin/python benchmarks/bench_mcp.py            # 300 calls, 3 servers
    .venv/bin/python benchmarks/bench_mcp.py --quick    # 20 calls: a smoke run for the tests

1. Echo-call overhead: ``ToolRegistry.execute`` of the edge server's ``echo`` tool over stdio
   (tests/fakes/mcp_edge_server.py, the SDK's own server side) against ``execute`` of an
   in-process tool doing the same; both through the registry, so the difference is what MCP adds:
   the SDK client, JSON-RPC over pipes, the server, the result conversion. Target: p50 < 3 ms.
   Measured against four servers: the edge server (the SDK's ``MCPServer``, formerly FastMCP) and
   benchmarks/mcp_echo_server.py (the SDK's low-level ``Server``: the cheapest honest echo), the
   same with its stdio fed without worker threads, and the MCP project's own reference server,
   the Node ``@modelcontextprotocol/server-everything`` (its ``echo`` tool; `make` installs it into
   .mcp-test-servers/, the column is skipped with the reason when node or the package is absent).
   For each, the SDK's own ``ClientSession.call_tool`` on the same server, nothing of the app
   around it, is the floor; "app − SDK" is what the app adds. A third column of calls goes through
   the app with an app-owned stdio transport (the experiment mcp_direct_stdio.py, no relay tasks),
   to show what the SDK's ``stdio_client`` costs the client.
2. First tool list from 3 configured servers: each server started alone (its own manager), then
   the three together (``McpManager.register_tools``, which starts them in parallel). Target: the
   three together take the slowest single start plus < 50 ms. Two scenarios: servers whose start
   *waits* (mcp_wait_server.py: a server connecting somewhere on start), where the app's
   parallelism is what is measured; and the CPU-bound Python starts of the SDK's server (an
   interpreter importing the SDK, 1.2-2.6 CPU-s each), which cannot overlap on fewer cores than servers.
3. App cold start (``crewagent gui`` to the Works list painted, ``CREWAGENT_STARTUP_PROBE``) with
   5 MCP servers configured against none, runs alternated; and that no server process started.

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
from collections.abc import Callable
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


sys.path.insert(0, str(ROOT / "benchmarks"))
import mcp_direct_stdio  # noqa: E402

ECHO_SERVER = str(ROOT / "benchmarks" / "mcp_echo_server.py")
WAIT_SERVER = str(ROOT / "benchmarks" / "mcp_wait_server.py")

#: The echo servers of the call benchmark, by kind: their column title.
KINDS = {
    "edge": "MCPServer (FastMCP) edge server",
    "lowlevel": "low-level `Server` echo",
    "pipe": "low-level, stdio without threads",
    "everything": "Node `server-everything` (reference)",
}


def _echo_args(kind: str, n: int) -> dict[str, Any]:
    """The echo tool's arguments: server-everything names its one argument ``message``."""
    return {"message" if kind == "everything" else "text": f"ping {n}"}


def _everything() -> tuple[str, str | None]:
    """server-everything's entry script, and why it cannot run here (None: it can); the tests' check."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.core.mcp_helpers import EVERYTHING, everything_missing

    return str(EVERYTHING), everything_missing()


def _server(server_id: str, kind: str = "edge", *extra: str) -> dict[str, Any]:
    """A settings entry: ``edge`` (tests/fakes/mcp_edge_server.py, MCPServer), ``lowlevel`` (mcp_echo_server.py)
    or ``wait`` (mcp_wait_server.py: its start is waiting; ``extra``: the seconds)."""
    if kind == "everything":
        return {"id": server_id, "command": "node", "args": [_everything()[0], "stdio"], "trusted": True, "startTimeoutSeconds": 300}
    if kind == "wait":
        args = ["-S", WAIT_SERVER, *extra]
    elif kind == "pipe":  # the low-level server with the SDK's stdio transport fed without threads
        args = [ECHO_SERVER, "--pipe-io", *extra]
    else:
        args = ["-m", "tests.fakes.mcp_edge_server", *extra] if kind == "edge" else [ECHO_SERVER, *extra]
    return {"id": server_id, "command": sys.executable, "args": args, "cwd": str(ROOT), "trusted": True, "startTimeoutSeconds": 300}


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


async def call_overhead(calls: int, scratch: Path, only: list[str] | None = None) -> list[str]:
    registry = default_registry()
    registry.register(Tool(name="local.echo", description="echo", handler=_echo, parameters={"type": "object", "properties": {"text": {"type": "string"}}}))
    ctx = ToolContext(project_root=scratch, state_dir=scratch / "state", conversation_id="bench")
    local_p50, local_max = await _p50(registry, "local.echo", ctx, calls)
    kinds = [kind for kind in KINDS if kind in only] if only else list(KINDS)
    missing = _everything()[1] if "everything" in kinds else None
    if missing is not None:
        kinds.remove("everything")
        print(f"server-everything column skipped: {missing}\n")
    rows = [
        "| echo call, p50 ms (max) | " + " | ".join(KINDS[kind] for kind in kinds) + " |",
        "|---|" + "---|" * len(kinds),
        f"| in process (a registry tool doing the same) | {local_p50:.3f} ({local_max:.1f}) |" + " |" * (len(kinds) - 1),
    ]
    for kind in kinds:
        managers = {side: McpManager() for side in SIDES if side != "sdk"}
        registries = {side: default_registry() for side in managers}
        try:
            for side, manager in managers.items():
                undo = mcp_direct_stdio.install() if side == "direct" else None  # read when the server starts
                try:
                    settings = McpSettings.model_validate({"servers": [_server(kind, kind)]})
                    await manager.register_tools(registries[side], settings, ToolPolicy())
                finally:
                    if undo is not None:
                        undo()
            await _side_by_side(registries, f"mcp__{kind}__echo", ctx, calls, kind)
        finally:
            for manager in managers.values():
                await manager.aclose()

    def cells(value: Callable[[str], str]) -> str:
        return " | ".join(value(kind) for kind in kinds)

    def wall(side: str) -> str:
        return cells(lambda k: f"{_median(side, k, WALL):.3f} ({max(WALL[side, k]):.1f})")

    def overhead(k: str) -> str:
        return f"**{_median('app', k, WALL) - local_p50:.3f}**"

    def added(k: str) -> str:
        return f"{_median('app', k, WALL) - _median('sdk', k, WALL):.3f}"

    rows += [
        f"| stdio MCP through the app (`ToolRegistry.execute`) | {wall('app')} |",
        f"| **overhead over in process** (target < 3) | {cells(overhead)} |",
        f"| the app with an app-owned stdio transport (experiment, mcp_direct_stdio.py) | {wall('direct')} |",
        f"| the SDK alone: `ClientSession.call_tool` over `stdio_client`, same server | {wall('sdk')} |",
        f"| what the app adds to the SDK's call | {cells(added)} |",
    ]
    rows += [f"| client CPU per call, {SIDES[side]} (median ms) | {cells(lambda k: f'{_median(side, k, CPU):.3f}')} |" for side in SIDES]
    return rows


#: The three ways each echo call is made, alternated call by call so that all see the same load.
SIDES = {
    "app": "the app",
    "direct": "the app, app-owned stdio (experiment)",
    "sdk": "the SDK alone",
}


async def _side_by_side(registries: dict[str, ToolRegistry], name: str, ctx: ToolContext, calls: int, kind: str) -> None:
    """Each call made three ways in turn (the app, the app with the experimental transport, the
    SDK's bare ``ClientSession.call_tool`` to a third server of the same kind: nothing of the app
    around it, the floor), so that all three see the same machine load; into WALL and CPU."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    spec = _server("sdk", kind)
    params = StdioServerParameters(command=spec["command"], args=spec["args"], cwd=spec.get("cwd"))
    with open(os.devnull, "w") as quiet:  # the server's start banner (server-everything has one) stays off the table
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for n in range(calls + 5):
                for side in SIDES:
                    started, cpu_start = time.perf_counter(), time.process_time()
                    if side == "sdk":
                        reply = await session.call_tool("echo", _echo_args(kind, n))
                        assert not reply.is_error, reply
                    else:
                        result = await registries[side].execute(name, _echo_args(kind, n), ctx, call_id=f"c{n}")
                        assert result["ok"], result
                    if n >= 5:  # warm-up calls left out
                        WALL.setdefault((side, kind), []).append((time.perf_counter() - started) * MS)
                        CPU.setdefault((side, kind), []).append((time.process_time() - cpu_start) * MS)


def _median(side: str, kind: str, table: dict[tuple[str, str], list[float]]) -> float:
    return statistics.median(table[side, kind])


#: Wall time per call (ms), by (side, server kind).
WALL: dict[tuple[str, str], list[float]] = {}
#: The client process's CPU time per call (``time.process_time``), by (side, server kind): far
#: less sensitive to the machine's load than wall time, which mostly measures waiting for a core.
CPU: dict[tuple[str, str], list[float]] = {}


async def _first_list(ids: list[str], kind: str = "edge", *extra: str) -> float:
    manager = McpManager()
    try:
        started = time.perf_counter()
        servers = [_server(i, kind, *extra) for i in ids]
        added = await manager.register_tools(default_registry(), McpSettings.model_validate({"servers": servers}), ToolPolicy())
        elapsed = time.perf_counter() - started
        assert added == ids, added
        return elapsed * MS
    finally:
        await manager.aclose()


async def parallel_starts(kind: str, *extra: str) -> list[float]:
    """Each of 3 servers alone, then the 3 together: [alone 0, alone 1, alone 2, together]."""
    singles = [await _first_list([f"s{n}"], kind, *extra) for n in range(3)]
    return [*singles, await _first_list(["s0", "s1", "s2"], kind, *extra)]


def start_table(waiting: list[float], cpu: list[float], delay: float) -> list[str]:
    rows = ["| first tool list, ms | servers that wait " + f"{delay:g} s on start (mcp_wait_server.py) | CPU-bound Python starts (edge server, SDK) |", "|---|---|---|"]
    rows += [f"| server {n} alone | {waiting[n]:.0f} | {cpu[n]:.0f} |" for n in range(3)]
    rows.append(f"| 3 servers together | {waiting[3]:.0f} | {cpu[3]:.0f} |")
    rows.append(f"| **together − slowest alone** (target < 50) | **{waiting[3] - max(waiting[:3]):.0f}** | **{cpu[3] - max(cpu[:3]):.0f}** |")
    rows.append(f"| the three one after the other (sum), on {os.cpu_count()} cores | {sum(waiting[:3]):.0f} | {sum(cpu[:3]):.0f} |")
    return rows


def cold_start(runs: int, scratch: Path, servers: int = 5) -> list[str]:
    """``crewagent gui`` to its first paints with ``servers`` MCP servers configured and with none, alternated."""
    import json
    import subprocess
    import uuid

    from crewagent.core.messages import ConversationMessage
    from crewagent.core.store import RuntimeStore

    marker = f"crewagent-bench-cold-{uuid.uuid4().hex}"
    folders = {}
    for label, count in (("none", 0), (f"{servers} servers", servers)):
        base = scratch / f"cold-{count}"
        data, config, project = base / "data", base / "config", base / "project"
        for folder in (data, config, project):
            folder.mkdir(parents=True)
        store = RuntimeStore(data)
        info = store.create_project(project, "Cold start")
        for n in range(20):  # the probe's second milestone is the Works list painted with conversations
            meta = store.create_conversation(info.id)
            store.append_messages(info.id, meta.id, [ConversationMessage.new("user", f"question {n}"), ConversationMessage.new("assistant", f"answer {n}")])
        store.flush()
        entries = [_server(f"cold{n}", "lowlevel", "--start-delay", "5", marker) for n in range(count)]
        (config / "settings.json").write_text(json.dumps({"mcp": {"enabled": True, "servers": entries}}), encoding="utf-8")
        folders[label] = (data, config, project)
    times: dict[str, list[dict[str, float]]] = {label: [] for label in folders}
    for _ in range(runs):
        for label, (data, config, project) in folders.items():
            env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"), CREWAGENT_CONFIG_DIR=str(config),
                       CREWAGENT_DATA_DIR=str(data), CREWAGENT_STARTUP_PROBE="1", PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
                       PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "desktop"), os.environ.get("PYTHONPATH", "")])))
            start = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "crewagent", "gui", "--data-dir", str(data), "--project", str(project)],
                                  capture_output=True, text=True, timeout=180, env=env)
            marks = {}
            for line in proc.stderr.splitlines():
                if line.startswith("crewagent-startup "):
                    _, name, stamp, *_rest = line.split()
                    marks[name] = (float(stamp) - start) * MS
            if proc.returncode != 0 or "works" not in marks:
                raise SystemExit(f"cold start run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
            times[label].append(marks)
    started = _processes_with(marker)
    rows = ["| app cold start, median ms (min–max) | main window painted | Works list painted |", "|---|---|---|"]
    for label, marks in times.items():
        cells = []
        for name in ("window", "works"):
            values = [m[name] for m in marks]
            cells.append(f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})")
        rows.append(f"| MCP servers configured: {label} | {cells[0]} | {cells[1]} |")
    rows.append(f"| server processes started by those runs | | {len(started)} |")
    return rows


def _processes_with(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (Linux /proc; elsewhere: none found)."""
    found = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 calls: a smoke run")
    parser.add_argument("--calls-only", action="store_true", help="only the call overhead (no start timings)")
    parser.add_argument("--cold-only", action="store_true", help="only the app cold start")
    parser.add_argument("--servers", default="", help=f"comma-separated echo servers of the call table (default all: {','.join(KINDS)})")
    parser.add_argument("--cold-runs", type=int, default=3, help="app cold starts per configuration (0: none)")
    args = parser.parse_args()
    delay = 0.2 if args.quick else 0.8
    with tempfile.TemporaryDirectory() as scratch:
        print(f"python {sys.version.split()[0]}, {sys.platform}, load average {os.getloadavg()[0]:.1f}\n")
        if args.cold_only:
            print("\n".join(cold_start(max(1, args.cold_runs), Path(scratch))))
            return
        only = [kind for kind in args.servers.split(",") if kind]
        if unknown := set(only) - set(KINDS):
            parser.error(f"unknown --servers {', '.join(sorted(unknown))}; known: {', '.join(KINDS)}")
        print("\n".join(await call_overhead(20 if args.quick else 300, Path(scratch), only)))
        if not args.calls_only:
            print()
            waiting = await parallel_starts("wait", str(delay))
            print("\n".join(start_table(waiting, await parallel_starts("edge"), delay)))
            if args.cold_runs and not args.quick:
                print()
                print("\n".join(cold_start(args.cold_runs, Path(scratch))))
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
