"""MCP servers as tools (issue 12): configuration, connections on the official SDK, the session's manager."""

from crewagent.core.mcp.config import McpConfigError, McpSecrets, ServerDefinition, ServerSecrets, parse_mcp_servers
from crewagent.core.mcp.connection import McpCode, McpFailure, McpServer, McpStatus, McpToolInfo, ServerSpec, ServerState
from crewagent.core.mcp.manager import McpManager, mcp_prompt_block, split_tool_name, tool_name

__all__ = [
    "McpCode",
    "McpConfigError",
    "McpFailure",
    "McpManager",
    "McpSecrets",
    "McpServer",
    "McpStatus",
    "McpToolInfo",
    "ServerDefinition",
    "ServerSecrets",
    "ServerSpec",
    "ServerState",
    "mcp_prompt_block",
    "parse_mcp_servers",
    "split_tool_name",
    "tool_name",
]
