"""Tool policy (an agent can only tighten) and the approval gate's memory of grants."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from crewagent.core.settings import Settings
from crewagent.core.tools.policy import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalRequest,
    AutoApprover,
    DenyingApprover,
    ToolPolicy,
)
from crewagent.core.tools.results import ErrorCode


def test_system_policy_from_the_settings_section() -> None:
    tools = Settings().tools.model_dump(mode="json")
    policy = ToolPolicy.from_settings(tools)
    assert policy == ToolPolicy(max_read_bytes=1_000_000, max_write_bytes=5_000_000, timeout_s=300.0)
    tools["fs"] = {"enabled": False, "maxReadBytes": 10, "maxWriteBytes": 20}
    tools["timeoutSeconds"] = 5
    custom = ToolPolicy.from_settings(tools)
    assert (custom.fs_enabled, custom.max_read_bytes, custom.max_write_bytes, custom.timeout_s) == (False, 10, 20, 5.0)
    assert ToolPolicy.from_settings(None) == ToolPolicy()


@pytest.mark.parametrize(
    ("system", "agent", "expected"),
    [
        # the agent turns fs off
        ({}, {"fs": {"enabled": False}}, {"fs_enabled": False}),
        # the agent cannot turn on what the system turned off
        ({"fs": {"enabled": False}}, {"fs": {"enabled": True}}, {"fs_enabled": False}),
        # limits take the lower value, whichever side it comes from
        ({"fs": {"maxReadBytes": 1000}}, {"fs": {"maxReadBytes": 50}}, {"max_read_bytes": 50}),
        ({"fs": {"maxReadBytes": 1000}}, {"fs": {"maxReadBytes": 5000}}, {"max_read_bytes": 1000}),
        ({"fs": {"maxWriteBytes": 10}}, {"fs": {"maxWriteBytes": 99}}, {"max_write_bytes": 10}),
        # malformed agent values tighten (enabled) or are ignored (limits)
        ({}, {"fs": {"enabled": "no"}}, {"fs_enabled": False}),
        ({}, {"fs": False}, {"fs_enabled": False}),
        ({}, {"fs": {"maxReadBytes": -5}}, {"max_read_bytes": 1_000_000}),
        ({}, {"fs": {"maxReadBytes": True}}, {"max_read_bytes": 1_000_000}),
        # MCP: off wins, server lists intersect
        ({}, {"mcp": {"enabled": False}}, {"mcp_enabled": False}),
        ({"mcp": {"allowedServers": ["a", "b"]}}, {"mcp": {"allowedServers": ["b", "c"]}}, {"mcp_allowed_servers": frozenset({"b"})}),
        ({}, {"mcp": {"allowedServers": ["x"]}}, {"mcp_allowed_servers": frozenset({"x"})}),
        ({"mcp": {"allowedServers": ["a"]}}, {"mcp": {}}, {"mcp_allowed_servers": frozenset({"a"})}),
        # timeouts only get shorter
        ({"timeoutSeconds": 60}, {"timeoutSeconds": 600}, {"timeout_s": 60.0}),
        ({"timeoutSeconds": 60}, {"timeoutSeconds": 6}, {"timeout_s": 6.0}),
        # an agent with no tools block changes nothing
        ({"fs": {"maxReadBytes": 7}}, None, {"max_read_bytes": 7}),
    ],
)
def test_an_agent_can_only_tighten(system: dict[str, Any], agent: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    merged = ToolPolicy.from_settings(system).tighten(agent)
    for name, value in expected.items():
        assert getattr(merged, name) == value, name


def test_allows_by_tool_group() -> None:
    policy = ToolPolicy(mcp_allowed_servers=frozenset({"git"}), disabled=frozenset({"fs.write"}))
    assert policy.allows("fs.read") and not policy.allows("fs.write")
    assert policy.allows("mcp.git.log") and not policy.allows("mcp.web.fetch")
    assert policy.allows("ui.ask_user")
    assert not ToolPolicy(fs_enabled=False).allows("fs.list")
    assert not ToolPolicy(mcp_enabled=False).allows("mcp.git.log")
    assert not policy.tighten({"disabled": ["ui.ask_user"]}).allows("ui.ask_user")


# -- approval gate ---------------------------------------------------------------------------


class Scripted:
    """An approver answering from a list, recording what it was asked."""

    def __init__(self, *answers: Any):
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def approve(self, call: ApprovalRequest) -> Any:
        self.asked.append(call)
        await asyncio.sleep(0.01)
        return self.answers.pop(0)


def req(tool: str = "fs.write", conversation: str = "c1") -> ApprovalRequest:
    return ApprovalRequest(tool=tool, args={"path": "x"}, conversation_id=conversation)


def check(gate: ApprovalGate, request: ApprovalRequest) -> tuple[ApprovalDecision, dict[str, Any] | None]:
    return asyncio.run(gate.check(request))


def test_allow_once_asks_every_time() -> None:
    approver = Scripted(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_ONCE)
    gate = ApprovalGate(approver)
    assert check(gate, req()) == (ApprovalDecision.ALLOW_ONCE, None)
    assert check(gate, req()) == (ApprovalDecision.ALLOW_ONCE, None)
    assert len(approver.asked) == 2


def test_allow_for_the_conversation_is_remembered_for_that_conversation_only() -> None:
    approver = Scripted(ApprovalDecision.ALLOW_CONVERSATION, ApprovalDecision.DENY, ApprovalDecision.DENY)
    gate = ApprovalGate(approver)
    check(gate, req())
    assert check(gate, req())[1] is None  # not asked again
    assert len(approver.asked) == 1
    assert check(gate, req(tool="fs.apply_patch"))[0] is ApprovalDecision.DENY  # another tool is asked
    assert check(gate, req(conversation="c2"))[0] is ApprovalDecision.DENY  # another conversation is asked
    gate.forget_conversation("c1")
    approver.answers.append(ApprovalDecision.ALLOW_ONCE)
    check(gate, req())
    assert len(approver.asked) == 4


def test_allow_always_is_persisted_and_holds_everywhere() -> None:
    saved: list[str] = []
    approver = Scripted(ApprovalDecision.ALLOW_ALWAYS)
    gate = ApprovalGate(approver, persist_always=saved.append)
    check(gate, req())
    assert saved == ["fs.write"]
    assert check(gate, req(conversation="c9"))[1] is None
    assert len(approver.asked) == 1
    seeded = ApprovalGate(Scripted(), always_allowed=saved)
    assert check(seeded, req())[1] is None  # granted from settings, nobody asked


def test_a_failing_persist_keeps_the_grant_for_the_session(caplog: pytest.LogCaptureFixture) -> None:
    def broken(tool: str) -> None:
        raise OSError("disk full")

    gate = ApprovalGate(Scripted(ApprovalDecision.ALLOW_ALWAYS), persist_always=broken)
    assert check(gate, req())[1] is None
    assert gate.is_granted("fs.write", "other")
    assert "always allow" in caplog.text


def test_deny_gives_a_user_denied_result() -> None:
    decision, refused = check(ApprovalGate(Scripted(ApprovalDecision.DENY)), req())
    assert decision is ApprovalDecision.DENY
    assert refused is not None and refused["ok"] is False
    assert refused["error"]["code"] == ErrorCode.E_USER_DENIED and "refused" in refused["error"]["message"]


def test_an_unknown_answer_counts_as_deny(caplog: pytest.LogCaptureFixture) -> None:
    assert check(ApprovalGate(Scripted("sure")), req())[0] is ApprovalDecision.DENY
    assert check(ApprovalGate(Scripted("allow_once")), req())[0] is ApprovalDecision.ALLOW_ONCE  # plain strings work


def test_parallel_calls_are_asked_one_at_a_time_and_share_a_conversation_grant() -> None:
    approver = Scripted(ApprovalDecision.ALLOW_CONVERSATION)
    gate = ApprovalGate(approver)

    async def both() -> list[tuple[ApprovalDecision, dict[str, Any] | None]]:
        return await asyncio.gather(*(gate.check(req()) for _ in range(5)))

    results = asyncio.run(both())
    assert [refused for _, refused in results] == [None] * 5
    assert len(approver.asked) == 1


def test_a_bare_function_can_approve() -> None:
    async def approve(call: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.DENY

    assert check(ApprovalGate(approve), req())[0] is ApprovalDecision.DENY


def test_auto_and_denying_approvers() -> None:
    assert check(ApprovalGate(AutoApprover()), req())[1] is None
    hint = "Write tools need approval; run again with --yes."
    refused = check(ApprovalGate(DenyingApprover(), deny_message=hint), req())[1]
    assert refused is not None and refused["error"]["message"] == hint


def test_two_conversations_ask_at_the_same_time() -> None:
    """One gate serves every conversation of a session: a question open in one does not hold up another's."""
    release = asyncio.Event()
    asked: list[str | None] = []

    async def approve(call: ApprovalRequest) -> ApprovalDecision:
        asked.append(call.conversation_id)
        await release.wait()
        return ApprovalDecision.ALLOW_ONCE

    gate = ApprovalGate(approve)

    async def both() -> None:
        first = asyncio.ensure_future(gate.check(req(conversation="c1")))
        second = asyncio.ensure_future(gate.check(req(conversation="c2")))
        while len(asked) < 2:
            await asyncio.sleep(0)
            assert not first.done() and not second.done()
        release.set()
        await asyncio.gather(first, second)

    asyncio.run(asyncio.wait_for(both(), 5))
    assert sorted(asked, key=str) == ["c1", "c2"]


def test_new_settings_replace_the_always_grants_and_keep_the_conversations() -> None:
    approver = Scripted(ApprovalDecision.ALLOW_CONVERSATION, ApprovalDecision.DENY)
    gate = ApprovalGate(approver, always_allowed=["fs.apply_patch"])
    check(gate, req())  # fs.write allowed for c1
    gate.set_always_allowed([])  # the user took fs.apply_patch off the list in Settings
    assert check(gate, req())[1] is None and len(approver.asked) == 1
    assert check(gate, req(tool="fs.apply_patch"))[0] is ApprovalDecision.DENY and len(approver.asked) == 2
