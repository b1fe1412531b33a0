"""Edit and Regenerate as branches (issue 18 item 12): the log keeps every branch, requests and exports read the current one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core.context import ContextBudget, EstimateCounter, build_llm_messages
from crewagent.core.errors import CrewAgentError
from crewagent.core.export import export_markdown, export_openai
from crewagent.core.message_actions import edit_turn, regenerate_turn
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, OPENAI_FUNCTION_NAME, current_branch, split_branch, validate_messages

BIG = ContextBudget(max_messages=100_000, max_chars=100_000_000)
EST = EstimateCounter()

Op = tuple[Any, ...]

#: What a conversation is made of: questions, answers, tool groups (some calls left unanswered,
#: their repair result appended later, as recovery does), error parts, and edits.
ops = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(min_size=1, max_size=12)),
        st.tuples(st.just("answer"), st.text(min_size=1, max_size=12)),
        st.tuples(st.just("group"), st.integers(1, 3), st.integers(0, 3)),
        st.tuples(st.just("error"), st.text(max_size=12)),
        st.tuples(st.just("repair")),
        st.tuples(st.just("edit"), st.integers(0, 1_000), st.text(min_size=1, max_size=12)),
        st.tuples(st.just("regenerate")),
    ),
    max_size=40,
)


class _Log:
    def __init__(self) -> None:
        self.lines: list[ConversationMessage] = []
        self.unanswered: list[tuple[str, str]] = []  # (call id, assistant id)
        self.n = 0

    def add(self, role: str, content: Any, **fields: Any) -> ConversationMessage:
        self.n += 1
        message = ConversationMessage(id=f"m{self.n}", createdAt="t", role=role, content=content, **fields)  # type: ignore[arg-type]
        # Through the log's own format, as a reload reads it.
        message = ConversationMessage.model_validate_json(message.to_log_line())
        self.lines.append(message)
        return message


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "fs.read", "arguments": "{}"}}


def _play(script: list[Op]) -> tuple[_Log, ConversationMessage | None]:
    """The log the script writes, and the last edited (or regenerated) user message, if any."""
    log = _Log()
    edited: ConversationMessage | None = None
    for op in script:
        kind = op[0]
        if kind == "user":
            log.add("user", op[1])
            edited = None
        elif kind == "answer":
            log.add("assistant", op[1])
            edited = None
        elif kind == "group":
            _, count, answered = op
            ids = [f"c{log.n + 1}_{k}" for k in range(count)]
            assistant = log.add("assistant", None, tool_calls=[_call(i) for i in ids])
            for call_id in ids[:answered]:
                log.add("tool", "{}", tool_call_id=call_id)
            log.unanswered.extend((call_id, assistant.id) for call_id in ids[answered:])
            edited = None
        elif kind == "error":
            log.add("assistant", op[1] or "stopped", partType="error")
            edited = None
        elif kind == "repair" and log.unanswered:
            call_id, assistant_id = log.unanswered.pop(0)
            log.add("tool", '{"ok": false}', tool_call_id=call_id, synthetic=True, answersMessageId=assistant_id)
        elif kind in ("edit", "regenerate"):
            users = [m for m in current_branch(log.lines) if m.role == "user" and m.text.strip()]
            if not users:
                continue
            if kind == "edit":
                plan = edit_turn(log.lines, users[op[1] % len(users)].id, op[2] if op[2].strip() else "edited")
            else:
                plan = regenerate_turn(log.lines)
            edited = log.add("user", plan.text, replaces=plan.replaces)
    return log, edited


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_any_edit_rebuilds_a_valid_request_that_ends_with_the_edited_message(script: list[Op]) -> None:
    log, edited = _play(script)
    result = build_llm_messages(log.lines, budget=BIG, counter=EST)
    assert result.ok, result.error
    assert validate_messages(result.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    exported = export_openai(log.lines, lambda m: m.text)
    assert exported.errors == []
    if edited is not None:
        assert result.messages[-1] == {"role": "user", "content": edited.text}
        assert exported.messages[-1] == {"role": "user", "content": edited.text}
    # Nothing is lost: every line is still in the log, and each is on the current branch or superseded.
    current, superseded = split_branch(log.lines)
    # The request asks what the current branch asks, not what an edit superseded.
    assert [m["content"] for m in result.messages if m["role"] == "user"] == [m.text for m in current if m.role == "user"]
    assert sorted(m.id for m in [*current, *superseded]) == sorted(m.id for m in log.lines)
    assert set(result.debug["excluded"]["supersededMessageIds"]) == {m.id for m in superseded}


def _conversation() -> list[ConversationMessage]:
    def msg(n: int, role: str, content: Any, **fields: Any) -> ConversationMessage:
        return ConversationMessage(id=f"m{n}", createdAt="t", role=role, content=content, **fields)  # type: ignore[arg-type]

    return [
        msg(1, "user", "What is 2+2?"),
        msg(2, "assistant", None, tool_calls=[_call("c1")]),
        msg(3, "tool", "{}", tool_call_id="c1"),
        msg(4, "assistant", "4"),
        msg(5, "user", "And 3+3?"),
        msg(6, "assistant", "6"),
    ]


def test_an_edit_supersedes_the_message_and_what_follows_and_keeps_them_in_the_log() -> None:
    log = _conversation()
    plan = edit_turn(log, "m1", "What is 5+5?")
    log.append(ConversationMessage.new("user", plan.text, replaces=plan.replaces))
    current, superseded = split_branch(log)
    assert [m.id for m in superseded] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert [m.text for m in current] == ["What is 5+5?"]
    request = build_llm_messages(log, budget=BIG, counter=EST).messages
    assert [m["content"] for m in request if m["role"] == "user"] == ["What is 5+5?"]
    # The Markdown export shows the current branch only; the JSON Lines export is the raw log.
    markdown, _ = export_markdown(ConversationMeta(id="c", title="t", createdAt="t", lastActiveAt="t"), log, lambda m: m.text)
    assert "5+5" in markdown and "2+2" not in markdown


def test_regenerate_replaces_the_last_answer_only() -> None:
    log = _conversation()
    plan = regenerate_turn(log)
    assert (plan.text, plan.replaces) == ("And 3+3?", "m5")
    log.append(ConversationMessage.new("user", plan.text, replaces=plan.replaces))
    log.append(ConversationMessage.new("assistant", "six"))
    request = build_llm_messages(log, budget=BIG, counter=EST).messages
    assert [(m["role"], m.get("content")) for m in request if m["role"] != "system"][-3:] == [
        ("assistant", "4"), ("user", "And 3+3?"), ("assistant", "six"),
    ]
    assert validate_messages(export_openai(log, lambda m: m.text).messages, name_pattern=OPENAI_FUNCTION_NAME) == []


def test_a_second_edit_of_the_same_question_goes_on_from_the_newest_branch() -> None:
    log = _conversation()
    first = ConversationMessage.new("user", "v2", replaces="m5")
    log += [first, ConversationMessage.new("assistant", "a2")]
    with pytest.raises(CrewAgentError):
        edit_turn(log, "m5", "v3")  # an old branch's message is not editable any more
    plan = edit_turn(log, first.id, "v3")
    log.append(ConversationMessage.new("user", plan.text, replaces=plan.replaces))
    assert [m.text for m in current_branch(log)] == ["What is 2+2?", "", "{}", "4", "v3"]


def test_a_replaces_that_names_no_message_cuts_nothing() -> None:
    log = [*_conversation(), ConversationMessage.new("user", "x", replaces="nowhere")]
    assert current_branch(log) == log


def test_edit_and_regenerate_refuse_what_they_cannot_do() -> None:
    with pytest.raises(CrewAgentError, match="no answer to regenerate"):
        regenerate_turn([])
    with pytest.raises(CrewAgentError, match="cannot be empty"):
        edit_turn(_conversation(), "m1", "  ")
    with pytest.raises(CrewAgentError, match="can no longer be edited"):
        edit_turn(_conversation(), "m4", "not a user message")


def test_raw_log_lines_are_read_alike() -> None:
    log = [m.to_log_dict() for m in _conversation()] + [{"id": "m7", "role": "user", "createdAt": "t", "content": "b", "replaces": "m5"}]
    assert [m["id"] for m in current_branch(log)] == ["m1", "m2", "m3", "m4", "m7"]
    assert json.loads(json.dumps(log[-1]))["replaces"] == "m5"


def test_a_long_conversation_opens_on_the_current_branch_its_first_page_too(store: Any, project: Any, conversation: Any) -> None:
    """The window's open: the newest page first, then the whole log; an old branch in neither."""
    import asyncio

    from crewagent.core.tools.policy import AutoApprover
    from crewagent.core.turn_host import FIRST_PAGE, Opened, TurnHost

    pid, cid = project.id, conversation.id
    written = [store.append_message(pid, cid, ConversationMessage.new("user" if n % 2 == 0 else "assistant", f"m{n}"))
               for n in range(FIRST_PAGE + 50)]
    edited = store.append_message(pid, cid, ConversationMessage.new("user", "edited", replaces=written[10].id))
    host: TurnHost[ConversationMessage] = TurnHost(
        lambda: store, lambda m: m, approver=AutoApprover(), ask_user=lambda cid: None, on_subagent=lambda e: None  # type: ignore[arg-type,return-value]
    )
    host.add_project(project)

    async def pages() -> list[Opened[ConversationMessage]]:
        return [page async for page in host.open(pid, cid)]

    first, whole = asyncio.run(pages())
    assert not first.complete and [m.id for m in first.messages] == [edited.id]
    assert [m.text for m in whole.messages] == [f"m{n}" for n in range(10)] + ["edited"]
    host.close()
