"""xdist workers forked from one interpreter that has imported the libraries and the app once.

Each xdist worker used to start as a fresh interpreter and import openai, PySide6, pydantic's
models, the app's modules and pytest itself: ~2.5-3 CPU-s of the ~5-7 of its start (configure and
collection), paid by every worker. The xdist controller (tests/conftest.py) instead starts this
module as a fork server, which imports them once (``PRELOAD``), then names this file as the
workers' interpreter (``--tx popen//python=<python> <this file> client <socket>``): execnet starts
that client as usual, and the client hands its stdin, stdout and stderr over a Unix socket to the
server, which forks a child that takes them as its own, its environment and working folder too,
and runs execnet's bootstrap as ``python -u -c <bootstrap>`` would. The child is then the worker;
the client waits for it and exits with its exit status (a signal it gets is passed on).

Nothing of ``tests`` is imported by the server: pytest must rewrite the asserts of the test
modules, conftests and the fixtures' plugin when the worker imports them. The third-party modules
the server imports that belong to a pytest plugin's distribution (anyio, platformdirs: both
plugins are disabled with ``-p no:``) are therefore not rewritten, which pytest reports with a
PytestAssertRewriteWarning that pyproject.toml ignores for these two only.

``CREWAGENT_TEST_FORKSERVER=0`` runs the workers as fresh interpreters (xdist's own ``popen``).
If the server cannot start, the run stops with a one-line error naming that switch.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

SWITCH = "CREWAGENT_TEST_FORKSERVER"
#: The server's socket, in the environment of the workers (and so of what they start): the crash
#: loops' zygote is a fork of the server too (tests/fakes/zygote.py).
SOCKET_ENV = "CREWAGENT_TEST_FORKSERVER_SOCKET"
#: In a client's environment: the forked child gets the interpreter's own ``__import__`` back.
#: Importing PySide6 replaces it with shiboken's, which runs Python code on every import statement
#: and reads the source of every module imported for the first time (to see whether it uses Qt's
#: ``__feature__`` switches); a child that never uses Qt (the crash loops' zygote) is better
#: without it: per `crewagent chat` forked from the zygote, ~400 calls of that hook (~1 ms) and
#: ~150 page faults (4,560 -> 4,410, medians of 15, three alternated pairs) less.
PLAIN_IMPORT_ENV = "CREWAGENT_TEST_FORKSERVER_PLAIN_IMPORT"
_original_import = __import__  # the interpreter's, before PySide6 (the server's preload) replaces it
#: Imported once by the server, before it forks a worker: what every worker imports anyway, at its
#: start or at collection (each worker runs core, CLI and UI tests). No module of ``tests``.
PRELOAD = (
    "pytest",
    "openai",
    "httpx2",
    "pydantic",
    "PySide6.QtCore",
    "PySide6.QtGui",
    "PySide6.QtWidgets",
    "PySide6.QtNetwork",
    "crewagent.cli",
    "crewagent.worker",
    "crewagent.core.turn_host",
    "crewagent.ui.mainwindow",
    "crewagent.ui.settings",
    "jsonschema",
    "yaml",
    "PySide6.QtTest",  # pytest-qt's
    "unittest.mock",
    "pdb",  # pytest's debugging plugin
    "xml.etree.ElementTree",
    "tomllib",
    "hypothesis",  # and the constants of the modules above (_hypothesis_constants)
    # tests/ui/conftest.py's: keyring's backends (the app still picks one per test, in its folders)
    "keyring.backends.SecretService",
    "keyring.backends.libsecret",
    "keyring.backends.kwallet",
)
_MAX_FDS = 3
#: Seconds the server may take to import ``PRELOAD`` (~3 CPU-s; far longer on a loaded machine).
START_TIMEOUT = 300


# --- the controller's side ----------------------------------------------------------------------


class ForkServer:
    """The started server; ``python_spec`` is what xdist's ``popen//python=`` takes once
    ``wait_ready`` has returned. Close it at the end."""

    def __init__(self, root: Path, socket_path: Path) -> None:
        self.socket_path = socket_path
        code = (
            f"import pathlib, sys; sys.argv[1:] = ['serve', {str(socket_path)!r}]; "
            f"exec(compile(pathlib.Path({__file__!r}).read_text(), {__file__!r}, 'exec'))"
        )
        self._proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def wait_ready(self) -> None:
        """Until the server has imported ``PRELOAD``; the caller may work meanwhile (it runs on its own)."""
        assert self._proc.stdout is not None
        ready = b""
        if select.select([self._proc.stdout], [], [], START_TIMEOUT)[0]:
            ready = self._proc.stdout.readline()
        if ready.strip() != b"ready":
            self.close()
            raise RuntimeError(f"the test fork server did not start ({ready.decode(errors='replace').strip() or 'no answer'})")

    @property
    def python_spec(self) -> str:
        return f"{sys.executable} {__file__} client {self.socket_path}"

    def close(self) -> None:
        """Closing its input stops the server; the workers it forked have ended by then."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def usable(paths: list[str]) -> bool:
    """Whether the server can be named in a ``python=`` spec (execnet splits it like a shell)."""
    needs = (hasattr(os, name) for name in ("fork", "pidfd_open"))
    return os.environ.get(SWITCH, "1") != "0" and all(needs) and hasattr(socket, "send_fds") and not any(
        any(c.isspace() or c in "'\"\\" for c in path) for path in paths
    )


# --- the server ---------------------------------------------------------------------------------


Worker = tuple[dict[str, object], list[int]]


