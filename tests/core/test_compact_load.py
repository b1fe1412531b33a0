"""Loaded messages share their sets of field names (issue 14, item 3): for any log, the same
messages as parsing each line alone, and a change to one loaded message changes no other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core.messages import ConversationMessage, SharedFieldsSet, to_openai
from crewagent.core.store.log import load_log
from tests.examples import examples

_texts = st.text(max_size=20)
_optional = {
    "content": st.none() | _texts,
    "tool_call_id": _texts,
    "partType": st.sampled_from(["content", "thinking", "tool_start", "tool_result", "error"]),
    "toolName": _texts,
    "mode": st.sampled_from(["chat", "agent", "run"]),
    "includeInContext": st.booleans(),
    "synthetic": st.booleans(),
    "reasoning_content": _texts,
    "tool_calls": st.lists(
        st.builds(lambda i, n: {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}}, _texts, _texts), max_size=2
    ),
    "futureField": st.integers() | _texts,  # written by a newer build: kept
}
_lines = st.lists(
    st.fixed_dictionaries(
        {"id": _texts, "role": st.sampled_from(["system", "user", "assistant", "tool"]), "createdAt": _texts},
        optional=_optional,  # type: ignore[arg-type]
    ),
    max_size=25,
)
_changes = st.sampled_from(["set_field", "set_extra", "copy_update"])


# 30 logs of up to 25 lines, each with every kind of change: the sharing has few cases.
@settings(max_examples=examples(30), deadline=None)
@given(records=_lines, change=_changes, which=st.integers(min_value=0))
def test_for_any_log_the_loaded_messages_are_those_of_each_line_parsed_alone(
    tmp_path_factory: Any, records: list[dict[str, Any]], change: str, which: int
) -> None:
    path: Path = tmp_path_factory.getbasetemp() / "compact-load.jsonl"  # rewritten by each example
    lines = [json.dumps(record, ensure_ascii=False).encode() for record in records]
    path.write_bytes(b"".join(line + b"\n" for line in lines))

    loaded = load_log(path).messages
    alone = [ConversationMessage.model_validate_json(line) for line in lines]
    assert loaded == alone
    assert [m.to_log_bytes() for m in loaded] == [m.to_log_bytes() for m in alone] == [ConversationMessage.model_validate(r).to_log_bytes() for r in records]
    assert [to_openai(m) for m in loaded] == [to_openai(m) for m in alone]
    # Messages with the same field names share one set.
    by_names: dict[frozenset[str], set[int]] = {}
    for message in loaded:
        assert type(message.__pydantic_fields_set__) is SharedFieldsSet
        by_names.setdefault(frozenset(message.__pydantic_fields_set__), set()).add(id(message.__pydantic_fields_set__))
    assert all(len(sets) == 1 for sets in by_names.values())

    if not loaded:
        return
    # A change to one of them is its own: the others dump as before.
    index = which % len(loaded)
    target = loaded[index]
    if change == "set_field":
        target.toolName = "changed"
        alone[index].toolName = "changed"
    elif change == "set_extra":
        setattr(target, "addedLater", 1)
        setattr(alone[index], "addedLater", 1)
    else:
        loaded[index] = target.model_copy(update={"runId": "run_x"})
        alone[index] = alone[index].model_copy(update={"runId": "run_x"})
    assert [m.to_log_bytes() for m in loaded] == [m.to_log_bytes() for m in alone]
