"""Running one command as its own process group: streamed, bounded output; a timeout and Stop that kill the whole tree.

How a command is kept from outliving what started it:

- POSIX: the child starts a new session (``start_new_session=True``: ``setsid``), so it and every
  process it starts share one process group whose id is the child's pid. A timeout, Stop
  (cancellation of the running task) and the normal end of the command all send ``SIGKILL`` to
  that group, so a grandchild left sleeping in the background goes too.
- If the app itself dies (kill -9, a crash), a *reaper* does it: one small Python process per
  app (started at the first command, in its own session) that reads ``+pgid`` / ``-pgid`` lines
  on a pipe from the app and, when the pipe closes because the app is gone, kills every group
  still listed. This works the same on Linux and macOS (``PR_SET_PDEATHSIG`` would be Linux only,
  and it reaches the direct child only, not its children). In a frozen build without a Python
  interpreter the app's own executable runs the same code (``--crewagent-command-reaper``,
  packaging/entry.py).
- Windows (written for it, not tested here): the child gets ``CREATE_NEW_PROCESS_GROUP`` and the
  tree is ended with ``taskkill /T /F /PID``. Dying with the app: each command's process goes
  into one Job Object with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` whose only handle the app holds
  (core/tools/windows_job.py), so Windows ends them when the app ends, however it ends.

Output: stdout and stderr are read in chunks as they come. Each stream keeps at most its byte
limit in memory (the first and the last half of it); past the limit the whole stream goes on
to a file (``spill``), so the result names where the full output is. ``on_output(stream, text)``
gets the live text at most every :data:`LIVE_INTERVAL_S`, each time at most :data:`LIVE_MAX_BYTES`
(older text of a fast stream is skipped with a note: the file has all of it).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import BufferedWriter
from pathlib import Path
from typing import IO, Any, Literal

from crewagent.core.tools.reaper_script import REAPER_FLAG, REAPER_SCRIPT

log = logging.getLogger(__name__)

Stream = Literal["stdout", "stderr"]
#: Live output callback: (stream, text). Called on the event loop's thread.
OutputCallback = Callable[[Stream, str], None]

READ_CHUNK = 65_536
#: Bytes of a spilled stream gathered before one write (in a thread).
SPILL_BATCH = 1 << 20
LIVE_INTERVAL_S = 0.1
LIVE_MAX_BYTES = 16_384
#: After the command's main process ends, how long its pipes may take to drain (the group is killed first).
DRAIN_TIMEOUT_S = 5.0
WINDOWS = sys.platform == "win32"


@dataclass(frozen=True)
class CommandSpec:
    argv: Sequence[str]
    cwd: Path
    env: dict[str, str]
    timeout_s: float
    max_stdout_bytes: int
    max_stderr_bytes: int
    #: Where the full stdout / stderr go once past the limit (None: not kept).
    spill_stdout: Path | None = None
    spill_stderr: Path | None = None
    #: How the model names the spill files (``@state/...``), for the cut marker.
    spill_stdout_shown: str = ""
    spill_stderr_shown: str = ""


@dataclass(frozen=True)
class StreamResult:
    text: str
    total_bytes: int
    cut: bool
    #: The file with the whole stream, when it was cut and could be written.
    spilled: Path | None


@dataclass(frozen=True)
class CommandOutcome:
    stdout: StreamResult
    stderr: StreamResult
    exit_code: int | None
    duration_ms: float
    #: "exited", "timeout" or "aborted" (Stop).
    ending: Literal["exited", "timeout", "aborted"]
    pid: int


class _Capture:
    """One stream: bounded text in memory (head + tail), the whole of it in a file past the limit."""

    def __init__(self, name: Stream, limit: int, spill: Path | None, live: _Live | None):
        self.name = name
        self.limit = limit
        self.spill_path = spill
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._file: BufferedWriter | None = None
        self._spill_failed = False
        self._pending = bytearray()
        self._live = live

    async def feed(self, chunk: bytes) -> None:
        before = self.total
        self.total += len(chunk)
        if self._live is not None:
            self._live.add(self.name, chunk)
        if self.total > self.limit and self.spill_path is not None and not self._spill_failed:
            if self._file is None and before <= self.limit:
                # Crossing the limit: nothing was dropped yet, so head + tail + chunk is all of it.
                self._file = await asyncio.to_thread(self._open, bytes(self._head) + bytes(self._tail) + chunk)
            elif self._file is not None:
                # Written a megabyte at a time: one thread hop per 64 KB chunk cost the GUI thread GIL turns.
                self._pending += chunk
                if len(self._pending) >= SPILL_BATCH:
                    await self._write_pending()
        half = self.limit // 2
        room = half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        keep = self.limit - half
        if len(self._tail) > 2 * keep:  # trimmed in steps, not on every chunk
            del self._tail[: len(self._tail) - keep]

    async def _write_pending(self) -> None:
        data, self._pending = bytes(self._pending), bytearray()
        if self._file is None or not data:
            return
        try:
            await asyncio.to_thread(self._file.write, data)
        except OSError as exc:
            log.warning("could not keep the full %s of a command: %s", self.name, exc)
            self._close()
            self._spill_failed = True

    def _open(self, first: bytes) -> BufferedWriter | None:
        assert self.spill_path is not None
        try:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.spill_path, "wb")  # noqa: SIM115 - closed in finish()
            handle.write(first)
            return handle
        except OSError as exc:
            log.warning("could not keep the full %s of a command in %s: %s", self.name, self.spill_path, exc)
            self._spill_failed = True
            return None

    def _close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    async def finish(self, marker: Callable[[int, int, Path | None], str]) -> StreamResult:
        await self._write_pending()
        spilled = self.spill_path if self._file is not None else None
        if self._file is not None:
            await asyncio.to_thread(self._close)
        if self.total <= self.limit:
            return StreamResult((self._head + self._tail).decode("utf-8", "replace"), self.total, False, None)
        keep = self.limit - len(self._head)
        tail = bytes(self._tail[-keep:]) if keep > 0 else b""
        cut = self.total - len(self._head) - len(tail)
        text = self._head.decode("utf-8", "replace") + marker(cut, self.total, spilled) + tail.decode("utf-8", "replace")
        return StreamResult(text, self.total, True, spilled)


class _Live:
    """Coalesces chunks into at most one callback per stream every LIVE_INTERVAL_S."""

    def __init__(self, callback: OutputCallback):
        self._callback = callback
        self._pending: dict[Stream, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self._skipped: dict[Stream, int] = {"stdout": 0, "stderr": 0}
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")("replace") for name in self._pending}
        self._timer: asyncio.TimerHandle | None = None
        self._last = 0.0

    def add(self, name: Stream, chunk: bytes) -> None:
        pending = self._pending[name]
        pending += chunk
        if len(pending) > 2 * LIVE_MAX_BYTES:
            drop = len(pending) - LIVE_MAX_BYTES
            self._skipped[name] += drop
            del pending[:drop]
        if self._timer is None:
            delay = max(0.0, LIVE_INTERVAL_S - (time.monotonic() - self._last))
            self._timer = asyncio.get_running_loop().call_later(delay, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last = time.monotonic()
        for name, pending in self._pending.items():
            if not pending:
                continue
            skipped = self._skipped[name]
            if len(pending) > LIVE_MAX_BYTES:
                skipped += len(pending) - LIVE_MAX_BYTES
                del pending[: len(pending) - LIVE_MAX_BYTES]
            decoder = self._decoders[name]
            if skipped:
                decoder.reset()
            text = decoder.decode(bytes(pending))
            pending.clear()
            self._skipped[name] = 0
            if skipped:
                text = f"\n[… {skipped} bytes not shown live …]\n" + text
            if text:
                try:
                    self._callback(name, text)
                except Exception:  # a display problem must not stop the command's reading
                    log.exception("live output callback failed")


async def _pump(reader: asyncio.StreamReader | None, capture: _Capture) -> None:
    if reader is None:
        return
    while True:
        chunk = await reader.read(READ_CHUNK)
        if not chunk:
            return
        await capture.feed(chunk)


def kill_group(pid: int) -> None:
    """End a command's whole process tree now (never raises)."""
    if WINDOWS:
        try:
            subprocess.Popen(
                ["taskkill", "/T", "/F", "/PID", str(pid)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
            )
        except OSError as exc:
            log.warning("taskkill of %s failed: %s", pid, exc)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Tells when the command's main process exits, even while a grandchild still holds its pipes open.

    ``Process.wait()`` returns only once the pipes are closed as well, so a background grandchild
    would keep it waiting for as long as it lives.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop):
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.exit_code: int | None = None
        self._subprocess: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if isinstance(transport, asyncio.SubprocessTransport):
            self._subprocess = transport

    def process_exited(self) -> None:
        if self._subprocess is not None:
            self.exit_code = self._subprocess.get_returncode()
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def start(spec: CommandSpec) -> tuple[asyncio.subprocess.Process, _Protocol]:
    """Start the command in its own group; FileNotFoundError / PermissionError / OSError as the OS raises them."""
    options: dict[str, Any] = {}
    if WINDOWS:
        options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined,unused-ignore]
    else:
        options["start_new_session"] = True
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _Protocol(loop),
        *spec.argv,
        cwd=str(spec.cwd),
        env=spec.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **options,
    )
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    reaper().watch(proc.pid)
    return proc, protocol


