"""MCP settings (issue 12): the server list in settings.json, its secrets in the keyring, Claude Desktop's JSON."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from crewagent.core.mcp import McpConfigError, McpSecrets, ServerDefinition, ServerSecrets, parse_mcp_servers
from crewagent.core.mcp.config import make_server, remove_server, save_server, server_id_from_name
from crewagent.core.mcp.manager import split_tool_name, tool_name
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.core.tools import ToolPolicy
from tests.core.mcp_helpers import MCP_GROUP

CLAUDE_DESKTOP = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]},
        "Brave Search": {"command": "npx", "args": ["-y", "@brave/brave-search-mcp-server"], "env": {"BRAVE_API_KEY": "KEY"}},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer TOKEN"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
    }
}


def test_settings_without_mcp_load_with_it_off_and_empty(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    (tmp_path / "settings.json").write_text(json.dumps({"llm": {"model": "m"}}), encoding="utf-8")
    settings = store.load()
    assert settings.mcp.enabled is True and settings.mcp.servers == []
    assert settings.llm.model == "m"


def test_one_bad_server_entry_is_dropped_and_nothing_else_is_lost(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    servers = [{"id": "good", "command": "x"}, {"id": "bad__id", "command": "y"}, {"id": "good", "command": "z"}, {"command": "no id"}]
    (tmp_path / "settings.json").write_text(json.dumps({"llm": {"model": "kept"}, "mcp": {"servers": servers}}), encoding="utf-8")
    settings = store.load()
    assert [(s.id, s.command) for s in settings.mcp.servers] == [("good", "x")]
    assert settings.llm.model == "kept"


def test_secret_env_values_and_headers_never_reach_settings_json(tmp_path: Path) -> None:
    env_secret, header_secret = f"env-{uuid.uuid4().hex}", f"hdr-{uuid.uuid4().hex}"
    store, secrets = SettingsStore(tmp_path), McpSecrets(SecretStore(tmp_path, use_keyring=False))
    stdio = make_server("brave", command="npx", args=["-y", "server"])
    save_server(store, secrets, ServerDefinition(stdio, ServerSecrets(env={"BRAVE_API_KEY": env_secret})))
    http = make_server("remote", transport="http", url="https://example.com/mcp")
    save_server(store, secrets, ServerDefinition(http, ServerSecrets(headers={"Authorization": f"Bearer {header_secret}"})))

    text = (tmp_path / "settings.json").read_text(encoding="utf-8")
    assert env_secret not in text and header_secret not in text
    loaded = store.load().mcp
    assert loaded.server("brave").envNames == ["BRAVE_API_KEY"]  # type: ignore[union-attr]
    assert loaded.server("remote").headerNames == ["Authorization"]  # type: ignore[union-attr]
    assert secrets.get("brave").env == {"BRAVE_API_KEY": env_secret}
    assert secrets.get("remote").headers == {"Authorization": f"Bearer {header_secret}"}

    assert remove_server(store, secrets, "brave") is True
    assert secrets.get("brave") == ServerSecrets()
    assert remove_server(store, secrets, "brave") is False
    assert [s.id for s in store.load().mcp.servers] == ["remote"]


def test_saving_a_server_again_replaces_it_in_place(tmp_path: Path) -> None:
    store, secrets = SettingsStore(tmp_path), McpSecrets(SecretStore(tmp_path, use_keyring=False))
    for server_id in ("a", "b", "c"):
        save_server(store, secrets, ServerDefinition(make_server(server_id, command="old")))
    save_server(store, secrets, ServerDefinition(make_server("b", command="new")))
    assert [(s.id, s.command) for s in store.load().mcp.servers] == [("a", "old"), ("b", "new"), ("c", "old")]


def test_claude_desktop_mcp_servers_import() -> None:
    definitions = {d.settings.id: d for d in parse_mcp_servers(json.dumps(CLAUDE_DESKTOP))}
    assert list(definitions) == ["time", "Brave-Search", "remote", "legacy"]
    time = definitions["time"].settings
    assert (time.transport, time.command, time.args) == ("stdio", "uvx", ["mcp-server-time", "--local-timezone", "UTC"])
    assert definitions["Brave-Search"].secrets.env == {"BRAVE_API_KEY": "KEY"}
    assert definitions["Brave-Search"].settings.name == "Brave Search"
    assert (definitions["remote"].settings.transport, definitions["remote"].secrets.headers) == ("http", {"Authorization": "Bearer TOKEN"})
    assert definitions["legacy"].settings.transport == "sse"


@pytest.mark.parametrize(
    "text, problem",
    [("not json", "not valid"), ("[]", "mcpServers"), ('{"mcpServers": {"x": 3}}', "expected an object"), ('{"mcpServers": {"x": {}}}', "needs a command")],
)
def test_a_bad_mcp_servers_document_is_one_clear_error(text: str, problem: str) -> None:
    with pytest.raises(McpConfigError, match=problem):
        parse_mcp_servers(text)


def test_server_ids_from_names_are_valid_tool_name_parts() -> None:
    for name in ("Brave Search", "a__b", "__", "x" * 80, "中文"):
        server_id = server_id_from_name(name)
        make_server(server_id, command="x")  # valid, or this raises
        assert split_tool_name(tool_name(server_id, "do_it")) == (server_id, "do_it")


def test_the_agent_policy_only_tightens_the_servers() -> None:
    system = ToolPolicy.from_settings(Settings().tools.model_dump(mode="json"))
    assert system.allows("mcp__time__get_current_time") and system.allows("mcp__web__fetch")
    agent = system.tighten({"mcp": {"enabled": True, "allowedServers": ["time"]}})
    assert agent.allows("mcp__time__get_current_time") and not agent.allows("mcp__web__fetch")
    # An agent cannot widen what the system policy restricts.
    narrow = ToolPolicy.from_settings({"mcp": {"allowedServers": ["web"]}})
    assert not narrow.tighten({"mcp": {"enabled": True, "allowedServers": ["time", "web"]}}).allows("mcp__time__x")
    assert not system.tighten({"mcp": {"enabled": False}}).allows("mcp__time__get_current_time")


@pytest.mark.xdist_group(MCP_GROUP)  # imports the SDK: with the other MCP tests
def test_the_sdk_still_spawns_stdio_servers_through_the_function_the_orphan_protection_wraps() -> None:
    """Orphan protection (connection._watch_spawns) wraps the SDK's private
    ``mcp.client.stdio._create_platform_compatible_process`` to learn each server's pid (its process
    group). An SDK upgrade that renames it, or stops calling it through the module, would silently
    leave a server's children running after a stop: this fails instead."""
    import asyncio
    import os
    import sys

    from mcp.client import stdio

    from crewagent.core.mcp import connection

    assert callable(getattr(stdio, "_create_platform_compatible_process", None)), "the SDK no longer has _create_platform_compatible_process"
    inner = getattr(stdio.stdio_client, "__wrapped__", stdio.stdio_client)
    assert "_create_platform_compatible_process" in inner.__code__.co_names, "stdio_client no longer spawns through the module's function"

    connection._watch_spawns()
    assert getattr(stdio._create_platform_compatible_process, "_crewagent_watched", False)
    pids: list[int] = []

    async def spawn() -> None:
        connection._on_spawn.set(pids.append)
        # A real file for the child's stderr: the SDK's default is the sys.stderr of import time,
        # which under pytest's capture (an xdist worker) has no file descriptor.
        with open(os.devnull, "w", encoding="utf-8") as errlog:
            process = await stdio._create_platform_compatible_process(command=sys.executable, args=["-c", "pass"], errlog=errlog)
            await process.wait()

    asyncio.run(spawn())
    assert len(pids) == 1
    if sys.platform != "win32":
        assert pids[0] > 0 and pids[0] != os.getpid()


