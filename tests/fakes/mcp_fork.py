"""MCP servers written with the SDK, started as forks of one interpreter that imported the SDK once.

A Python MCP server built on the SDK (mcp-server-time, tests/fakes/mcp_edge_server.py) spends
~2 CPU-s of its start importing the SDK's protocol types (pydantic models of three protocol
versions) before it reads a byte; answering ``initialize``, ``tools/list`` and a call then costs
~0.1 CPU-s. This module runs such a server as a fork of a preloaded parent instead:

- the **fork server** (``MCPForkServer``, one per test session, tests/fakes/fixtures.py's
  ``mcp_fork_server``) imports ``PRELOAD`` once, then listens on a Unix socket;
- the **command** the app starts is this file as a script (``command``: ``python -S
  mcp_fork.py <socket> <module> [args...]``), a real process in the app's new session, with the
  app's pipes as its stdin, stdout and stderr. It hands those three descriptors, its environment,
  folder, command line and the server module over the socket, and the fork server forks a child
  that takes them as its own and runs ``python -m <module> [args...]`` as that would
  (``runpy``). The child reads the app's requests from the app's stdin pipe and writes the
  replies to the app's stdout pipe itself: the stdio is the same real pipes;
- the child shows the command's own command line and environment in /proc (written over the
  fork server's, which are padded for it), so the tests that find a server by a mark in its
  command line or environment find both processes;
- the command lives as long as the child: it exits with the child's exit status (or signal),
  passes on the signals it gets (SIGTERM, SIGINT, SIGHUP), and when it is killed (the app kills
  a stopped server's process group with SIGKILL) its end of the socket closes and the fork server
  kills the child's process group at once. Closing the fork server kills the children left.

Without a fork server on the socket (not started, or gone), the command becomes the server
itself (``exec python -m <module> [args...]``): a fresh interpreter, as before.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

#: What the SDK-based servers of the tests import (mcp-server-time, tests/fakes/mcp_edge_server.py).
PRELOAD = (
    "mcp",
    "mcp.server.stdio",
    "mcp.server.mcpserver",
    "mcp.server.mcpserver.exceptions",
    "mcp_server_time.server",
    "anyio._backends._asyncio",
    "argparse",
)
SCRIPT = Path(__file__).resolve()
_MAX = 1 << 20
#: Room in the fork server's command line and environment for a command's own (see _show_as).
_ARG_ROOM = 4096
_ENV_ROOM = 32768
_PAD = "CREWAGENT_MCP_FORK_PAD"
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


_socket: tuple[int, Path] | None = None


def socket_path() -> Path:
    """Where this process's fork server listens: fixed before it starts (and whether it does), so
    that server entries made when a test module is imported can name it."""
    import tempfile
    import uuid

    global _socket
    if _socket is None or _socket[0] != os.getpid():
        _socket = (os.getpid(), Path(tempfile.gettempdir()) / f"crewagent-mcp-fork-{uuid.uuid4().hex[:16]}.sock")
    return _socket[1]


def command(module: str, *args: str) -> list[str]:
    """The ``[command, *args]`` of a server that runs ``python -m module args`` as a fork of this
    process's fork server (a fresh ``python -m module args`` when that is not running)."""
    return [sys.executable, "-S", str(SCRIPT), str(socket_path()), module, *args]


# --- the command the app starts (stdlib only: it runs with -S) ---------------------------------


