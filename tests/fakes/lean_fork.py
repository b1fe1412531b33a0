"""Kill-loop children forked from a lean interpreter instead of the (big) test process.

A fork costs the parent time in proportion to its size: a pytest worker that has imported Qt,
the app and the test modules (150-600 MB) spends 10-30 ms of CPU per ``os.fork`` and the child as
much again tearing its copy down, where a process that imported only the store spends under 1 ms.
A loop of hundreds of kills forks from one of these instead: a server started with ``python -c``
that imports ``preload`` once, then on request forks a child that runs a module-level function
``module:function(write_fd, *args)``. The children are real processes; the test signals them by
pid, and asks the server (their parent) for their exit status.

    with LeanForker(["tests.core.store_crash_child"]) as forker:
        read_fd, write_fd = os.pipe()
        pid = forker.fork("tests.core.store_crash_child:append_forever", write_fd, str(data_dir))
        os.close(write_fd)
        os.kill(pid, signal.SIGKILL)
        status = forker.wait(pid)  # as os.waitpid's status

Closing the forker ends and reaps the server, which first kills and reaps any child not waited
for (a test that failed before its kill leaves no appender running); so the server's CPU and its
children's count as this process's children (RUSAGE_CHILDREN), as a direct fork's would.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, NoReturn

_START = "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); from tests.fakes.lean_fork import _serve; _serve()"
_MAX = 1 << 16


class LeanForker:
    """A started fork server; ``fork`` runs a function in a new child of it. Close it (or use ``with``)."""

    def __init__(self, preload: Sequence[str] = ()) -> None:
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _START, json.dumps(sys.path), str(theirs.fileno()), *preload],
                pass_fds=[theirs.fileno()],
            )
        if self._receive() != {"ready": True}:
            raise RuntimeError("the fork server did not start")
        #: The CPU-s (user + system) of each child waited for, by pid (``wait4`` in the server).
        self.cpu: dict[int, float] = {}

    def fork(self, target: str, write_fd: int, *args: Any) -> int:
        """Fork a child that runs ``target(its copy of write_fd, *args)`` (JSON arguments) and then
        exits 0, or 1 after writing ``ERROR <traceback>`` to the fd; its pid."""
        socket.send_fds(self._sock, [json.dumps({"fork": target, "args": args}).encode()], [write_fd])
        return int(self._receive()["pid"])

    def wait(self, pid: int) -> int:
        """Wait for a child of ``fork`` to end; its status, as ``os.waitpid`` gives it."""
        self._sock.send(json.dumps({"wait": pid}).encode())
        reply = self._receive()
        self.cpu[pid] = reply["cpu"]
        return int(reply["status"])

    def close(self) -> None:
        self._sock.close()  # the server ends at the end of its requests
        self._proc.wait(30)

    def __enter__(self) -> LeanForker:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _receive(self) -> dict[str, Any]:
        message = self._sock.recv(_MAX)
        if not message:
            raise RuntimeError(f"the fork server ended (exit code {self._proc.poll()})")
        reply: dict[str, Any] = json.loads(message)
        return reply


def run_child(body: Callable[[], None], write_fd: int) -> NoReturn:  # pragma: no cover - runs in a child
    """In a forked child: ``body()``, then exit at once (never back into the parent's code: pytest);
    a failure is reported on ``write_fd`` as one ``ERROR <traceback>`` line, with exit status 1."""
    code = 0
    try:
        body()
    except BaseException:
        code = 1
        try:
            os.write(write_fd, ("ERROR " + traceback.format_exc().replace("\n", " | ") + "\n").encode())
        except BaseException:
            pass
    finally:
        os._exit(code)


def fork_child(body: Callable[[int], None]) -> tuple[int, int]:
    """Fork this process into a child that runs ``body(write_fd)`` (see :func:`run_child`) and never
    returns into pytest; ``(pid, read_fd)`` for the parent, which reads what the child writes."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        run_child(lambda: body(write_fd), write_fd)
    os.close(write_fd)
    return pid, read_fd


def _run(target: str, write_fd: int, args: list[Any]) -> NoReturn:  # pragma: no cover - runs in a child
    module, _, name = target.partition(":")
    run_child(lambda: getattr(importlib.import_module(module), name)(write_fd, *args), write_fd)


def _serve() -> None:  # pragma: no cover - runs in the server
    sock = socket.socket(fileno=int(sys.argv[2]))
    for name in sys.argv[3:]:
        importlib.import_module(name)
    sock.send(json.dumps({"ready": True}).encode())
    running: set[int] = set()
    while True:
        message, fds, _flags, _address = socket.recv_fds(sock, _MAX, 1)
        if not message:
            break  # the test closed its end
        request = json.loads(message)
        if "wait" in request:
            _, status, usage = os.wait4(request["wait"], 0)
            running.discard(request["wait"])
            sock.send(json.dumps({"status": status, "cpu": usage.ru_utime + usage.ru_stime}).encode())
            continue
        pid = os.fork()
        if pid == 0:
            sock.close()
            _run(request["fork"], fds[0], request["args"])
        running.add(pid)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"pid": pid}).encode())
    for pid in running:  # a test that failed before its kill: no child outlives the server
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
