"""A lean MCP server over stdio, in plain Python (no SDK): for the tests that are about the app, not the server.

    python -m tests.fakes.mcp_echo_server [--mark=X]

A Python server written with the SDK imports it first: 2 CPU-s before it answers ``initialize``
(tests/fakes/mcp_edge_server.py, kept for the tests of how the app meets the SDK's own server).
This one speaks the same newline-delimited JSON-RPC on stdin/stdout in 0.1 CPU-s, and offers the
edge server's tools under the same names, schemas and read-only hints:

- ``echo(text)``, read-only: the text back;
- ``slow(seconds)``: sleeps in a thread, then answers (requests keep being read meanwhile);
- ``die()``: the process exits in the middle of the call;
- ``big(megabytes)``, read-only: a text result that large;
- ``picture()``, read-only: a 1x1 PNG image;
- ``fail()``: a result with isError;
- ``spawn_child()``: starts a grandchild that sleeps, with the ``--mark`` on its command line.

``--mark`` only tags the command line, so a test can find the process and its children.
``--garbage`` writes non-JSON lines on stdout before and around the replies, as the edge server's does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from tests.fakes.mcp_edge_server import PNG_1X1

_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_NONE: dict[str, Any] = {"type": "object", "properties": {}}
_READ_ONLY = {"readOnlyHint": True}
TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Return the text unchanged.", "inputSchema": _TEXT, "annotations": _READ_ONLY},
    {"name": "slow", "description": "Sleep, then answer.", "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}},
    {"name": "die", "description": "Exit the process in the middle of the call.", "inputSchema": _NONE},
    {"name": "big", "description": "A text result of that size.", "inputSchema": {"type": "object", "properties": {"megabytes": {"type": "number"}}, "required": ["megabytes"]}, "annotations": _READ_ONLY},
    {"name": "picture", "description": "A tiny PNG.", "inputSchema": _NONE, "annotations": _READ_ONLY},
    {"name": "fail", "description": "Always fails.", "inputSchema": _NONE},
    {"name": "spawn_child", "description": "Start a grandchild process that sleeps.", "inputSchema": _NONE},
]

_write_lock = threading.Lock()


def _send(message: dict[str, Any]) -> None:
    line = json.dumps(message) + "\n"
    with _write_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def _text(text: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def _garbage(line: bytes) -> None:
    with _write_lock:
        sys.stdout.flush()
        os.write(1, line)


def _call(name: str, arguments: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    if name == "echo":
        if "--garbage" in argv:
            _garbage(b"garbage in the middle of a call\n")
        return _text(str(arguments.get("text", "")))
    if name == "slow":
        seconds = float(arguments.get("seconds", 0))
        time.sleep(seconds)
        return _text(f"slept {seconds}")
    if name == "die":
        sys.stderr.write("dying mid-call\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "big":
        line = "0123456789abcdef" * 4 + "\n"
        return _text(line * int(float(arguments.get("megabytes", 0)) * 1024 * 1024 / len(line)))
    if name == "picture":
        import base64

        return {"content": [{"type": "image", "data": base64.b64encode(PNG_1X1).decode(), "mimeType": "image/png"}], "isError": False}
    if name == "fail":
        return _text("the echo server failed on purpose", error=True)
    if name == "spawn_child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *[a for a in argv if a.startswith("--mark")]])
        return _text(str(child.pid))
    return _text(f"Unknown tool: {name}", error=True)


def _answer_call(request_id: Any, params: dict[str, Any], argv: list[str]) -> None:
    _send({"jsonrpc": "2.0", "id": request_id, "result": _call(params.get("name", ""), params.get("arguments") or {}, argv)})


def main(argv: list[str]) -> None:
    if "--garbage" in argv:
        _garbage(b"this is not JSON-RPC\n{broken json\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification (initialized, cancelled) or a reply: nothing to answer
        method, params = message["method"], message.get("params") or {}
        if method == "tools/call":  # in a thread: a slow call must not hold up the next request
            threading.Thread(target=_answer_call, args=(message["id"], params, argv), daemon=True).start()
            continue
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "crewagent-echo", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        else:  # ping and anything else: an empty result
            result = {}
        _send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main(sys.argv[1:])
