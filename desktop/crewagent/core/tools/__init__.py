"""Tools the model calls: sandboxed file tools, ui.ask_user, the registry, policy, approval and audit.

Typical use by the tool loop::

    registry = default_registry()
    ctx = ToolContext.for_project(project, pkg_dir=..., policy=ToolPolicy.from_settings(tools).tighten(agent_tools),
                                  approval=ApprovalGate(approver), audit=AuditLog(audit_path(state, ...)),
                                  ask_user=..., conversation_id=...)
    tools = registry.openai_tools(ctx.policy, has_ui=ctx.ask_user is not None)
    result = await registry.execute(name, arguments_json, ctx, call_id=call.id)   # a dict, never raises
"""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from crewagent.core.tools.audit import AuditLog, audit_path, read_audit
    from crewagent.core.tools.builtin import builtin_tools, default_registry
    from crewagent.core.tools.policy import (
        ApprovalDecision,
        ApprovalGate,
        ApprovalRequest,
        Approver,
        AutoApprover,
        DenyingApprover,
        ToolPolicy,
    )
    from crewagent.core.tools.registry import Tool, ToolCancelled, ToolContext, ToolRegistry, ToolResult
    from crewagent.core.tools.results import ErrorCode, error, error_code, is_error, ok
    from crewagent.core.tools.sandbox import ResolvedPath, Sandbox, SandboxViolation

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "audit": ("AuditLog", "audit_path", "read_audit"),
        "builtin": ("builtin_tools", "default_registry"),
        "policy": (
            "ApprovalDecision",
            "ApprovalGate",
            "ApprovalRequest",
            "Approver",
            "AutoApprover",
            "DenyingApprover",
            "ToolPolicy",
        ),
        "registry": ("Tool", "ToolCancelled", "ToolContext", "ToolRegistry", "ToolResult"),
        "results": ("ErrorCode", "error", "error_code", "is_error", "ok"),
        "sandbox": ("ResolvedPath", "Sandbox", "SandboxViolation"),
    },
)

__all__ = [
    "ApprovalDecision",
    "ApprovalGate",
    "ApprovalRequest",
    "Approver",
    "AuditLog",
    "AutoApprover",
    "DenyingApprover",
    "ErrorCode",
    "ResolvedPath",
    "Sandbox",
    "SandboxViolation",
    "Tool",
    "ToolCancelled",
    "ToolContext",
    "ToolPolicy",
    "ToolRegistry",
    "ToolResult",
    "audit_path",
    "builtin_tools",
    "default_registry",
    "error",
    "error_code",
    "is_error",
    "ok",
    "read_audit",
]