async def run(spec: CommandSpec, on_output: OutputCallback | None = None) -> CommandOutcome:
    """Run ``spec`` to its end, its timeout, or Stop (cancellation, which this returns as ``aborted``).

    Raises what :func:`start` raises when the program cannot be started.
    """
    started = time.perf_counter()
    proc, protocol = await start(spec)
    live = _Live(on_output) if on_output is not None else None
    out = _Capture("stdout", spec.max_stdout_bytes, spec.spill_stdout, live)
    err = _Capture("stderr", spec.max_stderr_bytes, spec.spill_stderr, live)
    pumps = asyncio.gather(_pump(proc.stdout, out), _pump(proc.stderr, err))
    ending: Literal["exited", "timeout", "aborted"] = "exited"
    try:
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), spec.timeout_s)
        except TimeoutError:
            ending = "timeout"
        except asyncio.CancelledError:
            # Stop: the tree goes now; the caller gets the output so far as a result, not an exception.
            ending = "aborted"
        # Whatever ended it, nothing of the command may outlive it (background grandchildren included).
        kill_group(proc.pid)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), DRAIN_TIMEOUT_S)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(pumps), DRAIN_TIMEOUT_S)
    finally:
        kill_group(proc.pid)
        reaper().forget(proc.pid)
        if not pumps.done():
            pumps.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pumps
        if live is not None:
            live.flush()
    def marker_for(name: str, limit: int, shown: str) -> Callable[[int, int, Path | None], str]:
        def marker(cut: int, total: int, spilled: Path | None) -> str:
            where = f"full {name}: {shown or spilled}" if spilled is not None else f"the full {name} was not kept"
            return f"\n\n[… {cut} bytes of {name} cut (limit {limit} bytes, total {total}); {where} …]\n\n"

        return marker

    return CommandOutcome(
        stdout=await out.finish(marker_for("stdout", spec.max_stdout_bytes, spec.spill_stdout_shown)),
        stderr=await err.finish(marker_for("stderr", spec.max_stderr_bytes, spec.spill_stderr_shown)),
        exit_code=protocol.exit_code if ending == "exited" else None,
        duration_ms=(time.perf_counter() - started) * 1000,
        ending=ending,
        pid=proc.pid,
    )


