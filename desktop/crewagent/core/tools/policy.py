"""Tool policy (settings tightened by an agent) and the approval gate for write-capable tools.

Policy: the settings' ``tools`` section and an agent's ``tools`` block have the same shape,
``{fs: {enabled, maxReadBytes, maxWriteBytes}, mcp: {enabled, allowedServers[]}}`` (plus
``timeoutSeconds`` and ``disabled[]`` of tool names in settings). An agent can only tighten: a
tool is on only if both allow it, and each limit takes the lower value. An agent value of the
wrong type tightens (``enabled: "no"`` turns the group off) or, for a limit, is ignored.

Tool groups by name: ``fs.*`` follow ``fs``; ``mcp.<server>.<tool>`` and the MCP servers' tools
``mcp__<server>__<tool>`` (core/mcp) follow ``mcp`` and its server allow-list; ``ui.*`` are always on unless named in ``disabled``.

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

from crewagent.core.tools.results import ErrorCode, error

log = logging.getLogger(__name__)

DEFAULT_MAX_READ_BYTES = 1_000_000
DEFAULT_MAX_WRITE_BYTES = 5_000_000
DEFAULT_TIMEOUT_S = 300.0


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
    deny_message: str = "The user refused this tool call. Do not retry it; ask the user what to do instead."
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

    def is_granted(self, tool: str, conversation_id: str | None) -> bool:
        return tool in self._always or tool in self._conversation.get(conversation_id, set())

    async def check(self, request: ApprovalRequest) -> tuple[ApprovalDecision, dict[str, Any] | None]:
        """The decision, and the error result to return when it is a refusal (None when allowed)."""
        if self.is_granted(request.tool, request.conversation_id):
            return ApprovalDecision.ALLOW_CONVERSATION, None
        async with self._locks.setdefault(request.conversation_id, asyncio.Lock()):
            # A parallel call may have been granted "for this conversation" while this one waited.
            if self.is_granted(request.tool, request.conversation_id):
                return ApprovalDecision.ALLOW_CONVERSATION, None
            decision = await self._ask(request)
        if decision is ApprovalDecision.ALLOW_CONVERSATION:
            self._conversation.setdefault(request.conversation_id, set()).add(request.tool)
        elif decision is ApprovalDecision.ALLOW_ALWAYS:
            self._always.add(request.tool)
            if self.persist_always is not None:
                try:
                    await asyncio.to_thread(self.persist_always, request.tool)
                except Exception:  # the grant holds for this session; only its saving failed
                    log.exception("could not save the 'always allow' grant for %s", request.tool)
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
