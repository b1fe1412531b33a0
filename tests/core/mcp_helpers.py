"""Helpers of the MCP tests: server entries for the edge server and the real ones, and process checks."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.mcp import McpManager
from crewagent.core.settings import McpSettings
from crewagent.core.tools import ToolPolicy, ToolRegistry, default_registry
from crewagent.core.tools.registry import ToolContext
from tests.fakes import mcp_fork

REPO = Path(__file__).resolve().parents[2]
#: Where `make test` installs @modelcontextprotocol/server-everything with npm (git-ignored).
NPM_FOLDER = REPO / ".mcp-test-servers"
EVERYTHING = NPM_FOLDER / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
#: Starts are slow on a loaded 2-core machine (a Python server imports the SDK: seconds).
START_TIMEOUT = 300.0
#: The xdist group of every test that starts an MCP server from the test process: the app imports
#: the SDK then (0.8-1.4 CPU-s, tests/core/test_mcp_edge.py's module docstring), once per process,
#: so one worker pays it instead of each of them (the tests take ~20 s together); so does the
#: session's MCP fork server (tests/fakes/mcp_fork.py), started once by the first test that needs it.
MCP_GROUP = "mcp"


def everything_missing() -> str | None:
    """Why the server-everything tests cannot run here (None: they can)."""
    if shutil.which("node") is None:
        return "node is not installed: the @modelcontextprotocol/server-everything tests are skipped"
    if not EVERYTHING.is_file():
        return f"@modelcontextprotocol/server-everything is not installed in {NPM_FOLDER} (`make test` installs it with npm)"
    return None


def mark() -> str:
    return f"--mark=crewagent-test-{uuid.uuid4().hex}"


def edge_server(server_id: str, *flags: str, **fields: Any) -> dict[str, Any]:
    """A settings entry for tests/fakes/mcp_edge_server.py (run from the repo, so ``tests`` imports)."""
    return {
        "id": server_id,
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_edge_server", *flags],
        "cwd": str(REPO),
        "startTimeoutSeconds": START_TIMEOUT,
        **fields,
    }


def forked_edge_server(server_id: str, *flags: str, **fields: Any) -> dict[str, Any]:
    """:func:`edge_server`, run as a fork of the session's MCP fork server (the ``mcp_fork_server``
    fixture, tests/fakes/mcp_fork.py): the SDK's server side without its 2 CPU-s of imports."""
    command, *args = mcp_fork.command("tests.fakes.mcp_edge_server", *flags)
    return {**edge_server(server_id, **fields), "command": command, "args": args}


def echo_server(server_id: str, *flags: str, **fields: Any) -> dict[str, Any]:
    """A settings entry for tests/fakes/mcp_echo_server.py: the edge server's tools without the SDK's
    2 CPU-s of imports, for the tests about the app rather than about the SDK's server side."""
    return {**edge_server(server_id, *flags, **fields), "args": ["-m", "tests.fakes.mcp_echo_server", *flags]}


def processes_with(text: str) -> list[int]:
    """The live processes whose command line contains ``text`` (Linux /proc; zombies are not alive)."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc to find processes")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_listed(pid: int, text: str, timeout: float = 10.0) -> list[int]:
    """The processes with ``text`` in their command line, once ``pid`` is among them (or at ``timeout``).

    A process that Popen has just started may not show its command line yet: exec closes the
    parent's error pipe (Popen returns) before the kernel has set up the new arguments."""
    deadline = time.monotonic() + timeout
    while pid not in (found := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def wait_gone(text: str, timeout: float = 20.0) -> list[int]:
    """Until no process has ``text`` in its command line; what is left after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (left := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop for a module's tests, so they share started servers (the loop owns them)."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def registry_with(loop: asyncio.AbstractEventLoop, manager: McpManager, settings: McpSettings, policy: ToolPolicy | None = None) -> tuple[ToolRegistry, list[str]]:
    registry = default_registry()
    added = loop.run_until_complete(manager.register_tools(registry, settings, policy or ToolPolicy()))
    return registry, added


def context(tmp_path: Path, **fields: Any) -> ToolContext:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return ToolContext(project_root=project, state_dir=tmp_path / "state", conversation_id="conv-1", **fields)


def processes_with_env(text: str) -> list[int]:
    """The live processes whose environment contains ``text`` (Linux /proc)."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc to find processes")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if text.encode() in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found