@pytest.mark.xdist_group(MCP_GROUP)  # imports the SDK: with the other MCP tests
def test_the_sdk_reads_a_server_s_stdout_a_whole_line_at_a_time() -> None:
    """The SDK's stdout reader joins its pending text to each chunk and splits the lot again: a 10 MB
    result written in small pieces cost the app 2-6 CPU-s (docs/benchmarks.md, Test suite, session 8).
    The spawn hook gives it whole lines: every chunk read ends a line, but the stream's unended tail."""
    import asyncio
    import os
    import sys

    from anyio import EndOfStream
    from mcp.client import stdio

    from crewagent.core.mcp import connection

    connection._watch_spawns()
    # A 1 MB line in 4 KB pieces (more than a pipe holds, more than one read returns), two short
    # lines, and a tail with no line end.
    writer = (
        "import os\nfor _ in range(256): os.write(1, b'x' * 4096)\n"
        "os.write(1, b'\\nshort\\nline\\n'); os.write(1, b'tail')"
    )

    async def read_all() -> list[bytes]:
        with open(os.devnull, "w", encoding="utf-8") as errlog:
            process = await stdio._create_platform_compatible_process(command=sys.executable, args=["-c", writer], errlog=errlog)
            chunks = []
            try:
                while True:
                    chunks.append(await process.stdout.receive())
            except EndOfStream:
                pass
            await process.wait()
            await process.aclose()
            return chunks

    chunks = asyncio.run(read_all())
    assert b"".join(chunks) == b"x" * (256 * 4096) + b"\nshort\nline\ntail"
    assert all(b"\n" in chunk for chunk in chunks[:-1]) and chunks[-1].endswith(b"tail")


def test_a_cancelled_read_of_whole_lines_loses_no_piece() -> None:
    """The SDK cancels its stdout reader at shutdown and drains the pipe after: pieces of a line read
    before a cancellation are returned by the next read, in order."""
    import asyncio

    from anyio import EndOfStream

    from crewagent.core.mcp.connection import WholeLines

    class Pipe:
        def __init__(self) -> None:
            self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

        async def receive(self, max_bytes: int = 65536) -> bytes:
            chunk = await self.chunks.get()
            if chunk is None:
                self.chunks.put_nowait(None)  # the end, again on every read (as anyio's pipe streams do)
                raise EndOfStream
            return chunk

    async def scenario() -> list[bytes]:
        pipe = Pipe()
        lines = WholeLines(pipe)
        pipe.chunks.put_nowait(b'{"a": ')
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await lines.receive()  # one piece read, then cancelled waiting for the line's end
        for chunk in (b'1}\n{"b"', b": 2}\n", b"tail", None):
            pipe.chunks.put_nowait(chunk)
        got = [await lines.receive(), await lines.receive(), await lines.receive()]
        with pytest.raises(EndOfStream):
            await lines.receive()
        return got

    assert asyncio.run(scenario()) == [b'{"a": 1}\n{"b"', b": 2}\n", b"tail"]