def _fresh(module: str, args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


def _proc(name: str) -> bytes:
    with open(f"/proc/self/{name}", "rb") as file:
        return file.read()


def _client(socket_path: str, module: str, args: list[str]) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(socket_path)
    except OSError:
        conn.close()
        _fresh(module, args)  # no fork server: this process becomes the server
    request = {
        "module": module, "args": args, "env": dict(os.environ), "cwd": os.getcwd(),
        "cmdline": _proc("cmdline").hex(), "environ": _proc("environ").hex(),
    }
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    reply = conn.recv(_MAX)
    if not reply:
        sys.exit("mcp_fork: the fork server closed the connection")
    child = int(json.loads(reply)["pid"])
    # The child holds the app's pipes now: only it keeps stdin and stdout open, so the app sees
    # the end of the server's output when the child exits, as with a server it started itself.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    def forward(signum: int, _frame: object) -> None:
        try:
            os.killpg(child, signum)
        except ProcessLookupError:
            pass

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    message = conn.recv(_MAX)
    if not message:
        sys.exit("mcp_fork: the fork server ended")
    status = int(json.loads(message)["status"])
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


# --- the fork server ---------------------------------------------------------------------------


def _show_as(cmdline: bytes, environ: bytes) -> None:
    """Write the command's command line and environment over this process's own, as /proc shows
    them (the kernel reads them from the process's memory: arg_start..arg_end, env_start..env_end
    of /proc/self/stat); the fork server's are padded, so the command's fit."""
    import ctypes

    fields = _proc("stat").rsplit(b")", 1)[1].split()
    arg_start, arg_end, env_start, env_end = (int(value) for value in fields[45:49])
    for start, end, data in ((arg_start, arg_end, cmdline), (env_start, env_end, environ)):
        size = end - start
        if size <= 0:
            continue
        data = data[: size - 1]
        ctypes.memmove(start, data + b"\0" * (size - len(data)), size)


def _child(request: dict[str, Any], fds: list[int], inherited: list[int]) -> None:  # pragma: no cover - a forked child
    import runpy
    import traceback

    from tests.fakes.preforked import leave  # before sys.path[0] becomes the command's folder

    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for fd in inherited:  # the fork server's socket, wake-up pipe and other commands' connections
            os.close(fd)
        os.setpgid(0, 0)  # its own group: the fork server kills it and its children together
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd, target in zip(fds, (0, 1, 2)):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        cwd = str(request["cwd"])
        os.chdir(cwd)
        os.environ.clear()  # also unsets the C environment's entries that point into the old block
        os.environ.update(request["env"])
        _show_as(bytes.fromhex(request["cmdline"]), bytes.fromhex(request["environ"]))
        module, args = str(request["module"]), [str(arg) for arg in request["args"]]
        sys.path[0] = cwd  # as `python -m` puts the working folder first
        sys.argv = [module, *args]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
    finally:
        leave(code)


def _serve(socket_path: str) -> None:  # pragma: no cover - runs in the fork server
    import gc
    import importlib
    import selectors

    from tests.fakes.preforked import freeze_preload, sigchld_wakeup

    gc.disable()  # no collections while importing (~10 % of the imports' CPU): one at the end
    for name in PRELOAD:
        importlib.import_module(name)
    freeze_preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(socket_path)
    listener.listen(16)
    wakeup = sigchld_wakeup()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wakeup[0], selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # the test's end: closed at the end of the session
    child_of: dict[socket.socket, int | None] = {}  # a command's connection -> its live child
    conn_of: dict[int, socket.socket] = {}

    def drop(conn: socket.socket) -> None:
        selector.unregister(conn)
        conn.close()
        child_of.pop(conn, None)

    def kill(pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    os.write(1, b"ready\n")
    running = True
    while running:
        for key, _events in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                child_of[conn] = None
                selector.register(conn, selectors.EVENT_READ)
            elif key.fileobj == wakeup[0]:
                try:
                    os.read(wakeup[0], 512)
                except BlockingIOError:
                    pass
            elif key.fileobj == 0:
                if not os.read(0, 512):
                    running = False
            elif isinstance(key.fileobj, socket.socket):
                conn = key.fileobj
                try:
                    message, fds, _flags, _address = socket.recv_fds(conn, _MAX, 3)
                except OSError:
                    message, fds = b"", []
                if not message:  # the command ended: its child goes too (killed with SIGKILL)
                    pid = child_of.get(conn)
                    if pid is not None:
                        kill(pid)
                    drop(conn)
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _child(json.loads(message), fds, [listener.fileno(), *wakeup, *(c.fileno() for c in child_of)])
                try:
                    os.setpgid(pid, pid)  # as the child does: its group exists before the command can signal it
                except OSError:
                    pass
                for fd in fds:
                    os.close(fd)
                child_of[conn], conn_of[pid] = pid, conn
                try:
                    conn.send(json.dumps({"pid": pid}).encode())
                except OSError:
                    pass  # the command is gone: its end of the socket reads as closed next
        while conn_of:  # reap: tell each command its child's status
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = conn_of.pop(pid)
            if child_of.get(conn) == pid:
                child_of[conn] = None
                try:
                    conn.send(json.dumps({"status": status}).encode())
                except OSError:
                    pass
    for pid in list(conn_of):  # the end of the session: no child outlives the server
        kill(pid)
        os.waitpid(pid, 0)


class MCPForkServer:
    """This process's started fork server (see the module's docstring), on ``socket_path()``.
    Close it (or use ``with``) to stop it and the servers still running."""

    def __init__(self) -> None:
        import subprocess

        self.socket_path = socket_path()
        self.socket_path.unlink(missing_ok=True)
        env = {**os.environ, _PAD: "x" * _ENV_ROOM}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.mcp_fork", "serve", str(self.socket_path), "_" * _ARG_ROOM],
            cwd=SCRIPT.parents[2], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline()
        if ready.strip() != b"ready":
            self._proc.kill()
            self._proc.wait(30)
            raise RuntimeError(f"the MCP fork server did not start (exit code {self._proc.poll()})")

    def close(self) -> None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.close()
        self._proc.wait(30)
        self._proc.stdout.close()
        self.socket_path.unlink(missing_ok=True)

    def __enter__(self) -> MCPForkServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        _serve(sys.argv[2])
    else:
        _client(sys.argv[1], sys.argv[2], sys.argv[3:])
