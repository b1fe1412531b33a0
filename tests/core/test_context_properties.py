"""Property tests: any log, valid or corrupted, and any budget give a valid, budgeted, stable request."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from crewagent.core.context import CONTEXT_STILL_TOO_LARGE, ContextBudget, EstimateCounter, build_llm_messages
from crewagent.core.context.tokens import content_text, message_chars, messages_tokens
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, assemble, validate_messages
from tests.examples import examples

EST = EstimateCounter()
# 60 logs per property (150 before the suite had to fit in 2 minutes): each log is a script of up
# to 80 operations of eleven kinds (tool groups, orphans, duplicates, hidden and raw messages),
# so one example already makes many trimming and repair decisions. HYPOTHESIS_PROFILE=thorough
# runs 600 after a change to the builder.
PROPERTY = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

Op = tuple[Any, ...]
SIZES = st.integers(min_value=0, max_value=6_000)  # of a text: "w " * (size // 2)
RAW = [{"role": "robot", "content": "x"}, {"role": "user"}, 7, None]


def _text_op(kind: str) -> st.SearchStrategy[Op]:
    """``(kind, text)``. Mapped from the size in one step, not drawn as a tuple of ``st.just(kind)``
    and a text: the same values with two spans fewer per operation, which is most of what
    hypothesis spends on a script (its per-span and per-choice bookkeeping, not the values)."""
    return SIZES.map(functools.partial(_with_text, kind))


def _with_text(kind: str, size: int) -> Op:
    return (kind, "w " * (size // 2))


def _group(count: int, answered: int, size: int, shuffled: bool) -> Op:
    return ("group", count, answered, "w " * (size // 2), shuffled)


def scripts(min_size: int, max_size: int) -> st.SearchStrategy[list[Op]]:
    return st.lists(
        st.one_of(
            _text_op("user"),
            _text_op("answer"),
            # a tool group: n calls, how many get results, result size, whether results come shuffled
            st.builds(_group, st.integers(1, 3), st.integers(0, 3), SIZES, st.booleans()),
            _text_op("orphan"),
            _text_op("duplicate_result"),
            _text_op("reuse_id"),
            _text_op("system"),
            _text_op("hidden"),
            _text_op("empty_assistant"),
            _text_op("empty_call_id"),
            st.sampled_from(RAW).map(lambda raw: ("raw", raw)),
        ),
        min_size=min_size,
        max_size=max_size,
    )


# Small scripts find corner cases; long ones make trimming and compression happen.
ops = st.one_of(scripts(0, 30), scripts(30, 80))


def build_log(script: list[Op]) -> list[Any]:
    log: list[Any] = []
    calls_issued: list[str] = []
    n = 0

    def new(role: str, content: Any, **fields: Any) -> ConversationMessage:
        nonlocal n
        n += 1
        return ConversationMessage(id=f"m{n}", createdAt="t", role=role, content=content, **fields)  # type: ignore[arg-type]

    def call(cid: str) -> dict[str, Any]:
        return {"id": cid, "type": "function", "function": {"name": "fs.read", "arguments": '{"path": "@project/x"}'}}

    for op in script:
        kind = op[0]
        if kind == "user":
            log.append(new("user", op[1]))
        elif kind == "answer":
            log.append(new("assistant", op[1] or "ok"))
        elif kind == "group":
            _, count, answered, text, shuffled = op
            ids = [f"c{n}_{k}" for k in range(count)]
            calls_issued.extend(ids)
            log.append(new("assistant", None, tool_calls=[call(i) for i in ids]))
            results = [new("tool", text, tool_call_id=i) for i in ids[:answered]]
            log.extend(reversed(results) if shuffled else results)
        elif kind == "orphan":
            log.append(new("tool", op[1], tool_call_id=f"ghost{n}"))
        elif kind == "duplicate_result" and calls_issued:
            log.append(new("tool", op[1], tool_call_id=calls_issued[-1]))
        elif kind == "reuse_id" and calls_issued:
            log.append(new("assistant", op[1] or None, tool_calls=[call(calls_issued[0])]))
        elif kind == "system":
            log.append(new("system", op[1]))
        elif kind == "hidden":
            log.append(new("user", op[1], includeInContext=False))
        elif kind == "empty_assistant":
            log.append(new("assistant", None))
        elif kind == "empty_call_id":
            log.append(new("assistant", None, tool_calls=[call("")]))
        elif kind == "raw":
            log.append(op[1])
    return log


budgets = st.builds(
    ContextBudget,
    max_messages=st.integers(1, 60),
    max_chars=st.integers(4_000, 40_000),
    max_tokens=st.one_of(st.none(), st.integers(1_200, 10_000)),
)


def latest_user_text(log: list[Any]) -> str | None:
    for unit in reversed(assemble(log).units):
        if unit.message.role == "user":
            return unit.message.text
    return None


@PROPERTY
@given(script=ops, budget=budgets, mode=st.sampled_from(["chat", "agent"]), compress=st.booleans())
def test_any_log_any_budget_gives_a_valid_request(
    script: list[Op], budget: ContextBudget, mode: str, compress: bool
) -> None:
    log = build_log(script)
    result = build_llm_messages(log, mode=mode, budget=budget, counter=EST, compress=compress)  # type: ignore[arg-type]
    again = build_llm_messages(log, mode=mode, budget=budget, counter=EST, compress=compress)  # type: ignore[arg-type]
    assert (again.messages, again.debug) == (result.messages, result.debug)  # deterministic

    event(f"error={result.error.code if result.error else None}")
    event(f"compression={result.debug['compression']['stages']}")
    event(f"truncated={result.debug['truncatedLatestUserMessage']}")
    event(f"dropped={bool(result.debug['droppedMessageIds'])}")
    if result.error is not None:
        assert result.error.code == CONTEXT_STILL_TOO_LARGE and result.messages == []
        return
    payload = result.messages
    assert validate_messages(payload, name_pattern=DOTTED_FUNCTION_NAME) == []

    # Fits the budget (characters and tokens of the whole request, recounted here).
    assert sum(message_chars(m) for m in payload) <= budget.max_chars
    if budget.max_tokens is not None:
        assert messages_tokens(payload, EST) <= budget.max_tokens
    history = [m for m in payload if m["role"] != "system"]
    assert len(history) <= max(budget.max_messages, result.debug["protectedMessages"])
    assert not history or history[0]["role"] != "tool"

    # The latest user message is there, whole or truncated with a marker.
    latest = latest_user_text(log)
    if latest is not None:
        users = [content_text(m["content"]) for m in history if m["role"] == "user"]
        assert latest in users or (
            result.debug["truncatedLatestUserMessage"]
            and any(u.startswith(latest[: max(0, len(u) - 200)]) and "truncated" in u for u in users)
        )

    # No group is split: a group's calls are all in the request, or none of them is.
    sent = {c["id"] for m in payload for c in m.get("tool_calls") or ()}
    for unit in assemble(log).units:
        ids = {c.id for c in unit.calls}
        assert ids <= sent or not (ids & sent)


@settings(max_examples=examples(40), deadline=None)
@given(script=ops, budget=budgets)
def test_run_mode_with_the_real_counter_is_valid_and_fits(script: list[Op], budget: ContextBudget) -> None:
    from crewagent.core.context import RunContext, default_counter

    ctx = RunContext(run_id="r", workflow_id="w", graph_path="g.json", effective_agent_id="a", current_node_id="n1")
    counter = default_counter()
    result = build_llm_messages(build_log(script), mode="run", budget=budget, run_context=ctx, counter=counter)
    if result.error is not None:
        assert result.error.code == CONTEXT_STILL_TOO_LARGE
        return
    assert validate_messages(result.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    if budget.max_tokens is not None:
        assert messages_tokens(result.messages, counter) <= budget.max_tokens


# -- compaction inside the current turn (issue 15, item 9) ------------------------------------------

turn_steps = st.lists(
    # one model step of the current turn: (result sizes of its parallel calls, size of its arguments)
    st.tuples(st.lists(st.integers(0, 60_000), min_size=1, max_size=5), st.integers(0, 80_000)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=turn_steps, window=st.integers(16_000, 200_000), exact=st.booleans())
def test_any_current_turn_is_compacted_into_any_reasonable_window(
    steps: list[tuple[list[int], int]], window: int, exact: bool
) -> None:
    from crewagent.core.context import default_counter
    from crewagent.core.context.window import resolve_window

    counter = default_counter() if exact else EST
    log: list[ConversationMessage] = [ConversationMessage(id="u", createdAt="t", role="user", content="do it")]
    for s, (sizes, arg_size) in enumerate(steps):
        calls = [
            {"id": f"c{s}_{k}", "type": "function", "function": {"name": "fs.write", "arguments": '{"path": "@project/x", "content": "' + "a " * (arg_size // 2) + '"}'}}
            for k in range(len(sizes))
        ]
        log.append(ConversationMessage(id=f"a{s}", createdAt="t", role="assistant", content=None, tool_calls=calls))  # type: ignore[arg-type]
        log += [
            ConversationMessage(id=f"r{s}_{k}", createdAt="t", role="tool", content="w " * (size // 2), tool_call_id=f"c{s}_{k}")
            for k, size in enumerate(sizes)
        ]
    before = [m.model_dump() for m in log]
    budget = ContextBudget(window=resolve_window("m", setting=window)).for_counter(counter)
    result = build_llm_messages(log, budget=budget, counter=counter, conversation_id="conv")

    event(f"shortened={bool(result.debug['turnCompaction']['shortenedMessageIds'])}")
    # A turn of up to 40 calls always fits a window of 16k tokens or more: it never dies of its size.
    assert result.ok, result.error
    assert validate_messages(result.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert budget.fits(sum(message_chars(m) for m in result.messages), messages_tokens(result.messages, counter))
    # Every call keeps its one result, in order; the newest result is shortened only if it must be.
    answered = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
    assert answered == [c.id for m in log for c in m.tool_calls or ()]
    assert [m.model_dump() for m in log] == before  # a view: the log is not changed
    for spill in result.spills:
        assert any(spill.alias in content_text(m.get("content")) or spill.alias in str(m.get("tool_calls")) for m in result.messages)
