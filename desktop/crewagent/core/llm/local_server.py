"""A minimal OpenAI-compatible HTTP server on 127.0.0.1, driven by a pluggable responder.

It serves ``POST /v1/chat/completions`` (SSE or JSON) and ``GET /v1/models`` so that the real
``openai`` client, its HTTP stack and its SSE parser are exercised end to end. The demo provider
and the test fakes are both responders behind this one server.

What a responder returns is a *reply*, described as data:

- :class:`JsonReply` -- a status, a JSON body, headers (errors are JSON replies with a 4xx/5xx);
- :class:`SseReply` -- a sequence of SSE items: a ``dict`` (sent as ``data: {json}\\n\\n``),
  :class:`Raw` bytes written verbatim (malformed events, events without a delimiter),
  :class:`Pause` (a stall; ends early when the client goes away or the server stops) and
  :class:`Drop` (the connection is cut before the stream is complete);
- :class:`Hangup` -- the connection is closed before any response is sent.

Streams use HTTP/1.1 chunked transfer encoding, as real providers do, so that a dropped
connection is visible to the client as an incomplete body rather than a clean end of stream.
Every request is recorded in :attr:`LocalServer.requests`; connections the client closed while
a reply was being written are recorded in :attr:`LocalServer.client_disconnects`.
"""

from __future__ import annotations

import json
import select
import selectors
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol

__all__ = [
    "Drop",
    "Hangup",
    "JsonReply",
    "LocalServer",
    "Pause",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Responder",
    "SseItem",
    "SseReply",
    "error_body",
]


@dataclass(frozen=True)
class Raw:
    """Bytes written to the SSE stream verbatim (no framing added)."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Write nothing for ``seconds`` (a stalled provider)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Cut the connection here, without finishing the chunked body."""


SseItem = dict[str, Any] | Raw | Pause | Drop


@dataclass(frozen=True)
class SseReply:
    """A ``text/event-stream`` response; ``done`` appends ``data: [DONE]``."""

    events: Iterable[SseItem]
    done: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JsonReply:
    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hangup:
    """Close the connection without sending a response."""


Reply = SseReply | JsonReply | Hangup


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    number: int
    method: str
    path: str
    headers: Mapping[str, str]
    raw_body: bytes

    @property
    def body(self) -> Any:
        """The JSON body, or None when there is none (GET) or it is not JSON."""
        if not self.raw_body:
            return None
        try:
            return json.loads(self.raw_body)
        except ValueError:
            return None


class Responder(Protocol):
    """What answers the server's requests. Called on a server thread, one call per request."""

    def chat_completion(self, request: RecordedRequest) -> Reply: ...

    def list_models(self, request: RecordedRequest) -> Reply: ...


