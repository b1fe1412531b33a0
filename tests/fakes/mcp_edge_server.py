"""An MCP server written with the SDK's own server side (MCPServer, formerly FastMCP), for the edge cases.

Run as ``python -m tests.fakes.mcp_edge_server [--garbage] [--hang-initialize] [--mark=X]``
(``--mark`` only tags the command line, so a test can find the process and its children):

- ``echo(text)``, read-only: the text back (the overhead benchmark and the plain path);
- ``slow(seconds)``: sleeps, then answers (Stop and timeouts);
- ``die()``: the process exits in the middle of the call (a server killed mid-call);
- ``big(megabytes)``: a text result that large (offloading);
- ``picture()``: a 1x1 PNG image (saved under @state);
- ``fail()``: a result with isError (MCP_TOOL_ERROR);
- ``spawn_child()``: starts a grandchild that sleeps (no orphan may survive the server's stop);
- ``--garbage``: non-JSON lines on stdout before and around the replies;
- ``--hang-initialize``: reads stdin and never answers anything, ``initialize`` included;
- ``--bad-replies``: not the SDK (whose stdio transport keeps a tool's prints off the protocol
  stream) but a few lines of JSON-RPC that answer ``tools/call`` with a result that does not
  follow the protocol (``content`` not a list), its one tool being ``bad_reply``.
"""


import base64
import os
import subprocess
import sys
import time

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def bad_replies() -> None:
    import json

    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "bad", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "bad_reply", "inputSchema": {"type": "object", "properties": {}}}]}
        elif method == "tools/call":
            result = {"content": "not a list"}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    if "--bad-replies" in argv:
        bad_replies()
        return
    if "--hang-initialize" in argv:
        sys.stderr.write("hanging before initialize\n")
        sys.stderr.flush()
        for _ in sys.stdin:  # read every request, answer none
            pass
        time.sleep(3600)
        return
    garbage = "--garbage" in argv
    if garbage:
        os.write(1, b"this is not JSON-RPC\n{broken json\n")

    import anyio
    from mcp.server.mcpserver import Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer("crewagent-edge")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Return the text unchanged."""
        if garbage:
            os.write(1, b"garbage in the middle of a call\n")
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def die() -> str:
        """Exit the process in the middle of the call."""
        sys.stderr.write("dying mid-call\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def big(megabytes: float) -> str:
        """A text result of that size."""
        line = "0123456789abcdef" * 4 + "\n"
        return line * int(megabytes * 1024 * 1024 / len(line))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def picture() -> Image:
        """A tiny PNG."""
        return Image(data=PNG_1X1, format="png")

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ToolError("the edge server failed on purpose")

    @server.tool()
    def spawn_child() -> str:
        """Start a grandchild process that sleeps."""
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *[a for a in argv if a.startswith("--mark")]])
        return str(child.pid)

    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
