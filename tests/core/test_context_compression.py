"""Compression: deterministic stages first, then a persisted rolling summary; the log is never changed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from crewagent.core.context import ContextBudget, EstimateCounter, build_llm_messages
from crewagent.core.context.tokens import message_chars
from crewagent.core.context.summary import HEADINGS, build_with_summary, deterministic_summary
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, assemble, validate_messages
from tests.core.context_helpers import calls, msg, result, turn

EST = EstimateCounter()
BUDGET = ContextBudget(max_messages=200, max_chars=400_000, max_tokens=12_000)


def long_log() -> list[ConversationMessage]:
    log: list[ConversationMessage] = []
    for n in range(12):
        log += turn(n, size=3_000)
    log.append(msg("user", "latest question"))
    return log


def test_over_80_percent_compresses_oldest_first_down_to_half_and_spares_the_current_turn() -> None:
    log = long_log() + [calls("cur", content="checking"), result("cur", "c" * 5_000)]
    plain = build_llm_messages(log, budget=BUDGET, counter=EST, compress=False)
    assert plain.debug["usage"]["usagePercent"] > 80

    r = build_llm_messages(log, budget=BUDGET, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    compression = r.debug["compression"]
    assert compression["triggered"] and compression["stages"][0] == "previews"
    # Every deterministic stage ran (short texts cannot shrink further: the LLM summary does that).
    assert compression["stages"] == ["previews", "tool_history"]
    assert r.debug["usage"]["usagePercent"] < plain.debug["usage"]["usagePercent"]
    # The current turn is sent exactly as stored.
    assert r.messages[-3:] == plain.messages[-3:]
    assert r.messages[-1]["content"] == "c" * 5_000
    # The oldest history goes first: the newest kept answer is intact.
    answers = [m["content"] for m in r.messages if m["role"] == "assistant" and isinstance(m["content"], str)]
    assert "answer 11 " + "a" * 3_000 in answers
    assert r.summary_candidates and r.summary_candidates[0].message.id == plain.debug["droppedMessageIds"][0]


def test_compression_stops_as_soon_as_the_request_is_at_half_the_budget() -> None:
    log: list[ConversationMessage] = []
    for n in range(10):
        log += [msg("user", f"q{n}"), calls(f"c{n}"), result(f"c{n}", "r" * 6_000), msg("assistant", f"a{n}")]
    log.append(msg("user", "now"))
    budget = ContextBudget(max_chars=70_000)
    r = build_llm_messages(log, budget=budget, counter=EST)
    assert r.ok and r.debug["compression"]["stages"] == ["previews"]
    assert r.debug["usage"]["usagePercent"] <= 50
    results = [m["content"] for m in r.messages if m["role"] == "tool"]
    assert results[0].startswith("r" * 500 + "\n\n[Preview for context: 6000 characters")
    assert results[-1] == "r" * 6_000  # the newest old result was not needed


def test_collapsed_tool_groups_become_one_tool_call_history_summary() -> None:
    log: list[ConversationMessage] = [msg("user", "start " + "s" * 4_000)]
    for n in range(6):
        log += [calls(f"c{n}", content=f"step {n}"), result(f"c{n}", '{"ok": false, "error": {"code": "ENOENT", "message": "no file"}}' + " " * 1_500)]
    log.append(msg("user", "next"))
    budget = ContextBudget(max_chars=14_000)
    r = build_llm_messages(log, budget=budget, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    summaries = [m["content"] for m in r.messages if str(m.get("content", "")).startswith("TOOL_CALL_HISTORY_SUMMARY")]
    assert len(summaries) == 1
    assert "- purpose: step 0" in summaries[0]
    assert 'fs.read {"path": "@project/a.md"} → failed ENOENT: no file' in summaries[0]
    assert "tool_history" in r.debug["compression"]["stages"]


def test_a_group_whose_summary_would_be_longer_stays_whole_and_the_request_keeps_its_budget() -> None:
    """Found by test_context_properties: a call with an empty result collapsed into a summary 2
    characters longer than the group, and the request then went over the budget it had fit."""
    log = [msg("user", "w " * (size // 2)) for size in (180, 226, 254, 344, 428, 518, 518, 794, 1544)]
    log += [calls("c1"), result("c1", ""), msg("user", ""), calls("c2a", "c2b")]
    budget = ContextBudget(max_messages=15, max_chars=7584)
    plain = build_llm_messages(log, budget=budget, counter=EST, compress=False)
    r = build_llm_messages(log, budget=budget, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert sum(message_chars(m) for m in r.messages) <= budget.max_chars
    assert "tool_history" not in r.debug["compression"]["stages"]
    assert r.messages == plain.messages  # nothing could be made smaller


def test_compression_can_be_turned_off() -> None:
    r = build_llm_messages(long_log(), budget=BUDGET, counter=EST, compress=False)
    assert r.debug["compression"]["stages"] == [] and r.summary_candidates == []


class Store:
    def __init__(self) -> None:
        self.appended: list[ConversationMessage] = []

    def append(self, message: ConversationMessage) -> ConversationMessage:
        stored = ConversationMessage.model_validate_json(message.to_log_line())
        self.appended.append(stored)
        return stored


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_llm_summary_is_persisted_with_the_ids_it_covers_and_used_on_the_next_build() -> None:
    log = long_log()
    before = [m.to_log_line() for m in log]
    store = Store()
    prompts: list[list[dict[str, Any]]] = []

    async def summarizer(prompt: list[dict[str, Any]]) -> str:
        prompts.append(prompt)
        return "CONVERSATION_SUMMARY\n## User goal\n- answer twelve questions\n## Current status\n- halfway"

    r = run(build_with_summary(log, append=store.append, summarizer=summarizer, budget=BUDGET, counter=EST))
    assert [m.to_log_line() for m in log] == before
    assert len(store.appended) == 1 and len(prompts) == 1
    summary = store.appended[0]
    assert summary.role == "system" and getattr(summary, "synthetic") is True
    covered = getattr(summary, "summaryOf")
    assert covered[0] == log[0].id and log[-1].id not in covered
    for heading in HEADINGS:
        assert f"## {heading}" in summary.text
    assert "- answer twelve questions" in summary.text
    assert r.ok and r.debug["summary"]["source"] == "llm" and r.debug["summary"]["messageId"] == summary.id
    assert summary.text in [m["content"] for m in r.messages]
    assert r.debug["usage"]["usagePercent"] < 80
    assert "question 0" not in str(r.messages)
    assert r.messages[-1]["content"] == "latest question"


def test_a_failing_summarizer_falls_back_to_the_deterministic_summary() -> None:
    store = Store()

    async def broken(prompt: list[dict[str, Any]]) -> str:
        raise ConnectionError("provider down")

    r = run(build_with_summary(long_log(), append=store.append, summarizer=broken, budget=BUDGET, counter=EST))
    assert r.ok and r.debug["summary"]["source"] == "deterministic"
    assert "ConnectionError: provider down" in r.debug["summary"]["fallbackReason"]
    text = store.appended[0].text
    assert text.startswith("CONVERSATION_SUMMARY")
    assert "## Tool results\n- fs.read:" in text and "@project/a.md" in text


def test_rolling_summary_covers_the_previous_one() -> None:
    store = Store()
    log = long_log()
    run(build_with_summary(log, append=store.append, budget=BUDGET, counter=EST))
    first = store.appended[0]
    log2 = [*log, first, msg("assistant", "ok"), *[m for n in range(12, 20) for m in turn(n, size=3_000)], msg("user", "q")]
    run(build_with_summary(log2, append=store.append, budget=BUDGET, counter=EST))
    assert len(store.appended) == 2
    second = store.appended[1]
    assert first.id in getattr(second, "summaryOf")
    assert set(getattr(first, "summaryOf")) <= set(getattr(second, "summaryOf"))
    r = build_llm_messages([*log2, second], budget=BUDGET, counter=EST)
    assert r.debug["summary"]["messageId"] == second.id
    assert r.debug["excluded"]["droppedSystemMessageIds"] == [first.id]


def test_no_summary_when_nothing_needed_compressing() -> None:
    store = Store()
    r = run(build_with_summary(turn(1), append=store.append, budget=BUDGET, counter=EST))
    assert r.ok and store.appended == [] and r.debug["summary"] is None


def test_deterministic_summary_merges_the_previous_sections() -> None:
    units = assemble(turn(1) + [calls("x", args='{"path": "@state/runs/r/workflow.md"}'), result("x")]).units
    previous = "CONVERSATION_SUMMARY\n## User goal\n- write the PRD\n## Key decisions\n- markdown only"
    text = deterministic_summary(previous, units)
    assert "## User goal\n- write the PRD" in text
    assert "## Key decisions\n- markdown only" in text
    assert "- @state/runs/r/workflow.md" in text
    assert "## Confirmed constraints\n- (none)" in text


@pytest.mark.parametrize("reply", ["", "   "])
def test_empty_summarizer_reply_falls_back(reply: str) -> None:
    store = Store()

    async def empty(prompt: list[dict[str, Any]]) -> str:
        return reply

    r = run(build_with_summary(long_log(), append=store.append, summarizer=empty, budget=BUDGET, counter=EST))
    assert r.debug["summary"]["source"] == "deterministic"
