"""One running app per data folder: a second launch hands over to the first and exits.

The first instance listens on a QLocalServer named after a hash of the (resolved) data folder
and the user; a second launch connects, sends one JSON line (``{"project": path or null}``)
and quits. A socket file left behind by a crashed instance answers no connection: it is
removed and the new instance listens in its place.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

#: How long a second launch waits for the first instance to accept its request.
CONNECT_TIMEOUT_MS = 1000
_MAX_REQUEST_BYTES = 64 * 1024


def server_name(data_dir: str | os.PathLike[str]) -> str:
    """The local socket name for ``data_dir``: the same folder (however it is spelled) gives the same name."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    key = f"{user}\0{Path(data_dir).expanduser().resolve()}"
    return "crewagent-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class ActivationRequest:
    """What a second launch asked for: come to the front, and maybe open ``project``."""

    project: str | None = None


def forward_to_running(data_dir: str | os.PathLike[str], project: str | None = None) -> bool:
    """Hand ``project`` (or just "come forward") to the instance already running on ``data_dir``.

    Returns False when there is none (the caller then starts normally). Blocks at most about
    ``CONNECT_TIMEOUT_MS`` twice, and only before any window exists.
    """
    socket = QLocalSocket()
    socket.connectToServer(server_name(data_dir))
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    payload = {"project": str(Path(project).expanduser().resolve()) if project else None}
    socket.write(json.dumps(payload).encode("utf-8") + b"\n")
    delivered = socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(CONNECT_TIMEOUT_MS)
    return delivered


class InstanceServer(QObject):
    """Listens for second launches and reports each one as ``activation_requested``."""

    #: ``ActivationRequest``: another launch on the same data folder wants this window.
    activation_requested = Signal(object)

    def __init__(self, data_dir: str | os.PathLike[str], parent: QObject | None = None):
        super().__init__(parent)
        self.name = server_name(data_dir)
        self._server = QLocalServer(self)
        # Only this user may connect (the socket file is created 0700 on Unix).
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    def listen(self) -> bool:
        """Start listening; a stale socket of a crashed instance is replaced. False if another
        instance is alive (use :func:`forward_to_running` first to hand over to it)."""
        # Probe first: with UserAccessOption Qt binds a temporary socket and renames it over the
        # name, so listen() alone would silently take the name from a live instance.
        probe = QLocalSocket()
        probe.connectToServer(self.name)
        if probe.waitForConnected(CONNECT_TIMEOUT_MS // 4):
            probe.abort()
            return False
        # Nobody answers: whatever is left under the name is a crashed instance's socket.
        QLocalServer.removeServer(self.name)
        if self._server.listen(self.name):
            return True
        log.warning("cannot listen on %s: %s", self.name, self._server.errorString())
        return False

    def close(self) -> None:
        self._server.close()

    @Slot()
    def _on_new_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._finish(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if socket not in self._buffers:
            return
        self._buffers[socket] += bytes(socket.readAll().data())
        buffer = self._buffers[socket]
        if b"\n" in buffer or len(buffer) > _MAX_REQUEST_BYTES:
            self._finish(socket)

    def _finish(self, socket: QLocalSocket) -> None:
        buffer = self._buffers.pop(socket, None)
        if buffer is None:
            return
        if socket.bytesAvailable():
            buffer += bytes(socket.readAll().data())
        line = buffer.split(b"\n", 1)[0]
        try:
            request = json.loads(line.decode("utf-8")) if line.strip() else {}
        except (UnicodeDecodeError, ValueError):
            log.warning("ignored a malformed activation request")
            return
        project = request.get("project") if isinstance(request, dict) else None
        self.activation_requested.emit(ActivationRequest(project if isinstance(project, str) and project else None))
