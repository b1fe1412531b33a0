"""The registry: error codes for every refusal, timeouts, cancellation, ui.ask_user, approval and audit wiring."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.tools import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalRequest,
    AuditLog,
    Tool,
    ToolContext,
    ToolPolicy,
    ToolRegistry,
    default_registry,
    read_audit,
)
from crewagent.core.tools.fs import threaded
from crewagent.core.tools.results import ErrorCode, ok
from crewagent.core.tools.ui import ASK_USER_TOOL


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("hello\n")
    return ToolContext(project_root=project, state_dir=tmp_path / "state", conversation_id="conv_1")


async def _echo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return ok(echo=args)


ECHO = Tool(
    name="test.echo",
    description="echo",
    parameters={
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0}, "mode": {"type": "string", "enum": ["a", "b"]}},
        "required": ["n"],
        "additionalProperties": False,
    },
    handler=_echo,
)


def run(registry: ToolRegistry, name: str, arguments: Any, ctx: ToolContext) -> dict[str, Any]:
    return asyncio.run(registry.execute(name, arguments, ctx, call_id="call_1"))


def test_openai_tool_list_has_every_builtin_with_an_object_schema() -> None:
    tools = default_registry().openai_tools()
    names = [tool["function"]["name"] for tool in tools]
    assert names == ["fs.list", "fs.read", "fs.search", "fs.write", "fs.apply_patch", "ui.ask_user", "terminal.run", "shell.exec"]
    # shell.exec needs tools.terminal.allowShellExec, off by default.
    assert "shell.exec" not in [tool["function"]["name"] for tool in default_registry().openai_tools(ToolPolicy())]
    for tool in tools:
        assert tool["type"] == "function"
        parameters = tool["function"]["parameters"]
        assert parameters["type"] == "object" and "$defs" not in json.dumps(parameters)
        assert "title" not in parameters
    read = next(t for t in tools if t["function"]["name"] == "fs.read")["function"]["parameters"]
    assert read["required"] == ["path"] and read["properties"]["startLine"] == {
        "minimum": 1, "type": "integer", "description": "First line to return (1-based).",
    }


def test_a_models_schema_is_made_once_and_each_tool_gets_its_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session makes its Task tools again: pydantic's schema of their arguments is built once."""
    from pydantic import BaseModel, Field

    from crewagent.core.tools.registry import schema_of

    class Args(BaseModel):
        path: str = Field(description="Where.")
        depth: int | None = None

    built: list[type[BaseModel]] = []
    real = Args.model_json_schema.__func__  # type: ignore[attr-defined]

    def counting(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(cls)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(Args, "model_json_schema", classmethod(counting))
    first = Tool(name="t.a", description="", handler=lambda a, c: ok(), args_model=Args)
    second = Tool(name="t.b", description="", handler=lambda a, c: ok(), args_model=Args)
    assert built == [Args]
    assert first.parameters == second.parameters == schema_of(Args)
    assert first.parameters["properties"]["depth"] == {"type": "integer"}
    first.parameters["properties"].clear()  # one tool's dict is not another's
    assert set(second.parameters["properties"]) == set(schema_of(Args)["properties"]) == {"path", "depth"}

def test_policy_and_ui_decide_what_is_visible() -> None:
    registry = default_registry()
    no_fs = [t["function"]["name"] for t in registry.openai_tools(ToolPolicy(fs_enabled=False))]
    assert no_fs == ["ui.ask_user", "terminal.run"]
    headless = [t["function"]["name"] for t in registry.openai_tools(has_ui=False)]
    assert "ui.ask_user" not in headless and "fs.read" in headless


def test_unknown_or_disabled_tool_is_not_available(ctx: ToolContext) -> None:
    registry = default_registry()
    unknown = run(registry, "fs.delete", "{}", ctx)
    assert code(unknown) == ErrorCode.TOOL_NOT_AVAILABLE and "fs.read" in unknown["error"]["message"]
    disabled = ToolContext(project_root=ctx.project_root, policy=ToolPolicy(fs_enabled=False))
    assert code(run(registry, "fs.read", {"path": "a.txt"}, disabled)) == ErrorCode.TOOL_NOT_AVAILABLE


@pytest.mark.parametrize("arguments", ['{"path": "a.txt"', "[1, 2]", '"a.txt"', "null", "12", "{'path': 'a'}", 5])
def test_arguments_that_are_not_a_json_object(ctx: ToolContext, arguments: Any) -> None:
    assert code(run(default_registry(), "fs.read", arguments, ctx)) == ErrorCode.TOOL_ARGS_INVALID_JSON


def test_empty_arguments_mean_no_arguments(ctx: ToolContext) -> None:
    for arguments in ("", "  ", None):
        assert run(default_registry(), "fs.list", arguments, ctx)["ok"]


@pytest.mark.parametrize(
    "arguments",
    [{}, {"path": 3}, {"path": "a.txt", "startLine": 0}, {"path": "a.txt", "bogus": 1}, {"path": "a.txt", "startLine": "x"}],
)
def test_schema_invalid_arguments(ctx: ToolContext, arguments: dict[str, Any]) -> None:
    result = run(default_registry(), "fs.read", json.dumps(arguments), ctx)
    assert code(result) == ErrorCode.E_SCHEMA_VALIDATION
    assert result["error"]["message"].startswith("Invalid arguments for fs.read:")


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [({"n": 1}, True), ({"n": 1, "mode": "b"}, True), ({}, False), ({"n": -1}, False), ({"n": True}, False),
     ({"n": 1.5}, False), ({"n": 1, "mode": "c"}, False), ({"n": 1, "x": 0}, False)],
)
def test_schema_only_tools_are_checked_too(ctx: ToolContext, arguments: dict[str, Any], valid: bool) -> None:
    result = run(ToolRegistry([ECHO]), "test.echo", json.dumps(arguments), ctx)
    assert result["ok"] is valid
    if not valid:
        assert code(result) == ErrorCode.E_SCHEMA_VALIDATION


