"""MCP server configuration: secrets in the keyring, the settings' server list, Claude Desktop's ``mcpServers`` JSON.

A server's environment variables (stdio) and HTTP headers (http, sse) hold API keys and tokens
more often than not, so all their *values* go to the keyring (one entry per server,
``mcp:<id>``, through :class:`~crewagent.core.secrets.SecretStore`); settings.json keeps only
their names. Everything here is blocking (keyring, settings file): call it off the event loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from crewagent.core.errors import CrewAgentError
from crewagent.core.jsonparse import parse_json
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import McpServerSettings, Settings, SettingsStore

_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


class McpConfigError(CrewAgentError, ValueError):
    """An MCP server definition the user gave cannot be used (bad id, no command, bad JSON)."""


@dataclass(frozen=True)
class ServerSecrets:
    """The secret half of a server's definition (never written to settings.json)."""

    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerDefinition:
    """A server as a person defines it: its settings and its secret values."""

    settings: McpServerSettings
    secrets: ServerSecrets = ServerSecrets()


def secret_account(server_id: str) -> str:
    return f"mcp:{server_id}"


class McpSecrets:
    """The env values and headers of each server, in the keyring (or the 0600 fallback file)."""

    def __init__(self, store: SecretStore | None = None):
        self._store = store if store is not None else SecretStore()

    def get(self, server_id: str) -> ServerSecrets:
        raw = self._store.get(secret_account(server_id))
        if not raw:
            return ServerSecrets()
        try:
            data = parse_json(raw)
        except ValueError:
            return ServerSecrets()
        if not isinstance(data, dict):
            return ServerSecrets()
        return ServerSecrets(env=_strings(data.get("env")), headers=_strings(data.get("headers")))

    def set(self, server_id: str, secrets: ServerSecrets) -> None:
        if not secrets.env and not secrets.headers:
            self._store.delete(secret_account(server_id))
            return
        payload = json.dumps({"env": dict(secrets.env), "headers": dict(secrets.headers)})
        self._store.set(secret_account(server_id), payload)

    def delete(self, server_id: str) -> None:
        self._store.delete(secret_account(server_id))


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str | int | float)}


def save_server(settings_store: SettingsStore, secrets: McpSecrets, definition: ServerDefinition) -> Settings:
    """Add ``definition`` (or replace the server with its id): the secret values first, then the settings."""
    server = definition.settings.model_copy(
        update={"envNames": sorted(definition.secrets.env), "headerNames": sorted(definition.secrets.headers)}
    )
    secrets.set(server.id, definition.secrets)
    settings = settings_store.load()
    servers = [s for s in settings.mcp.servers if s.id != server.id]
    index = next((n for n, s in enumerate(settings.mcp.servers) if s.id == server.id), len(servers))
    servers.insert(index, server)
    return settings_store.update(mcp={"servers": [s.model_dump(mode="json") for s in servers]})


def remove_server(settings_store: SettingsStore, secrets: McpSecrets, server_id: str) -> bool:
    """Remove the server and its secrets; False when there is no such server."""
    settings = settings_store.load()
    if settings.mcp.server(server_id) is None:
        return False
    servers = [s.model_dump(mode="json") for s in settings.mcp.servers if s.id != server_id]
    settings_store.update(mcp={"servers": servers})
    secrets.delete(server_id)
    return True


def make_server(server_id: str, **fields: Any) -> McpServerSettings:
    """A server's settings, or McpConfigError naming what is wrong (a one-line message)."""
    try:
        server = McpServerSettings.model_validate({"id": server_id, **fields})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "server"
        raise McpConfigError(f"MCP server {server_id!r}: {where}: {problem['msg']}") from None
    if server.transport == "stdio" and not server.command.strip():
        raise McpConfigError(f"MCP server {server_id!r}: a stdio server needs a command.")
    if server.transport != "stdio" and not server.url.startswith(("http://", "https://")):
        raise McpConfigError(f"MCP server {server_id!r}: an HTTP server needs an http:// or https:// URL.")
    return server


def server_id_from_name(name: str) -> str:
    """A valid server id made from a name of ``mcpServers`` (``"Brave Search"`` -> ``Brave-Search``)."""
    cleaned = re.sub(r"_{2,}", "_", _ID_CHARS.sub("-", name.strip())).strip("-_")
    return (cleaned or "server")[:40].rstrip("-_") or "server"


def parse_mcp_servers(text: str | bytes) -> list[ServerDefinition]:
    """The servers of a Claude-Desktop-style ``{"mcpServers": {name: {command, args, env, cwd} |
    {url, headers, type}}}`` document (a bare ``{name: {...}}`` object is accepted too)."""
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise McpConfigError(f"The MCP servers JSON is not valid: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("mcpServers"), dict):
        data = data["mcpServers"]
    if not isinstance(data, dict) or not data:
        raise McpConfigError('Expected {"mcpServers": {"name": {"command": ...}}} with at least one server.')
    definitions: list[ServerDefinition] = []
    seen: set[str] = set()
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise McpConfigError(f"mcpServers.{name}: expected an object.")
        server_id = server_id_from_name(str(name))
        while server_id in seen:
            server_id = f"{server_id[:36]}-{len(seen)}"
        seen.add(server_id)
        kind = str(entry.get("type") or entry.get("transport") or "").lower()
        fields: dict[str, Any] = {"name": str(name), "enabled": not entry.get("disabled", False)}
        if isinstance(entry.get("url"), str):
            fields["transport"] = "sse" if kind == "sse" else "http"
            fields["url"] = entry["url"]
        else:
            fields["command"] = entry.get("command") if isinstance(entry.get("command"), str) else ""
            args = entry.get("args") or []
            fields["args"] = [str(arg) for arg in args] if isinstance(args, list) else []
            if isinstance(entry.get("cwd"), str):
                fields["cwd"] = entry["cwd"]
        server = make_server(server_id, **fields)
        definitions.append(ServerDefinition(server, ServerSecrets(env=_strings(entry.get("env")), headers=_strings(entry.get("headers")))))
    return definitions
