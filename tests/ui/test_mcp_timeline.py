"""An MCP tool part's header names the tool and its server (issue 12), not the wire-style full name."""

from __future__ import annotations

from crewagent.ui.timeline.rows.tool import tool_label


def test_an_mcp_tool_shows_its_tool_and_server() -> None:
    assert tool_label("mcp__time__get_current_time") == ("get_current_time", "MCP time")
    assert tool_label("mcp__everything__get-tiny-image") == ("get-tiny-image", "MCP everything")


def test_other_tools_keep_their_name() -> None:
    assert tool_label("fs.read") == ("fs.read", "")
    assert tool_label("mcp__broken") == ("mcp__broken", "")