def test_a_raising_handler_becomes_tool_exec_failed(ctx: ToolContext, caplog: pytest.LogCaptureFixture) -> None:
    async def broken(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        raise KeyError("missing piece")

    async def bad_shape(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return "not a dict"  # type: ignore[return-value]

    registry = ToolRegistry([Tool("t.broken", "", broken), Tool("t.shape", "", bad_shape)])
    result = run(registry, "t.broken", "{}", ctx)
    assert code(result) == ErrorCode.TOOL_EXEC_FAILED and "missing piece" in result["error"]["message"]
    assert "KeyError" in result["error"]["message"]
    assert any("t.broken" in record.getMessage() for record in caplog.records)
    assert code(run(registry, "t.shape", "{}", ctx)) == ErrorCode.TOOL_EXEC_FAILED


def test_timeout_stops_a_slow_tool_and_tells_its_thread(ctx: ToolContext) -> None:
    saw_cancel = threading.Event()

    def slow(args: Any, call_ctx: ToolContext) -> dict[str, Any]:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if call_ctx.cancelled:
                saw_cancel.set()
                return ok()
            time.sleep(0.005)
        return ok()

    async def sleepy(args: dict[str, Any], call_ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(5)
        return ok()

    from crewagent.core.tools.fs import ListArgs

    registry = ToolRegistry([Tool("t.thread", "", threaded(ListArgs, slow)), Tool("t.sleep", "", sleepy)])
    fast = ToolContext(project_root=ctx.project_root, policy=ToolPolicy(timeout_s=0.05))
    started = time.monotonic()
    result = run(registry, "t.sleep", "{}", fast)
    assert code(result) == ErrorCode.TOOL_TIMEOUT and "0.05 s" in result["error"]["message"]
    assert time.monotonic() - started < 2
    assert code(run(registry, "t.thread", "{}", fast)) == ErrorCode.TOOL_TIMEOUT
    assert saw_cancel.wait(2), "the worker thread was not told to stop"


def test_per_tool_timeout_overrides_the_policy(ctx: ToolContext) -> None:
    async def sleepy(args: dict[str, Any], call_ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(0.2)
        return ok()

    registry = ToolRegistry([Tool("t.sleep", "", sleepy, timeout_s=0.01)])
    assert code(run(registry, "t.sleep", "{}", ctx)) == ErrorCode.TOOL_TIMEOUT


def test_cancellation_propagates_and_is_audited_as_interrupted(tmp_path: Path, ctx: ToolContext) -> None:
    started = asyncio.Event()

    async def forever(args: dict[str, Any], call_ctx: ToolContext) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(60)
        return ok()

    audit = AuditLog(tmp_path / "audit.jsonl")
    audited = ToolContext(project_root=ctx.project_root, audit=audit)
    registry = ToolRegistry([Tool("t.forever", "", forever)])

    async def scenario() -> None:
        task = asyncio.create_task(registry.execute("t.forever", "{}", audited, call_id="c9"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    [line] = read_audit(tmp_path / "audit.jsonl")
    assert (line["tool"], line["errorCode"], line["callId"]) == ("t.forever", "TOOL_INTERRUPTED", "c9")


# -- ui.ask_user -----------------------------------------------------------------------------

FORM = {
    "type": "form",
    "title": "Project details",
    "fields": [
        {"name": "name", "label": "Name", "required": True},
        {"name": "kind", "label": "Kind", "type": "select", "options": ["app", {"value": "lib", "label": "Library"}]},
    ],
}


def test_ask_user_shows_the_widget_and_returns_the_submitted_payload(ctx: ToolContext) -> None:
    shown: list[dict[str, Any]] = []

    async def ask(widget: dict[str, Any]) -> dict[str, Any]:
        shown.append(widget)
        await asyncio.sleep(0.05)  # longer than the policy timeout below: a person is not a hang
        return {"type": "WIDGET_SUBMIT", "values": {"name": "x", "kind": "lib"}}

    with_ui = ToolContext(project_root=ctx.project_root, ask_user=ask, policy=ToolPolicy(timeout_s=0.01))
    result = run(default_registry(), "ui.ask_user", json.dumps(FORM), with_ui)
    assert result == {"ok": True, "widgetType": "form", "response": {"type": "WIDGET_SUBMIT", "values": {"name": "x", "kind": "lib"}}}
    [widget] = shown
    assert widget["callId"] == "call_1"
    assert widget["fields"][1]["options"] == [{"value": "app"}, {"value": "lib", "label": "Library"}]


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "dialog", "title": "x"},
        {"type": "form", "title": "x", "fields": []},
        {"type": "form", "title": "x", "fields": [{"name": "a", "label": "A", "type": "select"}]},
        {"type": "form", "title": "x", "fields": [{"name": "a", "label": "A"}, {"name": "a", "label": "B"}]},
        {"type": "selection", "title": "x", "options": []},
        {"type": "confirmation", "title": ""},
        {"type": "confirmation", "title": "x", "color": "red"},
        {"title": "x"},
    ],
)
def test_invalid_widgets_are_refused_before_the_user_sees_them(ctx: ToolContext, payload: dict[str, Any]) -> None:
    asked: list[Any] = []

    async def ask(widget: dict[str, Any]) -> dict[str, Any]:
        asked.append(widget)
        return {}

    with_ui = ToolContext(project_root=ctx.project_root, ask_user=ask)
    assert code(run(default_registry(), "ui.ask_user", json.dumps(payload), with_ui)) == ErrorCode.E_SCHEMA_VALIDATION
    assert asked == []


def test_ask_user_without_a_ui_or_dismissed(ctx: ToolContext) -> None:
    confirm = json.dumps({"type": "confirmation", "title": "Go?"})
    assert code(run(default_registry(), "ui.ask_user", confirm, ctx)) == ErrorCode.TOOL_NOT_AVAILABLE

    async def dismiss(widget: dict[str, Any]) -> None:
        return None

    dismissed = ToolContext(project_root=ctx.project_root, ask_user=dismiss)
    assert code(run(default_registry(), "ui.ask_user", confirm, dismissed)) == ErrorCode.E_USER_CANCELLED
    assert ASK_USER_TOOL.needs_ui


# -- approval and audit wiring ---------------------------------------------------------------


class Recorder:
    def __init__(self, decision: ApprovalDecision):
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    async def approve(self, call: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(call)
        return self.decision


def test_denied_write_is_not_written_and_says_the_user_refused(tmp_path: Path, ctx: ToolContext) -> None:
    approver = Recorder(ApprovalDecision.DENY)
    audit_file = tmp_path / "state" / "logs" / "execution" / "conv_1.jsonl"
    denied_ctx = ToolContext(
        project_root=ctx.project_root, approval=ApprovalGate(approver), audit=AuditLog(audit_file), conversation_id="conv_1"
    )
    result = run(default_registry(), "fs.write", json.dumps({"path": "new.md", "content": "x"}), denied_ctx)
    assert code(result) == ErrorCode.E_USER_DENIED and "refused" in result["error"]["message"]
    assert not (ctx.project_root / "new.md").exists()
    [request] = approver.requests
    assert (request.tool, request.call_id, request.conversation_id) == ("fs.write", "call_1", "conv_1")
    assert request.summary == "Write new.md (1 bytes)"
    [line] = read_audit(audit_file)
    assert (line["errorCode"], line["approval"]) == ("E_USER_DENIED", "deny")


def test_reads_never_ask_and_refused_writes_are_refused_before_asking(ctx: ToolContext) -> None:
    approver = Recorder(ApprovalDecision.ALLOW_ONCE)
    gated = ToolContext(project_root=ctx.project_root, approval=ApprovalGate(approver), policy=ToolPolicy(max_write_bytes=5))
    registry = default_registry()
    assert run(registry, "fs.read", {"path": "a.txt"}, gated)["ok"]
    assert code(run(registry, "fs.write", {"path": "../x", "content": "x"}, gated)) == ErrorCode.E_SANDBOX_VIOLATION
    assert code(run(registry, "fs.write", {"path": "x", "content": "x" * 10}, gated)) == ErrorCode.E_WRITE_LIMIT
    assert code(run(registry, "fs.write", {"path": "x", "content": 5}, gated)) == ErrorCode.E_SCHEMA_VALIDATION
    assert approver.requests == []
    assert run(registry, "fs.write", {"path": "x", "content": "ok"}, gated)["ok"]
    assert len(approver.requests) == 1


def test_every_call_is_audited_refused_ones_included(tmp_path: Path, ctx: ToolContext) -> None:
    audit_file = tmp_path / "audit.jsonl"
    audited = ToolContext(project_root=ctx.project_root, audit=AuditLog(audit_file), conversation_id="conv_1", run_id="run_1")
    registry = default_registry()
    run(registry, "fs.read", {"path": "a.txt"}, audited)
    run(registry, "fs.read", {"path": "/etc/passwd"}, audited)
    run(registry, "nope", "{}", audited)
    run(registry, "fs.read", "{oops", audited)
    run(registry, "fs.write", {"path": "w.txt", "content": "y" * 5000}, audited)
    lines = read_audit(audit_file)
    assert [(line["tool"], line.get("errorCode")) for line in lines] == [
        ("fs.read", None),
        ("fs.read", "E_SANDBOX_VIOLATION"),
        ("nope", "TOOL_NOT_AVAILABLE"),
        ("fs.read", "TOOL_ARGS_INVALID_JSON"),
        ("fs.write", None),
    ]
    assert all(line["conversationId"] == "conv_1" and line["runId"] == "run_1" for line in lines)
    assert all(isinstance(line["durationMs"], float) and line["ts"].endswith("Z") for line in lines)
    assert lines[0]["args"] == {"path": "a.txt"}
    assert len(lines[4]["args"]["content"]) < 400 and "5000 chars" in lines[4]["args"]["content"]
