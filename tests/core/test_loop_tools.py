"""Tool calls inside the loop: concurrency, call-order persistence, failing calls, ids, the guards."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from crewagent.core.context import ContextBudget
from crewagent.core.loop import ToolCallFinished, ToolCallStarted, TurnSettings
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import Tool, ToolContext, ToolRegistry, default_registry, ok
from tests.core.loop_helpers import (
    assert_log_valid,
    assert_request_valid,
    error_code_of,
    finished,
    make_context,
    persisted,
    result_of,
    shape,
    turn,
)
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def _registry(*tools: Tool) -> ToolRegistry:
    registry = default_registry()
    for tool in tools:
        registry.register(tool)
    return registry


def test_parallel_calls_run_concurrently_and_results_are_persisted_in_call_order(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    trace: list[str] = []
    both_started = asyncio.Event()

    def slow(name: str, extra_wait: float) -> Tool:
        async def handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
            trace.append(f"start {name}")
            if len([t for t in trace if t.startswith("start")]) == 2:
                both_started.set()
            # Run one after the other, the first call would wait here until its timeout.
            await asyncio.wait_for(both_started.wait(), 5)
            await asyncio.sleep(extra_wait)
            trace.append(f"end {name}")
            return ok(name=name)

        return Tool(f"slow.{name}", f"slow tool {name}", handler, parameters=NO_ARGS)

    # the first call finishes last: persistence must still follow call order
    registry = _registry(slow("first", 0.15), slow("second", 0.0))
    scripted_llm.script(
        tool_calls(call("c_first", "slow_first", "{", "}"), call("c_second", "slow_second", "{}")),
        text("Both done."),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "run both", registry=registry)

    assert finished(events).reason == "completed"
    assert trace[:2] == ["start first", "start second"]  # both started before either finished
    assert trace[2:] == ["end second", "end first"]
    assert [e.call_id for e in events if isinstance(e, ToolCallFinished)] == ["c_second", "c_first"]
    log = assert_log_valid(store, project.id, conversation.id)
    assert [m.tool_call_id for m in log if m.role == "tool"] == ["c_first", "c_second"]
    assert [result_of(m)["name"] for m in log if m.role == "tool"] == ["first", "second"]
    request = assert_request_valid(scripted_llm.bodies[1])
    assert [m.get("tool_call_id") for m in request[-2:]] == ["c_first", "c_second"]


def test_failing_calls_become_results_the_model_reads_and_the_loop_goes_on(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    async def sleepy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(30)
        return ok()

    async def broken(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    registry = _registry(Tool("t.sleepy", "sleeps", sleepy, parameters=NO_ARGS), Tool("t.broken", "raises", broken, parameters=NO_ARGS))
    ctx = make_context(project, conversation.id, timeoutSeconds=0.3)  # the setting gives the timeout
    scripted_llm.script(
        tool_calls(
            call("c_timeout", "t_sleepy", "{}"),
            call("c_json", "fs_read", '{"path": "@pro', "ject/a.txt"),  # never closed
            call("c_unknown", "shell_exec", '{"cmd": "rm -rf /"}'),
            call("c_raise", "t_broken", "{}"),
        ),
        text("Four failures noted."),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "try things", registry=registry, ctx=ctx)

    assert finished(events).reason == "completed"
    expected = ["TOOL_TIMEOUT", "TOOL_ARGS_INVALID_JSON", "TOOL_NOT_AVAILABLE", "TOOL_EXEC_FAILED"]
    assert {e.call_id: e.error_code for e in events if isinstance(e, ToolCallFinished)} == dict(
        zip(["c_timeout", "c_json", "c_unknown", "c_raise"], expected)
    )
    log = assert_log_valid(store, project.id, conversation.id)
    tools = [m for m in log if m.role == "tool"]
    assert [error_code_of(m) for m in tools] == expected
    assert all(m.partType == "error" for m in tools)
    assert "disk on fire" in result_of(tools[3])["error"]["message"]
    assert shape(log) == ["user", "assistant+calls", "tool", "tool", "tool", "tool", "assistant"]
    # the model got the four results, in call order, and answered
    request = assert_request_valid(scripted_llm.bodies[1])
    got = [json.loads(m["content"])["error"]["code"] for m in request if m["role"] == "tool"]
    assert got == expected
    # an unknown name reaches the loop as the model sent it (nothing to decode)
    assert [e.name for e in events if isinstance(e, ToolCallStarted)][2] == "shell_exec"


def test_duplicate_call_ids_in_one_message_are_made_unique(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "a.txt").write_text("alpha\n", encoding="utf-8")
    scripted_llm.script(
        tool_calls(call("dup", "fs_read", '{"path": "@project/a.txt"}'), call("dup", "fs_list", "{}")),
        text("ok"),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "go")

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    ids = [c.id for c in log[1].tool_calls or []]
    assert ids[0] == "dup" and ids[1] != "dup" and len(set(ids)) == 2
    assert [m.tool_call_id for m in log if m.role == "tool"] == ids
    assert [m.toolName for m in log if m.role == "tool"] == ["fs.read", "fs.list"]
    assert_request_valid(scripted_llm.bodies[1])


def test_a_call_id_reused_in_a_later_message_is_renamed(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """Models that number calls per message (call_0 every time) must not make the log invalid."""
    (project.root / "a.txt").write_text("alpha\n", encoding="utf-8")
    scripted_llm.script(
        tool_calls(call("call_0", "fs_read", '{"path": "@project/a.txt"}')),
        tool_calls(call("call_0", "fs_list", "{}")),
        text("done"),
    )
    events = turn(store, project, conversation.id, scripted_llm.config(), "go")
    assert finished(events).reason == "completed"

    scripted_llm.script(tool_calls(call("call_0", "fs_read", '{"path": "@project/a.txt"}')), text("again"))
    # a later turn whose context window no longer holds the earlier calls: ids come from the whole log
    narrow = TurnSettings(budget=ContextBudget(max_messages=2))
    events = turn(store, project, conversation.id, scripted_llm.config(), "once more", settings=narrow)
    assert finished(events).reason == "completed"
    assert "call_0" not in json.dumps(scripted_llm.bodies[3]["messages"])  # the window really was narrow

    log = assert_log_valid(store, project.id, conversation.id)
    issued = [c.id for m in log for c in m.tool_calls or []]
    assert len(issued) == 3 and len(set(issued)) == 3 and issued[0] == "call_0"
    assert [m.tool_call_id for m in log if m.role == "tool"] == issued
    # the model saw every result: the second request of each turn holds the full chain
    assert [m.get("tool_call_id") for m in scripted_llm.bodies[2]["messages"] if m["role"] == "tool"] == issued[:2]
    for body in scripted_llm.bodies:
        assert_request_valid(body)


def test_max_turns_ends_with_an_error_part(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(
        tool_calls(call("c1", "fs_list", "{}")),
        tool_calls(call("c2", "fs_list", '{"path": "@project/artifacts"}')),
    )

    events = turn(store, project, conversation.id, scripted_llm.config(), "loop", settings=TurnSettings(max_turns=2))

    end = finished(events)
    assert end.reason == "error" and end.error is not None and end.error["code"] == "ENGINE_MAX_TURNS_EXCEEDED"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant+calls", "tool", "assistant!error"]
    assert log[-1].error["code"] == "ENGINE_MAX_TURNS_EXCEEDED"
    assert "ENGINE_MAX_TURNS_EXCEEDED" in log[-1].text
    assert len(scripted_llm.requests) == 2

    scripted_llm.script(text("Stopping there."))
    assert finished(turn(store, project, conversation.id, scripted_llm.config(), "continue")).reason == "completed"
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert "ENGINE_MAX_TURNS_EXCEEDED" in history[-2]["content"]


def test_the_same_failing_call_three_times_is_a_loop(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    same = '{"path": "@project/missing.txt"}'
    scripted_llm.script(*(tool_calls(call(f"c{n}", "fs_read", same)) for n in range(3)))

    events = turn(store, project, conversation.id, scripted_llm.config(), "read missing.txt")

    end = finished(events)
    assert end.reason == "error" and end.error is not None and end.error["code"] == "ENGINE_LOOP_DETECTED"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", *["assistant+calls", "tool"] * 3, "assistant!error"]
    assert [error_code_of(m) for m in log if m.role == "tool"] == ["ENOENT"] * 3
    assert "ENGINE_LOOP_DETECTED" in log[-1].text


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(['{"path": "@project/missing.txt"}', '{"path": "@project/other.txt"}', '{"path": "@project/missing.txt"}'], id="different calls"),
        pytest.param(['{"path": "@project/missing.txt"}', '{"path": "@project/a.txt"}', '{"path": "@project/missing.txt"}'], id="a success between"),
    ],
)
def test_failing_calls_that_are_not_the_same_three_in_a_row_are_no_loop(
    arguments: list[str], scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "a.txt").write_text("alpha\n", encoding="utf-8")
    scripted_llm.script(*(tool_calls(call(f"c{n}", "fs_read", a)) for n, a in enumerate(arguments)), text("Giving up."))

    events = turn(store, project, conversation.id, scripted_llm.config(), "read it")

    assert finished(events).reason == "completed"
    assert persisted(events)[-1].content == "Giving up."
    assert_log_valid(store, project.id, conversation.id)