def error_body(message: str, *, type: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error envelope."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


class _ClientGone(Exception):
    """The client closed the connection while a reply was being written."""


class _Stopping(Exception):
    """The server is stopping: abandon the reply."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Each SSE event is its own small write; without this, Nagle's algorithm and the client's
        # delayed ACK hold every event back ~40 ms on a reused connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a request log on stderr would drown test output

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner = self.server.owner
        if len(raw) < length:  # the client went away in the middle of its request (killed): no one to answer
            self.close_connection = True
            owner._note_cut_request()
            return
        request = owner._record(self.command, self.path, dict(self.headers.items()), raw)
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            if self.command == "POST" and path.endswith("/chat/completions"):
                reply = owner.responder.chat_completion(request)
            elif self.command == "GET" and path.endswith("/models"):
                reply = owner.responder.list_models(request)
            else:
                reply = JsonReply(404, error_body(f"No route for {self.command} {self.path}"))
        except Exception as exc:  # a responder bug: tell the client and keep it for the test to see
            owner.errors.append(exc)
            reply = JsonReply(500, error_body(f"responder failed: {exc!r}", type="server_error"))
        try:
            self._send(reply, request)
        except _ClientGone:
            owner._note_disconnect(request.number)
            self.close_connection = True
        except _Stopping:
            self._cut()

    def _send(self, reply: Reply, request: RecordedRequest) -> None:
        if isinstance(reply, Hangup):
            self._cut()
            return
        if isinstance(reply, JsonReply):
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self._write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        for item in reply.events:
            if isinstance(item, Pause):
                self._pause(item.seconds)
            elif isinstance(item, Drop):
                self._cut()
                return
            elif isinstance(item, Raw):
                self._chunk(item.data)
            else:
                self._chunk(b"data: " + json.dumps(item).encode() + b"\n\n")
        if reply.done:
            self._chunk(b"data: [DONE]\n\n")
        self._write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        if data:
            self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            raise _ClientGone from exc

    def _pause(self, seconds: float) -> None:
        """Sleep, but notice promptly when the client hangs up or the server stops."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if self.server.owner._stopping.is_set():
                raise _Stopping
            readable, _, _ = select.select([self.connection], [], [], min(remaining, 0.02))
            if readable:
                try:
                    peek = self.connection.recv(1, socket.MSG_PEEK)
                except OSError as exc:
                    raise _ClientGone from exc
                if not peek:  # an orderly close from the client
                    raise _ClientGone

    def _cut(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone: that is what we wanted


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    #: ``handle_request`` is only called once the listening socket is readable: it must not wait.
    timeout = 0
    owner: LocalServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind also looks the host up (socket.getfqdn, a reverse DNS query) only
        # to fill ``server_name``, which nothing here reads: a bind is all a local server needs.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def serve_until(self, stopping: threading.Event, wake: socket.socket) -> None:
        """``serve_forever`` without its polling: wait for a connection or for ``wake`` to be
        readable (sent to by :meth:`LocalServer.stop`), never on a timer. ``serve_forever`` wakes
        every ``poll_interval`` to look for a stop request: at the 20 ms it needs to stop promptly,
        an idle server (the demo provider's, for the whole life of a window) cost ~4 ms of CPU a
        second."""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while not stopping.is_set():
                for key, _events in selector.select():
                    if key.fileobj is self and not stopping.is_set():
                        self.handle_request()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner._connection_opened(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._connection_closed(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return  # the client went away between requests: normal for keep-alive connections
        if exc is not None:
            self.owner.errors.append(exc)


class LocalServer:
    """An OpenAI-compatible server on 127.0.0.1 in a daemon thread.

    ``port=0`` picks a free port. Use as a context manager or call :meth:`start` / :meth:`stop`.
    ``base_url`` (``http://127.0.0.1:<port>/v1``) is what a client's ``base_url`` should be.
    """

    def __init__(self, responder: Responder, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder = responder
        self._host = host
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None  # (read, write) while serving
        self._stopping = threading.Event()
        self._lock = threading.Condition()
        self._open: set[socket.socket] = set()
        self.requests: list[RecordedRequest] = []
        self.client_disconnects: list[int] = []
        #: Exceptions raised by the responder or the handler (a bug, never a client hang-up).
        self.errors: list[BaseException] = []
        #: Requests whose client went away before its whole body arrived (not recorded, not answered).
        self.cut_requests = 0

    # lifecycle

    def start(self) -> LocalServer:
        if self._server is not None:
            return self
        server = _Server((self._host, self._port), _Handler)
        server.owner = self
        self._server = server
        self._stopping.clear()
        self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=server.serve_until, args=(self._stopping, self._wake[0]), name="crewagent-local-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, cut open connections and wait (up to ``timeout``) for handlers to finish."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        wake, self._wake = self._wake, None
        assert wake is not None  # made with the server
        wake[1].send(b"x")  # the serving thread returns from its wait and sees _stopping
        if thread is not None:
            thread.join(timeout)  # as server.shutdown() did: no new connection is taken after this
        with self._lock:
            for sock in list(self._open):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._lock.wait_for(lambda: not self._open, timeout=timeout)
        server.server_close()
        for end in wake:
            end.close()
        self._server = None
        self._thread = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._server is not None

    def wait_for_disconnect(self, request_number: int, timeout: float = 5.0) -> bool:
        """Wait until the client closed the connection of request ``request_number``."""
        with self._lock:
            return self._lock.wait_for(lambda: request_number in self.client_disconnects, timeout=timeout)

    # called from handler threads

    def _record(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(len(self.requests) + 1, method, path, headers, raw)
            self.requests.append(request)
            return request

    def _note_cut_request(self) -> None:
        with self._lock:
            self.cut_requests += 1
            self._lock.notify_all()

    def _note_disconnect(self, number: int) -> None:
        with self._lock:
            self.client_disconnects.append(number)
            self._lock.notify_all()

    def _connection_opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _connection_closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
            self._lock.notify_all()
