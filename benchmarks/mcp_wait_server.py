#!/usr/bin/env python3
"""A stdio MCP server whose start is all waiting: ``python -S benchmarks/mcp_wait_server.py SECONDS``.

benchmarks/bench_mcp.py starts three of these at once to measure the client's parallelism (the
first tool list from 3 servers: the slowest start + < 50 ms). It stands for a server that connects
somewhere before it serves (a database, a remote API) and costs little CPU: a Python server built
on the SDK cannot stand for that, since importing the SDK's server side alone takes 1.2-2.6 CPU-s,
and three such starts on a 2-core machine measure the cores, not the client.

So this one uses the standard library only: it sleeps, then answers ``initialize``, ``tools/list``
(one ``echo`` tool) and ``tools/call`` as line-delimited JSON-RPC 2.0, the stdio transport's
framing. It is a benchmark stand-in for a foreign server; the app's client is the official SDK.
"""

import json
import sys
import time

ECHO = {
    "name": "echo",
    "description": "Return the text unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True},
}


def answer(message: dict) -> dict:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}}, "serverInfo": {"name": "wait", "version": "1"}}
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": str((params.get("arguments") or {}).get("text", ""))}]}
    return {}


def main() -> None:
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" in message and "method" in message:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
