"""One MCP server: its process or HTTP session on the official SDK, started on demand, and its status.

The SDK's client is an async context manager whose task group must be entered and left by the
same task, so each started server has an owner task that enters ``mcp.Client``, lists the tools,
publishes the client, and waits to be told to stop; calls from the turns' tasks go through the
published client (its requests are plain messages on memory streams, safe from any task of the
loop). Leaving the client is the SDK's shutdown: stdin closed, then SIGTERM and SIGKILL to the
server's own process group (it is started in a new session), every wait bounded.

Failures never raise past :class:`McpServer`'s methods as anything but :class:`McpFailure`, whose
code the tool result carries: ``MCP_TIMEOUT`` (a call, or ``initialize``, took too long),
``MCP_SERVER_EXITED`` (the process ended or the connection dropped; the next call starts it
again), ``MCP_START_FAILED`` (the command cannot be started), ``MCP_PROTOCOL_ERROR`` (a reply that
does not follow the protocol), ``MCP_TOOL_ERROR`` (the server answered the call with an error).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TextIO

from crewagent import __version__
from crewagent.core.mcp.stderr_log import StderrLog
from crewagent.core.settings import McpServerSettings

log = logging.getLogger(__name__)

#: How long stopping one server may take (the SDK's own escalation is bounded by about 6 s).
STOP_TIMEOUT_S = 8.0

#: Receives the pid of the stdio server the current task is starting (see _watch_spawns).
_on_spawn: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar("mcp_on_spawn", default=None)


class McpCode(StrEnum):
    """Error codes of MCP tool results (next to the registry's own, results.ErrorCode)."""

    MCP_DISABLED = "MCP_DISABLED"
    MCP_TIMEOUT = "MCP_TIMEOUT"
    MCP_SERVER_EXITED = "MCP_SERVER_EXITED"
    MCP_START_FAILED = "MCP_START_FAILED"
    MCP_PROTOCOL_ERROR = "MCP_PROTOCOL_ERROR"
    MCP_TOOL_ERROR = "MCP_TOOL_ERROR"


class McpFailure(Exception):
    """A server could not do what was asked; ``code`` is one of :class:`McpCode`."""

    def __init__(self, code: McpCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class McpStatus(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    ERROR = "error"


@dataclass(frozen=True)
class McpToolInfo:
    """A tool as the server declared it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool = False


@dataclass(frozen=True)
class ServerState:
    """A server as the Settings page and ``crewagent mcp list`` show it."""

    server_id: str
    status: McpStatus
    tools: tuple[McpToolInfo, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class ServerSpec:
    """What starting a server needs: its settings and its secret env values and headers."""

    settings: McpServerSettings
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.settings.id

    def fingerprint(self) -> tuple[Any, ...]:
        """Equal for two specs that start the same server the same way (a change restarts it)."""
        s = self.settings
        return (s.transport, s.command, tuple(s.args), s.cwd, s.url, tuple(sorted(self.env.items())), tuple(sorted(self.headers.items())))


class McpServer:
    """A connection to one server; every method runs on the event loop that owns it."""

    def __init__(self, spec: ServerSpec, *, on_change: Callable[[ServerState], None] | None = None):
        self.spec = spec
        self.stderr = StderrLog()
        self._on_change = on_change
        self._status = McpStatus.STOPPED
        self._error = ""
        self._tools: tuple[McpToolInfo, ...] = ()
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._pids: list[int] = []  # the stdio process the current owner task started
        self._start_lock = asyncio.Lock()

    @property
    def state(self) -> ServerState:
        return ServerState(self.spec.id, self._status, self._tools, self._error)

    @property
    def running(self) -> bool:
        return self._client is not None and self._owner is not None and not self._owner.done()

    def _set(self, status: McpStatus, error: str = "") -> None:
        self._status, self._error = status, error
        if error:
            self.stderr.note(f"[crewagent] {error}")
        if self._on_change is not None:
            self._on_change(self.state)

    # -- start and stop --------------------------------------------------------------------------

    async def start(self) -> tuple[McpToolInfo, ...]:
        """Start the server (when it is not running) and return its tools; McpFailure when it cannot."""
        async with self._start_lock:
            if self.running:
                return self._tools
            await self._forget()
            self._set(McpStatus.STARTING)
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[tuple[McpToolInfo, ...]] = loop.create_future()
            self._stop = asyncio.Event()
            self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp-{self.spec.id}")
            timeout = self.spec.settings.startTimeoutSeconds
            try:
                async with asyncio.timeout(timeout):
                    tools = await asyncio.shield(ready)
            except TimeoutError:
                await self._forget()
                failure = McpFailure(
                    McpCode.MCP_TIMEOUT, f"MCP server {self.spec.id!r} did not answer initialize within {timeout:g} s."
                )
                self._set(McpStatus.ERROR, failure.message)
                raise failure from None
            except McpFailure as failure:
                await self._forget()
                self._set(McpStatus.ERROR, failure.message)
                raise
            except asyncio.CancelledError:
                await asyncio.shield(self._forget())
                self._set(McpStatus.STOPPED)
                raise
            self._tools = tools
            self._set(McpStatus.RUNNING)
            return tools

    async def stop(self) -> None:
        """Stop the server (its whole process group for stdio); waits for it, bounded."""
        async with self._start_lock:
            await self._forget()
            self._set(McpStatus.STOPPED)

    async def _forget(self) -> None:
        """Tell the owner task to leave the client, and wait for it (bounded). An owner still in
        ``initialize`` is cancelled at once: it would never see the stop event. Its process is
        killed first: a server that never answered ``initialize`` has nothing to close gracefully,
        and the SDK's shutdown would wait 2 s for it to exit on its own (a hung start's timeout, or
        quitting during a Test, took that much longer)."""
        owner, stop, started, pids = self._owner, self._stop, self._client is not None, self._pids
        self._client, self._owner, self._stop = None, None, None
        if owner is None:
            return
        if stop is not None:
            stop.set()
        if not started:
            for pid in pids:
                _kill_group(pid)
            owner.cancel()
        for attempt in range(2):
            try:
                await asyncio.wait_for(asyncio.shield(owner), STOP_TIMEOUT_S)
                return
            except TimeoutError:
                log.warning("MCP server %s did not stop within %.0f s; cancelling its task", self.spec.id, STOP_TIMEOUT_S)
                owner.cancel()
            except asyncio.CancelledError:
                if owner.done():
                    return  # the owner's own cancellation, not ours
                raise
            except Exception:  # the owner reports its own failures; only its end matters here
                return

    async def _own(self, ready: asyncio.Future[tuple[McpToolInfo, ...]], stop: asyncio.Event) -> None:
        """The owner task: enter the client, list the tools, serve until told to stop, leave the client."""
        from mcp import Client
        from mcp_types import Implementation

        errlog = self.stderr.open_pipe() if self.spec.settings.transport == "stdio" else None
        pids: list[int] = []
        self._pids = pids
        _watch_spawns()
        _on_spawn.set(pids.append)  # this task's own context: only this server's spawn lands here
        try:
            transport = _transport(self.spec, errlog)
            client = Client(transport, mode="legacy", client_info=Implementation(name="crewagent", version=__version__))
            async with client:
                _close(errlog)
                tools = await _list_tools(client)
                self._client = client
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except asyncio.CancelledError:
            # Whoever waited for the start has given up already (its timeout, or Stop): a cancelled
            # future, not an exception nobody would retrieve.
            ready.cancel()
            raise
        except Exception as exc:  # the SDK raises task-group exception groups, OSError, MCPError...
            failure = _start_failure(self.spec, exc)
            if not ready.done():
                ready.set_exception(failure)
            else:
                log.info("MCP server %s ended: %s", self.spec.id, failure.message)
                self.stderr.note(f"[crewagent] {failure.message}")
        finally:
            _close(errlog)
            self._client = None
            for pid in pids:
                _kill_group(pid)

    # -- calls -----------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call`` under the server's timeout; the SDK's CallToolResult, or McpFailure."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
        from pydantic import ValidationError

        if not self.running:
            await self.start()
        client = self._client
        timeout = self.spec.settings.timeoutSeconds
        try:
            async with asyncio.timeout(timeout):
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            raise McpFailure(
                McpCode.MCP_TIMEOUT, f"{tool} on MCP server {self.spec.id!r} did not answer within {timeout:g} s."
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED or not self.running:
                await self._exited()
                raise McpFailure(
                    McpCode.MCP_SERVER_EXITED,
                    f"MCP server {self.spec.id!r} exited during the call; it starts again on the next call.",
                ) from None
            raise McpFailure(McpCode.MCP_TOOL_ERROR, f"{exc.message} (JSON-RPC error {exc.code})") from None
        except (ValidationError, ValueError, RuntimeError, TypeError, KeyError) as exc:
            if not self.running:
                await self._exited()
                raise McpFailure(McpCode.MCP_SERVER_EXITED, f"MCP server {self.spec.id!r} exited during the call.") from None
            raise McpFailure(
                McpCode.MCP_PROTOCOL_ERROR, f"MCP server {self.spec.id!r} sent a malformed reply: {_one_line(exc)}"
            ) from None

    async def _exited(self) -> None:
        async with self._start_lock:
            await self._forget()
            self._set(McpStatus.ERROR, f"MCP server {self.spec.id!r} exited.")


def _transport(spec: ServerSpec, errlog: TextIO | None) -> Any:
    """The SDK transport of a server: a stdio process, streamable HTTP, or legacy SSE."""
    settings = spec.settings
    if settings.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=settings.command, args=list(settings.args), env=dict(spec.env) or None, cwd=settings.cwd or None
        )
        return stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
    if settings.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(settings.url, headers=dict(spec.headers) or None)
    return _streamable_http(settings.url, dict(spec.headers))


@asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers or None) as http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def _watch_spawns() -> None:
    """Learn the pid of each stdio server the SDK starts (it does not expose its process).

    The SDK stops a server by closing its stdin and kills the server's process group only when
    the server does not exit by itself; a server that exits at once leaves its own children
    running, orphaned. Knowing the pid (the group id: the server starts in a new session), the
    owner task kills what is left of the group once the server is gone.
    """
    from mcp.client import stdio

    create = getattr(stdio, "_create_platform_compatible_process", None)
    if create is None:  # tests/core/test_mcp_config.py fails on such an SDK: it cannot ship unnoticed
        log.warning("this MCP SDK has no _create_platform_compatible_process: a stopped server's children may survive it")
        return
    if getattr(create, "_crewagent_watched", False):
        return

    async def watched(*args: Any, **kwargs: Any) -> Any:
        process = await create(*args, **kwargs)
        report = _on_spawn.get()
        if report is not None:
            report(process.pid)
        _whole_lines(process)
        return process

    watched._crewagent_watched = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = watched


def _whole_lines(process: Any) -> None:
    """Hand the SDK's stdout reader whole lines (anyio's asyncio ``Process`` keeps stdout in ``_stdout``).

    The reader joins its pending text to each chunk and splits the lot again (``(buffer +
    chunk).split("\n")``): a large message arriving in small pieces costs the square of its size.
    A server that writes a 5 MB result in 8 KB pieces (the SDK's own server side does) cost the app
    0.6-1.5 CPU-s, a 10 MB one 2-6. A stream without its own framing would see no difference.
    """
    from anyio.abc import ByteReceiveStream

    stdout = getattr(process, "_stdout", None)
    if isinstance(stdout, ByteReceiveStream) and not isinstance(stdout, WholeLines):
        process._stdout = WholeLines(stdout)


class WholeLines:
    """A byte stream that returns data only up to a chunk ending a line (or the end of the stream).

    Waiting for a line's end costs the reader nothing: it can use no part of a line before it.
    The pieces waiting are kept on the object, so a cancelled ``receive`` loses none of them.
    """

    def __init__(self, inner: Any):
        self._inner = inner
        self._pieces: list[bytes] = []

    async def receive(self, max_bytes: int = 65536) -> bytes:
        from anyio import EndOfStream

        while True:
            try:
                chunk = await self._inner.receive(max_bytes)
            except EndOfStream:
                if not self._pieces:
                    raise
                chunk = b""
            else:
                if b"\n" not in chunk:
                    self._pieces.append(chunk)
                    continue
            if not self._pieces:
                return chunk
            self._pieces.append(chunk)
            data, self._pieces = b"".join(self._pieces), []
            return data

    async def aclose(self) -> None:
        await self._inner.aclose()

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        return self._inner.extra_attributes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _kill_group(pid: int) -> None:
    """SIGKILL whatever is left of a stopped server's process group (POSIX; Windows uses the SDK's job object)."""
    if sys.platform == "win32":
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _list_tools(client: Any) -> tuple[McpToolInfo, ...]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever cannot hang the start
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            annotations = tool.annotations
            tools.append(
                McpToolInfo(
                    name=tool.name,
                    description=tool.description or tool.title or "",
                    input_schema=dict(tool.input_schema or {}),
                    read_only=bool(annotations is not None and annotations.read_only_hint),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(tools)


def _start_failure(spec: ServerSpec, exc: BaseException) -> McpFailure:
    leaf = _leaf(exc)
    if isinstance(leaf, OSError) and spec.settings.transport == "stdio":
        return McpFailure(McpCode.MCP_START_FAILED, f"MCP server {spec.id!r} could not be started ({spec.settings.command}): {_one_line(leaf)}")
    return McpFailure(McpCode.MCP_START_FAILED, f"MCP server {spec.id!r} failed to start: {_one_line(leaf)}")


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _close(stream: TextIO | None) -> None:
    if stream is not None and not stream.closed:
        try:
            stream.close()
        except OSError:
            pass
