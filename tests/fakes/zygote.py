"""Real ``crewagent`` processes forked from a warmed-up parent (a zygote), for crash loops.

A fresh ``python -m crewagent chat`` spends one to three seconds of CPU importing the app and
loading the tokenizer before it does anything; a kill -9 loop starts a hundred of them. The
zygote is one interpreter that did that once. Each command is a fork of it that sets its own
environment, working folder and output files and then runs ``crewagent.cli.main(argv)``, as
``python -m crewagent`` does: a real process that the test kills with SIGKILL.

Tests that check the console script itself (a fresh interpreter) keep using ``subprocess``.

    with Zygote() as zygote:
        proc = zygote.spawn(["chat", "--data-dir", ...], env=env, cwd=folder, stdout=out_path)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.fakes.preforked import freeze_preload, leave, sigchld_wakeup

ROOT = Path(__file__).resolve().parents[2]
#: The xdist group of every test that uses the session's zygote (tests/fakes/fixtures.py): one
#: worker runs them all, so a run starts one zygote, not one per worker (a fork of the test fork
#: server under xdist, 0.2-0.3 CPU-s to start; a fresh one 2-3 CPU-s).
ZYGOTE_GROUP = "kill-loops"
#: What a command would import or load anyway; done once, in the zygote. Named one by one: the
#: CLI imports each command's modules only when it runs (crewagent.cli_commands), so importing
#: crewagent.cli alone would leave the forked commands to import the app each time.
PRELOAD = (
    "crewagent.cli",
    "crewagent.cli_chat",
    "crewagent.cli_run",
    "crewagent.core.export",
    "crewagent.core.store",
    "crewagent.core.packages",
    "crewagent.core.turns",
    "crewagent.core.llm",
    "crewagent.core.runs",
    "openai",
    "httpcore2",  # imported by the first HTTP client a command makes
    "httpx2",
    # What a forked `crewagent chat` still imported (0.09 CPU-s each): the parser's command
    # modules, and the async backend, streams and IDNA codec of its first request.
    "crewagent.cli_commands",
    "crewagent.cli_mcp",
    "crewagent.cli_packages",
    "crewagent.cli_protocol",
    "anyio._backends._asyncio",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "encodings.idna",
)


def without_file_override() -> list[str]:
    """The prefix that runs a command as root without the capabilities that let root ignore file
    modes (so that mode 000 applies to it); [] when not root, or when setpriv is missing."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return []
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


#: Set in the zygote's environment when it is to drop, itself, the capabilities the wrapper of
#: :func:`without_file_override` would have dropped (a zygote forked from the test fork server).
_DROP_FILE_OVERRIDE = "CREWAGENT_ZYGOTE_DROP_FILE_OVERRIDE"
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _start_command(wrapper: Sequence[str]) -> tuple[list[str], dict[str, str] | None]:
    """How to start the zygote: a fork of the test fork server when this process has one (an xdist
    worker, tests/forkserver.py), else a fresh ``python -m tests.fakes.zygote`` under ``wrapper``.

    The fork server has imported openai, the app and the tokenizer already: a forked zygote starts
    in 0.2-0.3 CPU-s, a fresh one in 2-2.2. Its heap is bigger (135 MB against 93: Qt's modules
    too), which costs each command it forks a few ms more; far less in all than the start saved
    (docs/benchmarks.md, "Session 12: the crash loops"). The fork server's client passes this
    process's pipes, environment and folder to it, as for a worker. A wrapper would run the
    client, not the fork, so the zygote drops the wrapper's capabilities itself
    (``_drop_file_override``)."""
    from tests.forkserver import PLAIN_IMPORT_ENV, SOCKET_ENV

    server = os.environ.get(SOCKET_ENV)
    if not server:
        return [*wrapper, sys.executable, "-m", "tests.fakes.zygote"], None
    argv = [sys.executable, str(ROOT / "tests" / "forkserver.py"), "client", server]
    argv += ["-c", "from tests.fakes.zygote import _serve; _serve()"]
    env = {**os.environ, PLAIN_IMPORT_ENV: "1"}  # no command imports Qt: no shiboken import hook
    if wrapper:
        env[_DROP_FILE_OVERRIDE] = "1"
    return argv, env


