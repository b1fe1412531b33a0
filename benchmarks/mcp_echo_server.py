#!/usr/bin/env python3
"""The cheapest honest MCP echo server for benchmarks/bench_mcp.py: the SDK's low-level ``Server``
over stdio, one ``echo`` tool, no FastMCP/MCPServer layer (no pydantic model of the arguments, no
output schema validation). What it costs per call is the SDK's protocol floor on the server side.

    python benchmarks/mcp_echo_server.py [--start-delay SECONDS] [--pipe-io]

``--start-delay``: wait that long before serving (a server that connects somewhere on start): its
start costs waiting, not CPU, so starting several at once measures the client's parallelism.

``--pipe-io``: the SDK's own ``stdio_server`` transport (its framing and message validation) fed
by the event loop's pipe reader and plain writes instead of ``anyio.wrap_file``, which runs every
``readline``, ``write`` and ``flush`` in a worker thread: three thread hops per message, the
largest part of the SDK server's cost per call (benchmarks/bench_mcp.py reports both).
"""

from __future__ import annotations

import os
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
        if "--pipe-io" in argv:
            stdin, stdout = await _pipes()
            async with stdio_server(stdin, stdout) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())
            return
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


class _LinesIn:
    """stdin as the async line iterator ``stdio_server`` reads, from the event loop's pipe reader (no thread)."""

    def __init__(self, reader: object):
        self._reader = reader

    def __aiter__(self) -> _LinesIn:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()  # type: ignore[attr-defined]
        if not line:
            raise StopAsyncIteration
        return str(line.decode("utf-8", "replace"))


class _LinesOut:
    """stdout as the async file ``stdio_server`` writes: a plain write of each short line (no thread)."""

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        while data:
            data = data[os.write(1, data):]

    async def flush(self) -> None:
        pass


async def _pipes() -> tuple[_LinesIn, _LinesOut]:
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    return _LinesIn(reader), _LinesOut()


if __name__ == "__main__":
    main(sys.argv[1:])
