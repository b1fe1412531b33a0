"""Tool policy (settings tightened by an agent) and the approval gate for write-capable tools.

Policy: the settings' ``tools`` section and an agent's ``tools`` block have the same shape,
``{fs: {enabled, maxReadBytes, maxWriteBytes}, mcp: {enabled, allowedServers[]}}`` (plus
``timeoutSeconds`` and ``disabled[]`` of tool names in settings). An agent can only tighten: a
tool is on only if both allow it, and each limit takes the lower value. An agent value of the
wrong type tightens (``enabled: "no"`` turns the group off) or, for a limit, is ignored.

Tool groups by name: ``fs.*`` follow ``fs``; ``mcp.<server>.<tool>`` and the MCP servers' tools
``mcp__<server>__<tool>`` (core/mcp) follow ``mcp`` and its server allow-list; ``ui.*`` are always on unless named in ``disabled``. ``terminal.run`` and
``shell.exec`` follow ``terminal`` (:class:`TerminalPolicy`; ``shell.exec`` also needs
``allowShellExec``, off by default).

Approval: write-capable tools go through an injected async ``approve(request)`` returning an
:class:`ApprovalDecision`. The :class:`ApprovalGate` remembers grants per conversation and
"always" grants (persisted through an injected callback), asks one question at a time so that
parallel calls see a grant given to the first, and turns a refusal into ``E_USER_DENIED``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from crewagent.core import texts
from crewagent.core.tools.results import ErrorCode, error

log = logging.getLogger(__name__)

DEFAULT_MAX_READ_BYTES = 1_000_000
DEFAULT_MAX_WRITE_BYTES = 5_000_000
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_TERMINAL_TIMEOUT_MS = 120_000
#: Together under the 50 KB above which the store offloads a result to a preview: with these,
#: the model reads a command's (cut) output whole, and the rest at stdoutFullPath.
DEFAULT_MAX_STDOUT_BYTES = 32_000
DEFAULT_MAX_STDERR_BYTES = 8_000
#: The root a command may run in when the settings name none.
PROJECT_ROOT_ALIAS = "@project"


@dataclass(frozen=True)
class TerminalPolicy:
    """The command tools' part of the policy (``tools.terminal``); tightened like the rest.

    ``allowed_roots`` are ``@project[/sub]``, ``@state[/sub]`` or (settings only) absolute
    folders; an agent can only name roots inside the system's. ``env_allowlist`` names the
    variables of the app's environment a command inherits (see terminal_env.py: secrets never).
    """

    enabled: bool = True
    timeout_ms: int = DEFAULT_TERMINAL_TIMEOUT_MS
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES
    max_stderr_bytes: int = DEFAULT_MAX_STDERR_BYTES
    allowed_roots: tuple[str, ...] = (PROJECT_ROOT_ALIAS,)
    allow_shell_exec: bool = False
    env_allowlist: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, terminal: Mapping[str, Any]) -> TerminalPolicy:
        base = cls()
        roots = _roots(terminal.get("allowedRoots"))
        env = terminal.get("envAllowlist")
        return cls(
            enabled=_flag(terminal.get("enabled", True)),
            timeout_ms=_limit(terminal.get("timeoutMs")) or base.timeout_ms,
            max_stdout_bytes=_limit(terminal.get("maxStdoutBytes")) or base.max_stdout_bytes,
            max_stderr_bytes=_limit(terminal.get("maxStderrBytes")) or base.max_stderr_bytes,
            allowed_roots=base.allowed_roots if roots is None else roots,
            allow_shell_exec=_flag(terminal.get("allowShellExec", False)),
            env_allowlist=frozenset(map(str, env)) if isinstance(env, list) else frozenset(),
        )

    def tighten(self, terminal: Mapping[str, Any]) -> TerminalPolicy:
        roots = _roots(terminal.get("allowedRoots"))
        env = terminal.get("envAllowlist")
        return replace(
            self,
            enabled=self.enabled and _flag(terminal.get("enabled", True)),
            timeout_ms=min(self.timeout_ms, _limit(terminal.get("timeoutMs")) or self.timeout_ms),
            max_stdout_bytes=min(self.max_stdout_bytes, _limit(terminal.get("maxStdoutBytes")) or self.max_stdout_bytes),
            max_stderr_bytes=min(self.max_stderr_bytes, _limit(terminal.get("maxStderrBytes")) or self.max_stderr_bytes),
            allowed_roots=self.allowed_roots if roots is None else tuple(r for r in roots if _inside_any(r, self.allowed_roots)),
            # Only a system setting can turn shell scripts on; an agent's ``true`` changes nothing.
            allow_shell_exec=self.allow_shell_exec and _flag(terminal.get("allowShellExec", True)),
            env_allowlist=self.env_allowlist & frozenset(map(str, env)) if isinstance(env, list) else self.env_allowlist,
        )


@dataclass(frozen=True)
class ToolPolicy:
    """Which tools are on and the limits they run under (immutable; ``tighten`` returns a new one)."""

    fs_enabled: bool = True
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES
    mcp_enabled: bool = True
    #: None allows every server.
    mcp_allowed_servers: frozenset[str] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    disabled: frozenset[str] = frozenset()
    terminal: TerminalPolicy = field(default_factory=TerminalPolicy)

    @classmethod
    def from_settings(cls, tools: Mapping[str, Any] | None) -> ToolPolicy:
        """The system policy from the settings' ``tools`` section (a dict, e.g. ``settings.tools.model_dump()``)."""
        base = cls()
        if not tools:
            return base
        fs = _section(tools, "fs")
        mcp = _section(tools, "mcp")
        timeout = _seconds(tools.get("timeoutSeconds"))
        disabled = tools.get("disabled")
        return cls(
            fs_enabled=_flag(fs.get("enabled", True)),
            max_read_bytes=_limit(fs.get("maxReadBytes")) or base.max_read_bytes,
            max_write_bytes=_limit(fs.get("maxWriteBytes")) or base.max_write_bytes,
            mcp_enabled=_flag(mcp.get("enabled", True)),
            mcp_allowed_servers=_servers(mcp.get("allowedServers")),
            timeout_s=timeout or base.timeout_s,
            disabled=frozenset(str(name) for name in disabled) if isinstance(disabled, list) else frozenset(),
            terminal=TerminalPolicy.from_settings(_section(tools, "terminal")),
        )

    def tighten(self, agent_tools: Mapping[str, Any] | None) -> ToolPolicy:
        """This policy narrowed by an agent's ``tools`` block; never loosened."""
        if not agent_tools:
            return self
        fs = _section(agent_tools, "fs")
        mcp = _section(agent_tools, "mcp")
        servers = _servers(mcp.get("allowedServers"))
        if servers is not None and self.mcp_allowed_servers is not None:
            servers = servers & self.mcp_allowed_servers
        elif servers is None:
            servers = self.mcp_allowed_servers
        timeout = _seconds(agent_tools.get("timeoutSeconds"))
        disabled = agent_tools.get("disabled")
        return replace(
            self,
            fs_enabled=self.fs_enabled and _flag(fs.get("enabled", True)),
            max_read_bytes=min(self.max_read_bytes, _limit(fs.get("maxReadBytes")) or self.max_read_bytes),
            max_write_bytes=min(self.max_write_bytes, _limit(fs.get("maxWriteBytes")) or self.max_write_bytes),
            mcp_enabled=self.mcp_enabled and _flag(mcp.get("enabled", True)),
            mcp_allowed_servers=servers,
            timeout_s=min(self.timeout_s, timeout or self.timeout_s),
            disabled=self.disabled | (frozenset(map(str, disabled)) if isinstance(disabled, list) else frozenset()),
            terminal=self.terminal.tighten(_section(agent_tools, "terminal")),
        )

    def allows(self, tool_name: str) -> bool:
        if tool_name in self.disabled:
            return False
        if tool_name.startswith("mcp__"):  # an MCP server's tool, mcp__<serverId>__<tool> (core/mcp)
            return self.allows_mcp_server(tool_name[len("mcp__"):].partition("__")[0])
        group, _, rest = tool_name.partition(".")
        if group == "fs":
            return self.fs_enabled
        if group == "mcp":
            server = rest.partition(".")[0]
            return self.mcp_enabled and (self.mcp_allowed_servers is None or server in self.mcp_allowed_servers)
        if tool_name == "terminal.run":
            return self.terminal.enabled
        if tool_name == "shell.exec":
            return self.terminal.enabled and self.terminal.allow_shell_exec
        return True

    def allows_mcp_server(self, server_id: str) -> bool:
        """The tools of this MCP server may be offered (MCP on, and the server allowed)."""
        return self.mcp_enabled and (self.mcp_allowed_servers is None or server_id in self.mcp_allowed_servers)


