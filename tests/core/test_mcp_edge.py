"""MCP edge cases against a server written with the SDK's own server side (tests/fakes/mcp_edge_server.py,
forked from the session's MCP fork server, tests/fakes/mcp_fork.py): Stop, timeouts, a hang in initialize,
MCP off, policies. Garbage on stdout, a server killed mid-call and
quitting are about the app's handling of the process and its pipe: there the lean echo server
(tests/fakes/mcp_echo_server.py, the same tools and the same garbage without the SDK's 1.5-2 CPU-s of
imports) is started instead."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crewagent.core.mcp import McpManager, McpStatus
from crewagent.core.settings import McpSettings
from crewagent.core.tools import ApprovalGate, DenyingApprover, ToolPolicy
from tests.core.mcp_helpers import MCP_GROUP, context, echo_server, edge_server, forked_edge_server, loop, mark, processes_with, registry_with, wait_gone, wait_listed
from tests.fakes.mcp_fork import MCPForkServer

# The tests share one manager and its started servers: one xdist worker, one event loop.
pytestmark = [pytest.mark.xdist_group(MCP_GROUP), pytest.mark.slow]
__all__ = ["loop"]

MARK = mark()
SETTINGS = McpSettings.model_validate(
    {"servers": [forked_edge_server("edge", MARK), echo_server("garbage", "--garbage", MARK, trusted=True), edge_server("bad", "--bad-replies", MARK)]}
)


@pytest.fixture(scope="module")
def manager(loop: asyncio.AbstractEventLoop, mcp_fork_server: MCPForkServer | None) -> Iterator[McpManager]:
    manager = McpManager()
    yield manager
    loop.run_until_complete(manager.aclose())
    assert wait_gone(MARK) == []


def test_tools_are_offered_by_server_with_their_schemas_and_approval(loop: asyncio.AbstractEventLoop, manager: McpManager) -> None:
    registry, added = registry_with(loop, manager, SETTINGS)
    assert added == ["edge", "garbage", "bad"]
    echo, slow = registry.get("mcp__edge__echo"), registry.get("mcp__edge__slow")
    assert echo is not None and slow is not None
    assert echo.parameters["properties"]["text"]["type"] == "string" and echo.parameters["required"] == ["text"]
    assert "(MCP server: edge)" in echo.description
    # Approval: asked unless the tool is read-only or its server trusted.
    assert (echo.writes, slow.writes) == (False, True)
    assert registry.get("mcp__garbage__slow").writes is False  # type: ignore[union-attr]
    assert {s.server_id: s.status for s in manager.states()} == {"edge": McpStatus.RUNNING, "garbage": McpStatus.RUNNING, "bad": McpStatus.RUNNING}


def test_results_text_images_and_tool_errors(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    registry, _ = registry_with(loop, manager, SETTINGS)
    ctx = context(tmp_path)
    run = loop.run_until_complete
    assert run(registry.execute("mcp__edge__echo", '{"text": "héllo"}', ctx, call_id="c1")) == {"ok": True, "content": "héllo"}
    picture = run(registry.execute("mcp__edge__picture", "{}", ctx, call_id="c2"))
    [saved] = picture["files"]
    assert saved["path"] == "@state/mcp/conv-1/c2/image-1.png" and saved["mimeType"] == "image/png"
    assert (tmp_path / "state" / "mcp" / "conv-1" / "c2" / "image-1.png").read_bytes().startswith(b"\x89PNG")
    failed = run(registry.execute("mcp__edge__fail", "{}", ctx, call_id="c3"))
    assert failed["ok"] is False and failed["error"]["code"] == "MCP_TOOL_ERROR"
    assert "failed on purpose" in failed["error"]["message"] and failed["error"]["server"] == "edge"


def test_a_refused_approval_is_the_usual_denial(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    registry, _ = registry_with(loop, manager, SETTINGS)
    ctx = context(tmp_path, approval=ApprovalGate(DenyingApprover()))
    denied = loop.run_until_complete(registry.execute("mcp__edge__slow", '{"seconds": 0}', ctx, call_id="c1"))
    assert denied["error"]["code"] == "E_USER_DENIED"
    # A read-only tool does not ask.
    assert loop.run_until_complete(registry.execute("mcp__edge__echo", '{"text": "x"}', ctx, call_id="c2"))["ok"] is True


def test_garbage_on_stdout_is_skipped(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    registry, _ = registry_with(loop, manager, SETTINGS)
    result = loop.run_until_complete(registry.execute("mcp__garbage__echo", '{"text": "still fine"}', context(tmp_path), call_id="c1"))
    assert result == {"ok": True, "content": "still fine"}


def test_a_malformed_reply_is_a_protocol_error_result(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    registry, _ = registry_with(loop, manager, SETTINGS)
    result = loop.run_until_complete(registry.execute("mcp__bad__bad_reply", "{}", context(tmp_path), call_id="c1"))
    assert result["ok"] is False and result["error"]["code"] == "MCP_PROTOCOL_ERROR", result
    assert "malformed reply" in result["error"]["message"]


def test_a_call_past_the_server_timeout_is_mcp_timeout(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    short = SETTINGS.model_copy(deep=True)
    short.servers[0].timeoutSeconds = 0.2
    registry, _ = registry_with(loop, manager, short)
    started = time.monotonic()
    result = loop.run_until_complete(registry.execute("mcp__edge__slow", '{"seconds": 30}', context(tmp_path), call_id="c1"))
    assert result["error"]["code"] == "MCP_TIMEOUT" and "0.2 s" in result["error"]["message"]
    assert time.monotonic() - started < 20
    registry_with(loop, manager, SETTINGS)  # the timeout back to the module's


def test_stop_cancels_a_call_in_flight(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    registry, _ = registry_with(loop, manager, SETTINGS)
    ctx = context(tmp_path)

    async def stop_after_a_moment() -> float:
        task = asyncio.create_task(registry.execute("mcp__edge__slow", '{"seconds": 60}', ctx, call_id="c1"))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert loop.run_until_complete(stop_after_a_moment()) < 5
    # The server is still there and answers the next call.
    assert loop.run_until_complete(registry.execute("mcp__edge__echo", '{"text": "after"}', ctx, call_id="c2"))["ok"] is True


def test_a_server_killed_mid_call_fails_the_call_and_restarts_on_the_next(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    die_mark = mark()
    manager = McpManager()
    registry, _ = registry_with(loop, manager, McpSettings.model_validate({"servers": [echo_server("edge", die_mark)]}))
    ctx = context(tmp_path)
    died = loop.run_until_complete(registry.execute("mcp__edge__die", "{}", ctx, call_id="c1"))
    assert died["error"]["code"] == "MCP_SERVER_EXITED"
    server = manager.server("edge")
    assert server is not None and server.state.status == McpStatus.ERROR
    # Its stderr is kept: a thread reads the pipe, so the last line may arrive after the exit is noted.
    deadline = time.monotonic() + 10
    while "dying mid-call" not in server.stderr.text() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "dying mid-call" in server.stderr.text()
    again = loop.run_until_complete(registry.execute("mcp__edge__echo", '{"text": "back"}', ctx, call_id="c2"))
    assert again == {"ok": True, "content": "back"} and server.state.status == McpStatus.RUNNING
    loop.run_until_complete(manager.aclose())
    assert wait_gone(die_mark) == []


def test_the_agent_policy_hides_a_server_it_does_not_allow(loop: asyncio.AbstractEventLoop, manager: McpManager, tmp_path: Path) -> None:
    policy = ToolPolicy().tighten({"mcp": {"enabled": True, "allowedServers": ["garbage"]}})
    registry, added = registry_with(loop, manager, SETTINGS, policy)
    assert added == ["garbage"]
    offered = [tool["function"]["name"] for tool in registry.openai_tools(policy)]
    assert not any(name.startswith("mcp__edge__") for name in offered) and "mcp__garbage__echo" in offered
    refused = loop.run_until_complete(registry.execute("mcp__edge__echo", '{"text": "x"}', context(tmp_path, policy=policy), call_id="c1"))
    assert refused["error"]["code"] == "TOOL_NOT_AVAILABLE"


def test_a_server_hanging_in_initialize_times_out_and_is_stopped(loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.client import stdio

    # A server that never answered initialize is killed at once, not asked to exit: with the SDK's
    # grace period for an exit on stdin's close made a minute, the start still gives up in seconds.
    monkeypatch.setattr(stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)
    hang_mark = mark()
    settings = McpSettings.model_validate({"servers": [edge_server("hang", "--hang-initialize", hang_mark, startTimeoutSeconds=0.5)]})
    manager = McpManager()
    started = time.monotonic()
    registry, added = registry_with(loop, manager, settings)
    assert time.monotonic() - started < 10.0
    assert added == [] and registry.get("mcp__hang__echo") is None
    [state] = manager.states()
    assert state.status == McpStatus.ERROR and "did not answer initialize within 0.5 s" in state.error
    assert wait_gone(hang_mark) == []
    loop.run_until_complete(manager.aclose())


def test_with_mcp_off_nothing_starts_and_calls_fail_mcp_disabled(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    off_mark = mark()
    settings = McpSettings.model_validate({"enabled": False, "servers": [edge_server("edge", off_mark)]})
    manager = McpManager()
    registry, added = registry_with(loop, manager, settings)
    assert added == [] and processes_with(off_mark) == []
    result = loop.run_until_complete(registry.execute("mcp__edge__echo", '{"text": "x"}', context(tmp_path), call_id="c1"))
    assert result["error"]["code"] == "MCP_DISABLED"
    loop.run_until_complete(manager.aclose())


def test_quitting_stops_every_process_group_with_no_orphans(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    quit_mark = mark()
    settings = McpSettings.model_validate({"servers": [echo_server("edge", quit_mark, trusted=True)]})
    manager = McpManager()
    registry, _ = registry_with(loop, manager, settings)
    child = loop.run_until_complete(registry.execute("mcp__edge__spawn_child", "{}", context(tmp_path), call_id="c1"))
    pid = int(child["content"])
    assert pid in wait_listed(pid, quit_mark)  # the server's own child, in its process group
    loop.run_until_complete(manager.aclose())
    assert wait_gone(quit_mark) == []
