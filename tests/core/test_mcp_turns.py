"""MCP tools in real turns: a scripted OpenAI-compatible server (real HTTP) asks for the tools of a real
third-party server (@modelcontextprotocol/server-everything from npm, over stdio and streamable HTTP) and
of the lean echo server (its 5 MB result: the app's offloading; the SDK's own server side is
tests/core/test_mcp_edge.py's); the results are persisted and the chain stays valid.

mcp-server-time (PyPI, over stdio) answers the same core turn in tests/cli/test_mcp_cli.py's "done
when" (``crewagent chat`` runs this turn code): its schema offered as it declares it, its result
persisted, the chain valid. Starting it here as well cost 1.5-2 CPU-s (the SDK's imports) for the
same claims."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import pytest

from crewagent.core.loop import LoopEvent, TurnFinished
from crewagent.core.mcp import McpManager
from crewagent.core.messages import ConversationMeta
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, result_of
from tests.core.mcp_helpers import EVERYTHING, MCP_GROUP, START_TIMEOUT, echo_server, everything_missing, mark, wait_gone
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(MCP_GROUP)]


def _settings(*servers: dict[str, Any]) -> Settings:
    return Settings.model_validate({"mcp": {"servers": list(servers)}})


async def _turn(store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, settings: Settings, llm: ScriptedServer, message: str) -> list[LoopEvent]:
    manager = McpManager()
    events: list[LoopEvent] = []
    try:
        stream = run_turn(
            store, project, conversation.id, message, mode="chat", settings=settings,
            config=llm.config(timeout=30.0), hooks=TurnHooks(approver=AutoApprover()), mcp=manager,
        )
        async with aclosing(stream) as items:
            async for event in items:
                events.append(event)
    finally:
        await manager.aclose()
    return events


def _finished(events: list[LoopEvent]) -> TurnFinished:
    [end] = [e for e in events if isinstance(e, TurnFinished)]
    return end


def test_a_turn_uses_everything_and_two_more_servers_started_in_parallel(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    everything = everything_missing() is None
    marker = mark()
    servers = [echo_server("echo", marker), echo_server("edge", marker)]
    calls = [
        call("t1", "mcp__echo__echo", json.dumps({"text": "Asia/Tokyo"})),
        call("b1", "mcp__edge__big", json.dumps({"megabytes": 5})),
    ]
    if everything:
        servers.append({"id": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"], "startTimeoutSeconds": START_TIMEOUT})
        calls += [call("e1", "mcp__everything__echo", '{"message": "hi"}'), call("e2", "mcp__everything__get-tiny-image", "{}")]
    scripted_llm.script(tool_calls(*calls), text("Done."))

    events = asyncio.run(_turn(store, project, conversation, _settings(*servers), scripted_llm, "echo Asia/Tokyo, and a big one"))

    assert _finished(events).reason == "completed", _finished(events)
    first = scripted_llm.bodies[0]
    offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert offered["mcp__echo__echo"]["parameters"]["required"] == ["text"]
    assert any("MCP_TOOLS" in (m.get("content") or "") for m in first["messages"] if m["role"] == "system")
    log = assert_log_valid(store, project.id, conversation.id)
    results = {m.tool_call_id: m for m in log if m.role == "tool"}
    assert result_of(results["t1"]) == {"ok": True, "content": "Asia/Tokyo"}
    assert results["t1"].toolName == "mcp__echo__echo"
    # 5 MB: offloaded like any large output; the log keeps a preview and the path of the whole.
    big = results["b1"]
    assert big.fullOutputPath and len(big.text) < 200_000
    assert len(store.read_full_output(project.id, big)) > 5_000_000
    assert_request_valid(scripted_llm.bodies[1])
    if everything:  # a third-party server's schema is offered as it declares it
        assert offered["mcp__everything__echo"]["parameters"]["required"] == ["message"]
        assert result_of(results["e1"])["content"] == "Echo: hi"
        [image] = result_of(results["e2"])["files"]
        saved = store.state_dir(project.id) / image["path"].removeprefix("@state/")
        assert saved.read_bytes().startswith(b"\x89PNG")
    assert wait_gone(marker) == []


@pytest.fixture
def everything_http() -> Iterator[str]:
    """@modelcontextprotocol/server-everything over streamable HTTP on a free port; its /mcp URL."""
    reason = everything_missing()
    if reason:
        pytest.skip(reason)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        ["node", str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server-everything (streamableHttp) did not listen on {port}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_turn_uses_server_everything_over_streamable_http(
    everything_http: str, scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(tool_calls(call("s1", "mcp__web__get-sum", '{"a": 2, "b": 40}')), text("It is 42."))
    settings = _settings({"id": "web", "transport": "http", "url": everything_http, "startTimeoutSeconds": START_TIMEOUT})

    events = asyncio.run(_turn(store, project, conversation, settings, scripted_llm, "add 2 and 40"))

    assert _finished(events).reason == "completed", _finished(events)
    [result] = [m for m in assert_log_valid(store, project.id, conversation.id) if m.role == "tool"]
    assert result_of(result)["ok"] is True and "42" in result_of(result)["content"]
