"""An experiment of issue 12, session 7 (not used by the app): an app-owned stdio transport for
the SDK's ``ClientSession``, to see how much of the client's CPU per call the SDK's ``stdio_client``
relaying costs. benchmarks/bench_mcp.py and profile_mcp_client.py measure it against the SDK's.

Only the transport differs: the process is started and stopped by the SDK's own functions (its
new session or job object, the environment it inherits, stdin closed then SIGTERM and SIGKILL to
the group, every wait bounded), and ``ClientSession`` does the protocol. The SDK's
``stdio_client`` runs a reader task and a writer task between the pipes and two unbuffered anyio
memory streams, so every message crosses a task and a stream handover on each side. Here the
session's streams are the pipes themselves, through the SDK's ``ReadStream``/``WriteStream``
protocols: a request is serialised and written by the task that sends it, and a reply is read,
split at its newline and validated by the session's receive loop. Lines are framed on bytes.

Result (docs/benchmarks.md, MCP, session 7): 0.1-0.2 ms of client CPU less per call out of
1.4-2 ms, under the 0.3 ms that would justify owning a transport; so the app keeps the SDK's.

    install()   # McpServer starts stdio servers through this transport from now on (benchmarks only)
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, TextIO

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

log = logging.getLogger(__name__)


class _Replies:
    """The server's stdout as the session's read stream: one validated message per line.

    A line that is not a JSON-RPC message is returned as the exception (the session reports it
    and goes on), as the SDK's transport does; the end of stdout ends the iteration.
    """

    def __init__(self, stdout: ByteReceiveStream):
        self._stdout = stdout
        self._buffer = bytearray()
        self._scanned = 0  # the buffer holds no newline before this offset
        self._closed = False

    async def receive(self) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                try:
                    return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
                except ValueError as exc:  # pydantic's ValidationError is one
                    log.warning("MCP server sent a line that is not JSON-RPC: %s", str(exc).splitlines()[0])
                    return exc
            self._scanned = len(self._buffer)
            try:
                chunk = await self._stdout.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                raise anyio.EndOfStream from None
            self._buffer += chunk

    def __aiter__(self) -> _Replies:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> _Replies:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


class _Requests:
    """The server's stdin as the session's write stream: each message one line, written by the task that sends it.

    ``write`` takes the whole line at once, so a sender cancelled while waiting for the pipe to
    drain never leaves half a message behind.
    """

    def __init__(self, stdin: ByteSendStream):
        self._stdin = stdin
        self._closed = False

    async def send(self, item: Any, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        try:
            await self._stdin.send(data)
        except OSError as exc:  # the server closed its stdin or exited: the session reports a closed connection
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._closed = True  # stdin itself is closed by the SDK's shutdown sequence, after the session

    async def __aenter__(self) -> _Requests:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


def install() -> Callable[[], None]:
    """Make connection.McpServer start stdio servers through this transport; returns the undo."""
    from crewagent.core.mcp import connection

    sdk_transport = connection._transport

    def transport(spec: Any, errlog: TextIO | None) -> Any:
        if spec.settings.transport != "stdio" or errlog is None:
            return sdk_transport(spec, errlog)
        from mcp.client.stdio import StdioServerParameters

        settings = spec.settings
        params = StdioServerParameters(command=settings.command, args=list(settings.args), env=dict(spec.env) or None, cwd=settings.cwd or None)
        return stdio_transport(params, errlog)

    connection._transport = transport

    def undo() -> None:
        connection._transport = sdk_transport

    return undo


@asynccontextmanager
async def stdio_transport(params: Any, errlog: TextIO) -> AsyncIterator[tuple[_Replies, _Requests]]:
    """Start the server of ``params`` (the SDK's ``StdioServerParameters``) and yield the session's
    (read, write) streams; on the way out, stop it with the SDK's own sequence, shielded from
    cancellation (every wait in it is bounded). Raises OSError when the command cannot start."""
    from mcp.client import stdio

    command = await stdio._get_executable_command(params.command)
    # Through the module attribute: connection._watch_spawns learns the pid there.
    process = await stdio._create_platform_compatible_process(
        command=command, args=params.args, env=stdio.get_default_environment() | (params.env or {}), errlog=errlog, cwd=params.cwd
    )
    assert process.stdin is not None and process.stdout is not None, "the SDK starts servers with pipes"
    replies, requests = _Replies(process.stdout), _Requests(process.stdin)
    try:
        yield replies, requests
    finally:
        with anyio.CancelScope(shield=True):
            await replies.aclose()
            await requests.aclose()
            async with anyio.create_task_group() as tg:
                # A server blocked writing to a full stdout could not see its stdin close: keep
                # reading (and dropping) while the SDK stops it; its stop closes stdout at the end.
                tg.start_soon(stdio._drain_stdout, process)
                await stdio._stop_server_process(process)
