"""``crewagent mcp list|add|remove|test|import``: MCP servers from the command line (no Qt here).

The parser is built from the standard library alone; each handler imports the core when it runs
(see cli_commands.py: ``crewagent --help`` must not pay for pydantic, keyring or the MCP SDK).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_subcommand(subparsers: Any, common: argparse.ArgumentParser) -> None:
    mcp = subparsers.add_parser("mcp", parents=[common], help="MCP servers whose tools the model can use")
    commands = mcp.add_subparsers(dest="mcp_command", required=True, parser_class=type(mcp))

    lst = commands.add_parser("list", parents=[common], help="the configured MCP servers")
    lst.set_defaults(handler=cmd_list)

    add = commands.add_parser(
        "add",
        parents=[common],
        help="add (or replace) a server: `mcp add ID -- COMMAND [ARGS...]` or `mcp add ID --url URL`",
    )
    add.add_argument("server_id", metavar="ID", help="letters, digits, '-' and '_' (its tools are mcp__ID__<tool>)")
    add.add_argument("--url", help="a streamable HTTP server's URL (instead of a command)")
    add.add_argument("--sse", action="store_true", help="the URL speaks the legacy HTTP+SSE transport")
    add.add_argument("--name", default="", help="display name")
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment variable (kept in the keyring)")
    add.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="HTTP header (kept in the keyring)")
    add.add_argument("--cwd", default="", help="working folder of the command")
    add.add_argument("--timeout", type=float, default=None, help="seconds a tool call may take (default 60)")
    add.add_argument("--start-timeout", type=float, default=None, help="seconds it may take to start and answer initialize (default 60)")
    add.add_argument("--trusted", action="store_true", help="run its tools without asking for approval")
    add.add_argument("--disabled", action="store_true", help="add it turned off")
    # Everything after ID, options included: argparse cannot mix a REMAINDER with options that come
    # after it, so cmd_add splits it at "--" and parses the options before it again.
    add.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...] of a stdio server")
    add.set_defaults(handler=cmd_add, add_parser=add)

    rm = commands.add_parser("remove", parents=[common], help="remove a server and its secrets")
    rm.add_argument("server_id", metavar="ID")
    rm.set_defaults(handler=cmd_remove)

    test = commands.add_parser("test", parents=[common], help="start a server, list its tools, stop it (exit 1 on failure)")
    test.add_argument("server_id", metavar="ID")
    test.set_defaults(handler=cmd_test)

    imp = commands.add_parser("import", parents=[common], help='add the servers of a Claude-Desktop-style {"mcpServers": ...} JSON file')
    imp.add_argument("file", help="the JSON file ('-' for stdin)")
    imp.set_defaults(handler=cmd_import)


def _json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _pairs(items: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--{what} takes NAME=VALUE, not {item!r}")
        pairs[key.strip()] = value
    return pairs


def cmd_list(args: argparse.Namespace) -> int:
    from crewagent.core.settings import SettingsStore

    settings = SettingsStore().load().mcp
    rows = [
        {
            "id": s.id,
            "name": s.name,
            "enabled": s.enabled,
            "transport": s.transport,
            "command": " ".join([s.command, *s.args]).strip() if s.transport == "stdio" else "",
            "url": s.url,
            "trusted": s.trusted,
            "envNames": s.envNames,
            "headerNames": s.headerNames,
        }
        for s in settings.servers
    ]
    if _json(args):
        print(json.dumps({"enabled": settings.enabled, "servers": rows}, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not settings.enabled:
        print("MCP is turned off (mcp.enabled is false): no server starts.")
    if not rows:
        print("No MCP servers. Add one with `crewagent mcp add ID -- COMMAND [ARGS...]`.")
    for row in rows:
        where = row["command"] or row["url"]
        flags = ", ".join(f for f, on in (("off", not row["enabled"]), ("trusted", row["trusted"])) if on)
        print(f"{row['id']}\t{row['transport']}\t{where}" + (f"\t({flags})" if flags else ""))
    return EXIT_OK


def cmd_add(args: argparse.Namespace) -> int:
    from crewagent.core.mcp.config import McpSecrets, ServerDefinition, ServerSecrets, make_server, save_server
    from crewagent.core.settings import SettingsStore

    rest = list(args.command)
    # argparse drops a "--" right after ID itself: then the rest is the command.
    split = rest.index("--") if "--" in rest else (-1 if rest and not rest[0].startswith("-") else len(rest))
    options, command = rest[:split], rest[split + 1:]
    if options:
        args = args.add_parser.parse_args([*options, args.server_id], namespace=args)  # options first: none is taken as the REMAINDER
    if bool(command) == bool(args.url):
        raise ValueError("give either -- COMMAND [ARGS...] (stdio) or --url URL (HTTP), not both or neither")
    fields: dict[str, Any] = {"name": args.name, "enabled": not args.disabled, "trusted": args.trusted, "cwd": args.cwd}
    if args.timeout is not None:
        fields["timeoutSeconds"] = args.timeout
    if args.start_timeout is not None:
        fields["startTimeoutSeconds"] = args.start_timeout
    if args.url:
        fields.update(transport="sse" if args.sse else "http", url=args.url)
    else:
        fields.update(transport="stdio", command=command[0], args=command[1:])
    server = make_server(args.server_id, **fields)
    secrets = ServerSecrets(env=_pairs(args.env, "env"), headers=_pairs(args.header, "header"))
    save_server(SettingsStore(), McpSecrets(), ServerDefinition(server, secrets))
    print(f"added MCP server {server.id}; its tools are mcp__{server.id}__<tool>", file=sys.stderr)
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    from crewagent.core.mcp.config import McpSecrets, remove_server
    from crewagent.core.settings import SettingsStore

    if not remove_server(SettingsStore(), McpSecrets(), args.server_id):
        raise ValueError(f"there is no MCP server {args.server_id!r} (see `crewagent mcp list`)")
    print(f"removed MCP server {args.server_id}", file=sys.stderr)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from crewagent.core.mcp.config import McpSecrets, parse_mcp_servers, save_server
    from crewagent.core.settings import SettingsStore

    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as source:
                text = source.read()
    except OSError as exc:
        raise ValueError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    definitions = parse_mcp_servers(text)
    store, secrets = SettingsStore(), McpSecrets()
    for definition in definitions:
        save_server(store, secrets, definition)
        print(definition.settings.id)
    return EXIT_OK


def cmd_test(args: argparse.Namespace) -> int:
    return asyncio.run(_test(args))


async def _test(args: argparse.Namespace) -> int:
    from crewagent.core.mcp import McpFailure, McpManager
    from crewagent.core.settings import SettingsStore

    settings = SettingsStore().load().mcp
    server = settings.server(args.server_id)
    if server is None:
        raise ValueError(f"there is no MCP server {args.server_id!r} (see `crewagent mcp list`)")
    manager = McpManager()
    # A test starts the server even when it (or MCP) is turned off: that is what the user asks for.
    test_settings = settings.model_copy(update={"enabled": True, "servers": [server.model_copy(update={"enabled": True})]})
    try:
        connection = (await manager.configure(test_settings))[0]
        try:
            tools = await connection.start()
        except McpFailure as failure:
            print(f"crewagent: {failure.message}", file=sys.stderr)
            for line in [l for l in connection.stderr.lines() if not l.startswith("[crewagent]")][-20:]:
                print(f"  {line}", file=sys.stderr)
            return EXIT_FAILED
    finally:
        await manager.aclose()
    if _json(args):
        print(json.dumps({"id": server.id, "ok": True, "tools": [{"name": t.name, "description": t.description, "readOnly": t.read_only} for t in tools]}, ensure_ascii=False, indent=2))
    else:
        print(f"{server.id}: running, {len(tools)} tool(s)")
        for tool in tools:
            summary = " ".join(tool.description.split())[:100]
            print(f"  mcp__{server.id}__{tool.name}\t{summary}")
    return EXIT_OK