def _section(tools: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = tools.get(name)
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    # A malformed group (``fs: false``) reads as "off": tightening is the safe reading.
    return {"enabled": False}


def _flag(value: Any) -> bool:
    return value is True


def _limit(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return float(value)


def _servers(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return frozenset(str(item) for item in value)
    return frozenset()


def _roots(value: Any) -> tuple[str, ...] | None:
    """The allowed roots of a ``terminal`` block (None: not given); a malformed value allows none."""
    if value is None:
        return None
    if not isinstance(value, list):
        return ()
    # ``..`` could climb out of the root it names: such an entry allows nothing.
    return tuple(
        item.rstrip("/") or "/"
        for item in value
        if isinstance(item, str) and item.strip() and ".." not in item.replace("\\", "/").split("/")
    )


def _inside_any(root: str, roots: Iterable[str]) -> bool:
    return any(root == base or root.startswith(base.rstrip("/") + "/") for base in roots)


# -- approval --------------------------------------------------------------------------------


class ApprovalDecision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_CONVERSATION = "allow_conversation"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked to approve: one tool call."""

    tool: str
    args: Mapping[str, Any]
    call_id: str | None = None
    conversation_id: str | None = None
    #: One human-readable line, e.g. "fs.write @project/notes.md (120 bytes)".
    summary: str = ""
    #: What a grant "for this conversation" (or "always") covers, when narrower than the whole
    #: tool: ``terminal.run:/usr/bin/git`` grants that program only. None: the tool.
    scope: str | None = None
    #: How the scope reads in a prompt ("git"); None: the tool's name.
    scope_label: str | None = None
    #: Facts to show as they are (a command's program, arguments, folder and shell).
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def grant_key(self) -> str:
        return self.scope or self.tool


class Approver(Protocol):
    """The UI (or the CLI) deciding on a call; injected, never imported by the core."""

    def approve(self, call: ApprovalRequest) -> Awaitable[ApprovalDecision]: ...


ApproveFn = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


class AutoApprover:
    """Approves every call once (the CLI's ``--yes``)."""

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.ALLOW_ONCE


class DenyingApprover:
    """Refuses every call (headless runs without ``--yes``); pair with a ``deny_message`` hint."""

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.DENY


@dataclass
class ApprovalGate:
    """Asks before write-capable calls and remembers the grants the user gave.

    ``persist_always(tool_name)`` is called (in a worker thread: it usually writes settings)
    when the user picks "always"; ``always_allowed`` seeds the grants from settings. The gate
    is shared by the conversations of a session; grants "for this conversation" are keyed by
    the request's ``conversation_id``.
    """

    approver: Approver | ApproveFn
    always_allowed: Iterable[str] = ()
    persist_always: Callable[[str], None] | None = None
    deny_message: str = texts.USER_DENIED
    _always: set[str] = field(init=False, repr=False)
    _conversation: dict[str | None, set[str]] = field(init=False, repr=False, default_factory=dict)
    #: One question at a time per conversation (conversations of a session ask independently).
    _locks: dict[str | None, asyncio.Lock] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._always = set(self.always_allowed)

    def set_always_allowed(self, tools: Iterable[str]) -> None:
        """Replace the "always" grants with ``tools`` (the settings as they are now: the user may
        have edited them since); grants "for this conversation" are kept."""
        self._always = set(tools)

    def is_granted(self, tool: str, conversation_id: str | None, scope: str | None = None) -> bool:
        granted = self._conversation.get(conversation_id, set())
        return any(key in self._always or key in granted for key in (tool, scope) if key)

    def _granted(self, request: ApprovalRequest) -> bool:
        return self.is_granted(request.tool, request.conversation_id, request.scope)

    async def check(self, request: ApprovalRequest) -> tuple[ApprovalDecision, dict[str, Any] | None]:
        """The decision, and the error result to return when it is a refusal (None when allowed)."""
        if self._granted(request):
            return ApprovalDecision.ALLOW_CONVERSATION, None
        async with self._locks.setdefault(request.conversation_id, asyncio.Lock()):
            # A parallel call may have been granted "for this conversation" while this one waited.
            if self._granted(request):
                return ApprovalDecision.ALLOW_CONVERSATION, None
            decision = await self._ask(request)
        if decision is ApprovalDecision.ALLOW_CONVERSATION:
            self._conversation.setdefault(request.conversation_id, set()).add(request.grant_key)
        elif decision is ApprovalDecision.ALLOW_ALWAYS:
            self._always.add(request.grant_key)
            if self.persist_always is not None:
                try:
                    await asyncio.to_thread(self.persist_always, request.grant_key)
                except Exception:  # the grant holds for this session; only its saving failed
                    log.exception("could not save the 'always allow' grant for %s", request.grant_key)
        elif decision is ApprovalDecision.DENY:
            return decision, error(ErrorCode.E_USER_DENIED, self.deny_message)
        return decision, None

    async def _ask(self, request: ApprovalRequest) -> ApprovalDecision:
        ask: ApproveFn = self.approver.approve if hasattr(self.approver, "approve") else self.approver
        answer = await ask(request)
        try:
            return ApprovalDecision(answer)
        except ValueError:
            # An approver bug must not turn into a write nobody allowed.
            log.error("approver returned %r for %s; treated as deny", answer, request.tool)
            return ApprovalDecision.DENY

    def forget_conversation(self, conversation_id: str | None) -> None:
        self._conversation.pop(conversation_id, None)
