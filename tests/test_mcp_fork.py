"""tests/fakes/mcp_fork.py: the MCP tests' SDK servers forked from one preloaded interpreter.

The MCP tests' "quitting leaves nothing" checks find a server by a mark in its command line or
environment: they hold for a forked server only if the fork shows the command's own, and ends
when the command the app started is killed. Both are checked here, with the edge server's modes
that answer without the SDK (cheap whichever way they start)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.core.mcp_helpers import MCP_GROUP, REPO, mark, processes_with, processes_with_env, wait_gone
from tests.fakes import mcp_fork
from tests.fakes.mcp_fork import MCPForkServer

pytestmark = [
    pytest.mark.xdist_group(MCP_GROUP),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the MCP fork server is Linux-only (it rewrites what /proc shows)"),
]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _start(command: list[str], marker: str) -> subprocess.Popen[bytes]:
    """As the SDK starts a stdio server: pipes, a new session, a chosen environment."""
    env = {"PATH": os.environ.get("PATH", ""), "CREWAGENT_TEST_MARK": marker}
    return subprocess.Popen(
        command, cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert condition(), "timed out"


def test_a_forked_server_answers_on_the_command_s_pipes_shows_its_marks_and_exits_with_it(
    mcp_fork_server: MCPForkServer | None, started: list[subprocess.Popen[bytes]]
) -> None:
    marker = mark()
    proc = _start(mcp_fork.command("tests.fakes.mcp_edge_server", "--bad-replies", marker), marker)
    started.append(proc)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "bad"
    # Two processes: the command and its fork, which shows the command's command line and environment.
    [server] = [pid for pid in processes_with(marker) if pid != proc.pid]
    assert sorted(processes_with_env(marker)) == sorted([proc.pid, server])
    assert os.getpgid(server) != os.getpgid(proc.pid)  # the fork is not in the command's group...
    proc.stdin.close()  # ...and ends on its own at the end of its input, as the server would
    assert proc.wait(30) == 0
    assert wait_gone(marker) == []


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_command_s_process_group_ends_the_forked_server(
    signum: int, mcp_fork_server: MCPForkServer | None, started: list[subprocess.Popen[bytes]]
) -> None:
    """The app stops a server by signalling its process group (SIGTERM, then SIGKILL): a killed
    command takes its fork with it (the fork server kills it), a terminated one passes the signal on."""
    marker = mark()
    proc = _start(mcp_fork.command("tests.fakes.mcp_edge_server", "--hang-initialize", marker), marker)
    started.append(proc)
    assert proc.stderr is not None
    assert proc.stderr.readline() == b"hanging before initialize\n"  # written by the fork, on the command's stderr
    _until(lambda: len(processes_with(marker)) == 2)
    os.killpg(proc.pid, signum)
    assert proc.wait(30) == -signum
    assert wait_gone(marker) == []


def test_without_a_fork_server_the_command_becomes_the_server(tmp_path: Path, started: list[subprocess.Popen[bytes]]) -> None:
    marker = mark()
    command = [sys.executable, "-S", str(mcp_fork.SCRIPT), str(tmp_path / "nobody.sock"), "tests.fakes.mcp_edge_server", "--bad-replies", marker]
    proc = _start(command, marker)
    started.append(proc)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    assert processes_with(marker) == [proc.pid]  # exec'd: `python -m tests.fakes.mcp_edge_server` itself
    proc.stdin.close()
    assert proc.wait(30) == 0