def _drop_file_override() -> None:
    """What ``setpriv --bounding-set=-dac_override,-dac_read_search`` leaves a root process that
    it starts: neither capability in the bounding, effective, permitted or inheritable set."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop = 24
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two words
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    keep = ~((1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH)) & 0xFFFFFFFF
    data[0].effective &= keep
    data[0].permitted &= keep
    data[0].inheritable &= keep
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


class ZygoteProcess:
    """A command forked by the zygote, with the part of ``subprocess.Popen`` the crash tests use."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.returncode: int | None = None
        #: The CPU-s (user + system) the process used, from ``wait4`` once the zygote reaped it.
        self.cpu: float | None = None
        #: Its minor page faults (``ru_minflt``), from the same ``wait4``.
        self.faults: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self._zygote.cond:
            if not self._zygote.cond.wait_for(lambda: self.returncode is not None, timeout):
                raise subprocess.TimeoutExpired(f"zygote child {self.pid}", timeout or 0)
            assert self.returncode is not None
            return self.returncode

    def send_signal(self, sig: int) -> None:
        """Signal the process unless it has ended (the zygote reaps it, so its pid cannot be reused first)."""
        if self.returncode is None:
            self._zygote.send({"kill": self.pid, "signal": int(sig)})

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """A started zygote process; ``spawn`` forks one command from it. Close it (or use ``with``)."""

    def __init__(self, stderr: Path | None = None, wrapper: Sequence[str] = ()) -> None:
        """``wrapper``: a command the zygote runs under (``setpriv ... --``); its children inherit it."""
        self.cond = threading.Condition()
        self._spawned: queue.Queue[ZygoteProcess | BaseException] = queue.Queue()
        self._children: dict[int, ZygoteProcess] = {}
        self._lock = threading.Lock()
        self._stderr_path = stderr
        argv, env = _start_command(wrapper)
        if stderr is None:
            self._proc = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        else:
            with open(stderr, "wb") as errors:
                self._proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the zygote did not start: {ready!r} {self._errors()}")
        self._reader = threading.Thread(target=self._read_replies, name="zygote-replies", daemon=True)
        self._reader.start()

    def spawn(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | str | None = None,
        stdout: Path | str | None = None, stderr: Path | str | None = None, stdin: Path | str | None = None,
        script: Path | None = None,
    ) -> ZygoteProcess:
        """Fork ``crewagent <argv>`` (or ``python <script> <argv>``) with exactly ``env``; output to
        files (stderr to stdout's file when not given; /dev/null when neither is), input from
        ``stdin`` (/dev/null when not given)."""
        request = {
            "argv": list(argv), "env": dict(env), "cwd": str(cwd or os.getcwd()),
            "stdout": str(stdout or os.devnull), "stderr": str(stderr or stdout or os.devnull),
            "stdin": str(stdin or os.devnull), **({"script": str(script)} if script is not None else {}),
        }
        with self._lock:
            self.send(request)
            reply = self._spawned.get(timeout=60)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def run(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
        input: str | None = None, timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """``subprocess.run([python, -m, crewagent, *argv], capture_output=True, text=True)``, forked
        from the zygote: a real process of the command, without a fresh interpreter's imports.
        ``env`` defaults to this process's environment, as for ``subprocess.run``."""
        with tempfile.TemporaryDirectory(prefix="zygote-run-") as folder:
            out, err, given = (Path(folder) / name for name in ("stdout", "stderr", "stdin"))
            if input is not None:
                given.write_text(input, encoding="utf-8")
            proc = self.spawn(
                argv, env=os.environ if env is None else env, cwd=cwd, stdout=out, stderr=err,
                stdin=given if input is not None else None,
            )
            try:
                code = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
                raise
            return subprocess.CompletedProcess(
                ["crewagent", *argv], code, out.read_text(encoding="utf-8", errors="replace"),
                err.read_text(encoding="utf-8", errors="replace"),
            )

    def send(self, request: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request).encode() + b"\n")
        self._proc.stdin.flush()

    def close(self) -> None:
        """Stop the zygote: it kills the commands still running and exits."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        self._proc.wait(30)
        self._reader.join(30)
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _errors(self) -> str:
        return self._stderr_path.read_text(errors="replace") if self._stderr_path is not None else ""

    def _read_replies(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            reply = json.loads(line)
            if "spawned" in reply:
                child = ZygoteProcess(self, reply["spawned"])
                with self.cond:
                    self._children[child.pid] = child
                self._spawned.put(child)
            elif "exited" in reply:
                with self.cond:
                    child = self._children.pop(reply["exited"])
                    child.cpu = reply.get("cpu")
                    child.faults = reply.get("faults")
                    child.returncode = reply["code"]
                    self.cond.notify_all()
            else:
                self._spawned.put(RuntimeError(f"the zygote failed: {reply}"))
        self._spawned.put(RuntimeError(f"the zygote exited: {self._errors()}"))


# --- the zygote process -------------------------------------------------------------------------


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _run_command(request: dict[str, Any]) -> int:
    """In the forked child: become ``python -m crewagent <argv>`` (or ``python <script> <argv>``) and run it."""
    stdin = os.open(request.get("stdin", os.devnull), os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = out if request["stderr"] == request["stdout"] else os.open(
        request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
    )
    for fd, target in ((stdin, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        if "script" in request:  # python <script> <argv>
            import runpy

            sys.argv = [request["script"], *request["argv"]]
            runpy.run_path(request["script"], run_name="__main__")
            return 0
        sys.argv = ["crewagent", *request["argv"]]
        from crewagent.cli import main

        return main(request["argv"])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def _fork(request: dict[str, Any], wakeup: tuple[int, int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1  # pragma: no cover - the forked child
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wakeup:
            os.close(fd)
        code = _run_command(request)
    except BaseException:
        traceback.print_exc()
    finally:
        leave(code)


def _serve() -> None:
    """Preload, then fork one child per request line on stdin; report pids and exit codes on stdout."""
    import gc
    import importlib

    if os.environ.pop(_DROP_FILE_OVERRIDE, None):
        _drop_file_override()
    gc.disable()  # no collections while preloading (2.8 -> 2.3 CPU-s): one at the end, then frozen
    for name in PRELOAD:
        importlib.import_module(name)
    from crewagent.core.context.tokens import default_counter

    default_counter()  # the tokenizer's tables: the slowest part of a command's start
    # What every command does again on its first request: the CA store (~100 ms; the app keeps one
    # context per process) and keyring's plugin scan (entry points, backend imports). Only the scan
    # is shared: each command still picks its backend from its own environment. Half a command's
    # CPU before this (0.5 s -> 0.22 s per forked `crewagent chat`, docs/benchmarks.md "Test suite").
    import keyring.backend

    from crewagent.core.llm._client import _shared_ssl_context

    _shared_ssl_context()
    keyring.backend.get_all_keyring()
    # The SDK's platform headers, made on a client's first request: its get_platform() calls
    # platform.platform(), which runs `uname -p` as a process (the processor's name is only known
    # that way) and reads /etc/os-release; both are cached per process, so made once here (before:
    # a `uname` process per command and ~160 more page faults).
    from openai._base_client import get_platform, platform_headers
    from openai._version import __version__ as openai_version

    platform_headers(openai_version, platform=get_platform())
    # A `crewagent run` checks the package against the app's JSON Schemas; the checked validators
    # are cached per process (0.2 s of each run's CPU).
    from crewagent.core.packages.schemas import SchemaKind, validator

    for kind in SchemaKind:
        validator(kind)
    # Every command builds the whole argparse tree before it parses (~15 ms of CPU and ~250 page
    # faults per fork: argparse's gettext look-ups stat the locale folders for every help string).
    # Built once here; each fork parses with its own copy. The tree holds no state between parses
    # and its defaults read no environment (tests/cli/parser_cache.py), and nothing patches the
    # handlers it binds in a fork.
    import functools

    from crewagent import cli

    cli.build_parser = functools.cache(cli.build_parser)
    cli.build_parser()
    # Every chat or run session makes its Task tools again; their arguments' JSON schemas are
    # cached per process (core/tools/registry.schema_of): made once here, not in every fork.
    from crewagent.core.subagents.tools import SessionArgs, StatusArgs, TaskArgs
    from crewagent.core.tools.registry import schema_of

    for model in (TaskArgs, StatusArgs, SessionArgs):
        schema_of(model)

    # What the preload built is never collected: frozen, a child's garbage collections skip it
    # instead of writing to (and so copying) every page of it. Half a forked command's CPU:
    # 0.42 -> 0.21 CPU-s per `crewagent chat --provider demo` (docs/benchmarks.md, "Test suite").
    freeze_preload()
    wakeup = sigchld_wakeup()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wakeup[0], selectors.EVENT_READ)
    children: set[int] = set()
    buffer = b""
    open_input = True

    def reply(message: dict[str, Any]) -> None:
        os.write(1, json.dumps(message).encode() + b"\n")

    def reap() -> None:
        while children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                return
            children.discard(pid)
            reply({
                "exited": pid, "code": _returncode(status), "cpu": usage.ru_utime + usage.ru_stime,
                "faults": usage.ru_minflt,
            })

    os.write(1, b"ready\n")
    while open_input or children:
        for key, _events in selector.select():
            if key.fd == wakeup[0]:
                try:
                    os.read(wakeup[0], 512)
                except BlockingIOError:
                    pass
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                open_input = False
                selector.unregister(0)
                for pid in children:
                    os.kill(pid, signal.SIGKILL)
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                if "kill" in request:
                    if request["kill"] in children:
                        os.kill(request["kill"], request["signal"])
                    continue
                try:
                    pid = _fork(request, wakeup)
                except OSError as exc:
                    reply({"error": repr(exc)})
                    continue
                children.add(pid)
                reply({"spawned": pid})
        reap()


if __name__ == "__main__":
    _serve()
