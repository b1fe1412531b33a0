"""The built-in tool set: fs.list, fs.read, fs.search, fs.write, fs.apply_patch, ui.ask_user, terminal.run and shell.exec."""

from __future__ import annotations

from crewagent.core.tools.fs import LIST_TOOL, READ_TOOL, SEARCH_TOOL, WRITE_TOOL
from crewagent.core.tools.patch import APPLY_PATCH_TOOL
from crewagent.core.tools.registry import Tool, ToolRegistry
from crewagent.core.tools.terminal import RUN_TOOL, SHELL_TOOL
from crewagent.core.tools.ui import ASK_USER_TOOL


def builtin_tools() -> list[Tool]:
    # The command tools follow tools.terminal (shell.exec only with allowShellExec).
    return [LIST_TOOL, READ_TOOL, SEARCH_TOOL, WRITE_TOOL, APPLY_PATCH_TOOL, ASK_USER_TOOL, RUN_TOOL, SHELL_TOOL]


def default_registry() -> ToolRegistry:
    """A registry holding the built-in tools (MCP and task tools are registered on top by their owners)."""
    return ToolRegistry(builtin_tools())
