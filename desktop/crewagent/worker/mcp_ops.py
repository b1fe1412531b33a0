"""What Settings → MCP asks of the worker: keep servers' secret values, test a server, read an ``mcpServers`` file.

Plain Python (no Qt), used by :class:`crewagent.worker.mcp_requests.McpRequests`: the secret
writes run on the worker thread (like API keys), the test and the file read in its background
pool. It reuses core/mcp: :class:`McpSecrets` for the keyring, :class:`McpServer` (the SDK client
the turns use) for the test, :func:`parse_mcp_servers` for Claude Desktop's format.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from crewagent.core.mcp import McpFailure, McpSecrets, McpServer, ServerDefinition, ServerSecrets, ServerSpec, parse_mcp_servers
from crewagent.core.mcp.config import McpConfigError
from crewagent.core.settings import McpServerSettings

#: Lines of a server's stderr a test report carries (the server's own log keeps more).
REPORT_LOG_LINES = 200
#: The largest ``mcpServers`` file read (a shared setup is a few KB).
MAX_IMPORT_BYTES = 1_000_000

#: A (name, value) pair of an env variable or header; value None: keep the value stored for ``source_id``.
SecretPairs = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class McpSecretEdit:
    """The secret values of ``server_id`` as the user left them in the form. ``source_id`` is the
    server whose stored values a None value keeps (the same id, the one duplicated, or "")."""

    server_id: str
    source_id: str = ""
    env: SecretPairs = ()
    headers: SecretPairs = ()


@dataclass(frozen=True)
class McpDraft:
    """A server to test as the form shows it (maybe not saved yet) and its secret values."""

    settings: McpServerSettings
    secrets: McpSecretEdit


@dataclass(frozen=True)
class McpToolLine:
    name: str
    description: str


@dataclass(frozen=True)
class McpTestReport:
    """The answer to a Test Connection: ok with the tools, or the error; the tail of the server's stderr."""

    server_id: str
    ok: bool
    tools: tuple[McpToolLine, ...] = ()
    error: str = ""
    log: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpLog:
    """The stderr log of a server the turns started (``live``), as its bounded log holds it now;
    ``live`` False: the turns have not started that server in this session (no log to show)."""

    server_id: str
    lines: tuple[str, ...] = ()
    live: bool = False


@dataclass(frozen=True)
class McpImport:
    """The servers of an ``mcpServers`` file (their secret values included: they become the form's), or why none."""

    path: str
    servers: tuple[ServerDefinition, ...] = ()
    error: str = ""


class McpOps:
    """See the module docstring. ``secrets`` None: the keyring (or its private fallback file)."""

    def __init__(self, secrets: McpSecrets | None = None):
        self._secrets_instance = secrets
        # The tests running in the background pool (their loop and task), so that quitting can cancel them.
        self._running: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def _secrets(self) -> McpSecrets:
        if self._secrets_instance is None:
            self._secrets_instance = McpSecrets()
        return self._secrets_instance

    def resolve(self, edit: McpSecretEdit) -> ServerSecrets:
        """The values of ``edit``, a kept one (None) read from the keyring entry of its source."""
        old = self._secrets.get(edit.source_id) if edit.source_id else ServerSecrets()

        def pick(pairs: SecretPairs, stored: dict[str, str]) -> dict[str, str]:
            values = {name: value if value is not None else stored.get(name) for name, value in pairs}
            return {name: value for name, value in values.items() if value is not None}

        return ServerSecrets(env=pick(edit.env, dict(old.env)), headers=pick(edit.headers, dict(old.headers)))

    def save_secrets(self, edit: McpSecretEdit) -> None:
        self._secrets.set(edit.server_id, self.resolve(edit))

    def delete_secrets(self, server_id: str) -> None:
        self._secrets.delete(server_id)

    def test(self, draft: McpDraft) -> McpTestReport:
        """Start the server, list its tools, stop it (in the background pool; bounded by its start timeout)."""
        secrets = self.resolve(draft.secrets)
        spec = ServerSpec(draft.settings, env=dict(secrets.env), headers=dict(secrets.headers))
        return asyncio.run(self._tracked(spec.id, _probe(spec)))

    async def _tracked(self, server_id: str, probe: Coroutine[Any, Any, McpTestReport]) -> McpTestReport:
        task = asyncio.current_task()
        assert task is not None
        entry = (asyncio.get_running_loop(), task)
        with self._lock:
            if self._closed:
                probe.close()
                return McpTestReport(server_id, False, error="The app is quitting.")
            self._running.add(entry)
        try:
            return await probe
        except asyncio.CancelledError:
            return McpTestReport(server_id, False, error="The test was cancelled.")
        finally:
            with self._lock:
                self._running.discard(entry)

    def cancel_tests(self) -> None:
        """Quitting: cancel the tests in flight (each stops its server, bounded) and refuse new ones."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for loop, task in running:
            loop.call_soon_threadsafe(task.cancel)

    def read_import(self, path: str) -> McpImport:
        try:
            with open(path, "rb") as source:
                data = source.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            return McpImport(path, error=f"Cannot read {path}: {exc.strerror or exc}")
        if len(data) > MAX_IMPORT_BYTES:
            return McpImport(path, error=f"{path} is larger than {MAX_IMPORT_BYTES:,} bytes: not an mcpServers file.")
        try:
            return McpImport(path, tuple(parse_mcp_servers(data)))
        except McpConfigError as exc:
            return McpImport(path, error=str(exc))


async def _probe(spec: ServerSpec) -> McpTestReport:
    server = McpServer(spec)
    try:
        tools = await server.start()
    except McpFailure as failure:
        return McpTestReport(spec.id, False, error=failure.message, log=_tail(server))
    finally:
        await server.stop()
    lines = tuple(McpToolLine(tool.name, " ".join(tool.description.split())) for tool in tools)
    return McpTestReport(spec.id, True, lines, log=_tail(server))


def _tail(server: McpServer) -> tuple[str, ...]:
    return tuple(server.stderr.lines()[-REPORT_LOG_LINES:])
