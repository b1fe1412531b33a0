#!/usr/bin/env python3
"""The cheapest honest MCP echo server for benchmarks/bench_mcp.py: the SDK's low-level ``Server``
over stdio, one ``echo`` tool, no FastMCP/MCPServer layer (no pydantic model of the arguments, no
output schema validation). What it costs per call is the SDK's protocol floor on the server side.

    python benchmarks/mcp_echo_server.py [--start-delay SECONDS]

``--start-delay``: wait that long before serving (a server that connects somewhere on start): its
start costs waiting, not CPU, so starting several at once measures the client's parallelism.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> None:
    delay = float(argv[argv.index("--start-delay") + 1]) if "--start-delay" in argv else 0.0
    if delay:
        time.sleep(delay)  # before the imports too: waiting, not computing, is the scenario

    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    echo = types.Tool(
        name="echo",
        description="Return the text unchanged.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )

    async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[echo])

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server = Server("crewagent-bench-echo", on_list_tools=list_tools, on_call_tool=call_tool)  # type: ignore[arg-type]

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1:])
