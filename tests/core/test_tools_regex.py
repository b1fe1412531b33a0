"""A regular expression chosen by the model cannot hang a turn (issue 15, item 3).

``(a+)+$`` on 34 ``a`` and a ``!`` backtracks for hours in Python's ``re`` while holding the
GIL, so the registry's ``wait_for`` never fired. Now RE2 matches it in linear time, and a
pattern RE2 cannot run (a backreference) stops at the call's deadline with a clear error.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from crewagent.core.loop import LoopEvent, ToolCallFinished
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import ToolContext, ToolPolicy, default_registry
from crewagent.core.tools.results import ErrorCode
from tests.core.loop_helpers import assert_log_valid, finished, make_context, turn_async
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

EVIL = "a" * 34 + "!"
# The backtracking search burns CPU until its deadline: 0.5 s keeps that short (it was 2 s, then
# 1 s); the bound (timeout + 1 s) keeps the same 1 s margin.
TOOL_TIMEOUT_S = 0.5


def test_a_pathological_pattern_ends_the_turn_within_the_tool_timeout(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "evil.txt").write_text(f"{EVIL}\nplain line\n", encoding="utf-8")
    ctx = make_context(project, conversation.id, timeoutSeconds=TOOL_TIMEOUT_S)
    scripted_llm.script(
        tool_calls(
            # RE2 runs this one in linear time: no match, at once.
            call("c_nested", "fs_search", json.dumps({"query": "(a+)+$", "regex": True})),
            # A backreference needs the backtracking engine: it must stop at the deadline.
            call("c_backref", "fs_search", json.dumps({"query": "(a|aa)+\\1$", "regex": True})),
        ),
        text("Searched."),
    )
    stamps: dict[str, float] = {}

    def stamp(event: LoopEvent, _session: object) -> None:
        stamps.setdefault(type(event).__name__, time.monotonic())

    # Timed from the calls' start: the first turn of a process also pays for imports and tokenizer set-up.
    events = asyncio.run(turn_async(store, project, conversation.id, scripted_llm.config(), "search", ctx=ctx, on_event=stamp))
    elapsed = stamps["TurnFinished"] - stamps["ToolCallStarted"]

    assert finished(events).reason == "completed"
    done = {e.call_id: e for e in events if isinstance(e, ToolCallFinished)}
    assert done["c_nested"].error_code is None
    assert done["c_backref"].error_code == ErrorCode.TOOL_TIMEOUT
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in scripted_llm.bodies[1]["messages"] if m["role"] == "tool"}
    assert results["c_nested"]["ok"] is True and results["c_nested"]["count"] == 0
    message = results["c_backref"]["error"]["message"]
    # The pattern's own limit usually fires first and names the file; on a loaded machine the
    # registry's (wall-clock) timeout may come first. Either way the code is TOOL_TIMEOUT.
    assert ("too slow" in message and "@project/evil.txt" in message) or "did not finish within" in message, message
    # The bound of the issue: from the calls' start to the end of the turn (the model's answer
    # included), the tool timeout plus 1 s.
    assert_log_valid(store, project.id, conversation.id)
    assert elapsed < TOOL_TIMEOUT_S + 1, elapsed


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(default_registry().execute("fs.search", json.dumps(args), ctx, call_id="call_1"))


def test_search_semantics_with_the_new_engines(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Hello World\nfoo(bar)\nabba\nxyz\n", encoding="utf-8")
    ctx = ToolContext(project_root=tmp_path)

    def lines(**args: Any) -> list[int]:
        result = run(ctx, args)
        assert result["ok"], result
        return [m["line"] for m in result["matches"]]

    assert lines(query="hello") == [1]  # case-insensitive by default
    assert lines(query="hello", caseSensitive=True) == []
    assert lines(query="foo(bar)") == [2]  # a plain query is a literal, never a pattern
    assert lines(query="o\\(b", regex=True) == [2]
    assert lines(query="^x.z$", regex=True) == [4]
    assert lines(query="(b)\\1", regex=True) == [3]  # a backreference: the fallback engine
    assert lines(query="a(?=b)", regex=True) == [3]  # a lookahead: the fallback engine
    bad = run(ctx, {"query": "(unclosed", "regex": True})
    assert bad["error"]["code"] == ErrorCode.E_SCHEMA_VALIDATION
    assert "regular expression" in bad["error"]["message"]


def test_the_fallback_respects_a_short_deadline_without_stalling_the_event_loop(tmp_path: Path) -> None:
    """While the fallback runs, the event loop keeps running (the GIL is released)."""
    (tmp_path / "evil.txt").write_text(EVIL + "\n", encoding="utf-8")
    ctx = ToolContext(project_root=tmp_path, policy=ToolPolicy(timeout_s=1.0))
    ticks: list[float] = []

    async def main() -> tuple[dict[str, Any], float]:
        async def ticker() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.05)

        task = asyncio.create_task(ticker())
        started = time.monotonic()
        try:
            result = await default_registry().execute(
                "fs.search", json.dumps({"query": "(a|aa)+\\1$", "regex": True}), ctx, call_id="c"
            )
            return result, time.monotonic() - started
        finally:
            task.cancel()

    result, elapsed = asyncio.run(main())
    assert elapsed < 2.0, elapsed
    assert result["error"]["code"] == ErrorCode.TOOL_TIMEOUT
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) >= 10 and max(gaps) < 0.5, gaps