# -- the reaper ------------------------------------------------------------------------------

_REAPER_SCRIPT = REAPER_SCRIPT  # the reaper's own code: core/tools/reaper_script.py


class Reaper:
    """Kills the listed process groups when this process dies (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pipe: IO[bytes] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._unavailable = WINDOWS

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _ensure(self) -> IO[bytes] | None:
        if self._pipe is not None or self._unavailable:
            return self._pipe
        # A frozen build has no interpreter to run ``-c``: the app's executable is the reaper
        # when given REAPER_FLAG (packaging/entry.py).
        argv = [sys.executable, REAPER_FLAG] if getattr(sys, "frozen", False) else [sys.executable, "-S", "-c", _REAPER_SCRIPT]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.warning("could not start the command reaper: %s", exc)
            self._unavailable = True
            return None
        self._pipe = self._proc.stdin
        return self._pipe

    def _send(self, line: str) -> None:
        with self._lock:
            pipe = self._ensure()
            if pipe is None:
                return
            try:
                pipe.write(line.encode("ascii"))
                pipe.flush()
            except OSError as exc:  # the reaper died: commands still end on timeout and Stop
                log.warning("the command reaper is gone: %s", exc)
                self._pipe = None
                self._unavailable = True

    def watch(self, pgid: int) -> None:
        if WINDOWS:  # no process groups to kill from outside: a kill-on-close Job Object instead
            _windows_job().add(pgid)
            return
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        if self._pipe is not None:
            self._send(f"-{pgid}\n")


_JOB: Any = None


def _windows_job() -> Any:
    """The app's kill-on-close Job Object (core/tools/windows_job.py), made at the first command."""
    global _JOB
    with _REAPER_GUARD:
        if _JOB is None:
            from crewagent.core.tools.windows_job import KillOnCloseJob

            _JOB = KillOnCloseJob()
        return _JOB


_REAPER: Reaper | None = None
_REAPER_GUARD = threading.Lock()


def reaper() -> Reaper:
    global _REAPER
    with _REAPER_GUARD:
        if _REAPER is None:
            _REAPER = Reaper()
        return _REAPER