def _serve(socket_path: str) -> Worker | None:
    """Preload, answer "ready", then fork one worker per client until the controller closes stdin.

    Returns None in the server once the controller is gone, and in a forked child what it needs
    to become the worker (``_become_worker``), run at the top level, outside the server's loop."""
    import gc
    import importlib
    import selectors
    import threading

    gc.disable()  # no collections while preloading (~0.25 CPU-s less, before any worker starts)
    for name in PRELOAD:
        importlib.import_module(name)
    from crewagent.core.context.tokens import default_counter

    default_counter()  # the tokenizer's tables (~0.4 CPU-s), which every worker's turns load
    _hypothesis_constants()
    tasks = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["?"] * threading.active_count()
    if len(tasks) != 1:  # a fork keeps only the forking thread: another one's locks would stay taken
        raise RuntimeError(f"the preload started {len(tasks) - 1} thread(s): {threading.enumerate()}")
    gc.collect()
    gc.freeze()  # the preload lives as long as each worker: its collections skip it (no page copies)
    gc.enable()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "controller")
    selector.register(listener, selectors.EVENT_READ, "client")
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the client's connection)
    os.write(1, b"ready\n")
    while True:
        for key, _events in selector.select():
            if key.data == "controller":
                if not os.read(0, 4096):
                    listener.close()
                    os.unlink(socket_path)
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.dirname(socket_path))  # the controller's, if it could not
                    return None
            elif key.data == "client":
                connection, _ = listener.accept()
                message, fds, _flags, _address = socket.recv_fds(connection, 1 << 16, _MAX_FDS)
                while not message.endswith(b"\n"):
                    more = connection.recv(1 << 16)
                    if not more:
                        break
                    message += more
                request = json.loads(message)
                pid = os.fork()
                if pid == 0:  # the worker: close what is the server's (0 and 1 are replaced next)
                    selector.close()
                    for sock in (listener, connection, *(c for _, c in waiting.values())):
                        sock.close()
                    for pidfd in waiting:
                        os.close(pidfd)
                    return request, fds
                for fd in fds:
                    os.close(fd)
                connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                pidfd = os.pidfd_open(pid)
                waiting[pidfd] = (pid, connection)
                selector.register(pidfd, selectors.EVENT_READ, "worker")
            else:
                pid, connection = waiting.pop(key.fd)
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                try:
                    connection.sendall(json.dumps({"exit": code}).encode() + b"\n")
                except OSError:
                    pass  # the client is gone (killed): nothing to tell
                connection.close()


def _hypothesis_constants() -> None:
    """The constants hypothesis collects from the preloaded modules' source, collected once here.

    At collection each worker hands hypothesis every module of the project it has imported so far,
    and hypothesis parses each one's source for the constants it mixes into generated data. It
    keeps the result in ``.hypothesis/constants``, which a clean clone (CI) does not have: there,
    each of the three workers parsed the ~300 preloaded modules of the app, 2.3 CPU-s each (0.2
    with the cache). Done here, the workers inherit the modules already seen and parse only the
    test modules. A private function of hypothesis: if a release renames it, nothing is done here
    and each worker does it as before.

    hypothesis notes that its storage was used before its pytest plugin loaded, and the plugin
    would warn of a slow side effect of some plugin in each worker: this one is on purpose, so the
    note is cleared (``warn=False``) once it is done.
    """
    try:
        from hypothesis.configuration import notice_initialization_restarted
        from hypothesis.internal.conjecture.providers import _get_local_constants
    except ImportError:
        return
    _get_local_constants()
    notice_initialization_restarted(warn=False)


def _become_worker(request: dict[str, object], fds: list[int]) -> int:
    """In the forked child: take the client's stdio, environment and folder, run ``python -u -c <code>``."""
    import io
    import types

    code = 1
    try:
        for fd, target in zip(fds, (0, 1, 2), strict=True):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[call-overload]
        if os.environ.pop(PLAIN_IMPORT_ENV, None):
            import builtins

            builtins.__import__ = _original_import
        # ``-u``: unbuffered binary stdout and stderr; new text streams on the new descriptors.
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=sys.stdin.encoding)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=sys.stdout.encoding, write_through=True)
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding=sys.stderr.encoding, errors="backslashreplace", write_through=True
        )
        argv = list(request["argv"])  # type: ignore[call-overload]
        source = argv[argv.index("-c") + 1]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        sys.argv = ["-c"]
        exec(compile(source, "<string>", "exec"), main.__dict__)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    return code


# --- the client: what execnet starts as the worker's "python" ---------------------------------------


def _client(socket_path: str, argv: list[str]) -> int:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
    except OSError as exc:
        print(f"the test fork server is not running ({exc}); {SWITCH}=0 runs without it", file=sys.stderr)
        return 1
    request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
    # The worker has the pipes now: hold none of them open (stderr stays for this client's own messages).
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    replies = connection.makefile("rb")
    pid = json.loads(replies.readline())["pid"]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, lambda signum, _frame: os.kill(pid, signum))
    line = replies.readline()
    if not line:
        print(f"the test fork server ended before worker {pid}", file=sys.stderr)
        return 1
    code = int(json.loads(line)["exit"])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        try:
            worker = _serve(sys.argv[2])
        except BaseException as exc:
            os.write(1, f"failed: {exc!r}\n".encode())
            raise
        if worker is not None:
            # The forked child, out of the server's loop. Once the worker's session has ended it
            # leaves without the interpreter's teardown (which would touch, so copy, every page of
            # the inherited heap), as the zygote's children do (tests/fakes/zygote.py). What it
            # started ends as before: the app's MCP orphan reaper sees its stdin close.
            code = _become_worker(*worker)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(BaseException):
                    stream.flush()
            os._exit(code)
    else:
        sys.exit(_client(sys.argv[2], sys.argv[3:]))
