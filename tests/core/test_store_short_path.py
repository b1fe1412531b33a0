"""The usual append's short path (issue 14, session 10): taken when it can be, and every case it
does not handle goes the long way with the same result."""

from __future__ import annotations

import fcntl
import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core import messages as messages_module
from crewagent.core.errors import StoreWriteError
from crewagent.core.messages import ConversationMessage, iso_from_ns, utc_now_iso
from crewagent.core.store import TOOL_OUTPUT_THRESHOLD, RuntimeStore
from crewagent.core.store.log import encode_message


@pytest.fixture
def long_ways(store: RuntimeStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The conversation ids of the appends that took the long way."""
    taken: list[str] = []
    long_way = store._append_message

    def counting(project_id: str, conversation_id: str, message: ConversationMessage) -> ConversationMessage:
        taken.append(conversation_id)
        return long_way(project_id, conversation_id, message)

    monkeypatch.setattr(store, "_append_message", counting)
    return taken


def _reply(text: str) -> ConversationMessage:
    return ConversationMessage.new("assistant", text)


def test_the_second_append_takes_the_short_path_with_the_long_ways_result(store: RuntimeStore, project, long_ways: list[str]) -> None:  # type: ignore[no-untyped-def]
    short = store.create_conversation(project.id, title="short")
    messages = [ConversationMessage.new("user", "question"), _reply("one"), _reply("two")]
    for message in messages:
        assert store.append_message(project.id, short.id, message) is message
    assert long_ways == [short.id], "only the first append should take the long way"
    store.flush()
    fresh = RuntimeStore(store.data_dir)
    meta = fresh.get_conversation(project.id, short.id)
    log_path = store.log_path(project.id, short.id)
    assert (meta.messageCount, meta.logBytes) == (3, log_path.stat().st_size)
    assert meta.lastActiveAt >= messages[-1].createdAt
    assert log_path.read_bytes() == b"".join(encode_message(m) for m in messages)


def test_the_first_user_message_after_other_appends_still_sets_the_title(store: RuntimeStore, project, long_ways: list[str]) -> None:  # type: ignore[no-untyped-def]
    untitled = store.create_conversation(project.id)
    store.append_message(project.id, untitled.id, ConversationMessage.new("system", "be brief"))
    store.append_message(project.id, untitled.id, ConversationMessage.new("user", "What is a flock?"))
    assert long_ways == [untitled.id, untitled.id], "an entry still waiting for its title goes the long way"
    store.append_message(project.id, untitled.id, _reply("a lock"))
    assert len(long_ways) == 2
    for seen in (store, RuntimeStore(store.data_dir)):
        meta = seen.get_conversation(project.id, untitled.id)
        assert (meta.title, meta.titleSource, meta.messageCount) == ("What is a flock?", "auto", 3)


def test_a_large_tool_output_after_the_first_append_is_still_offloaded(store: RuntimeStore, project, conversation, long_ways: list[str]) -> None:  # type: ignore[no-untyped-def]
    store.append_message(project.id, conversation.id, _reply("calling"))
    big = ConversationMessage.new("tool", "x" * (TOOL_OUTPUT_THRESHOLD + 1), tool_call_id="call_1")
    stored = store.append_message(project.id, conversation.id, big)
    assert len(long_ways) == 2 and stored.is_offloaded and stored.fullOutputBytes == TOOL_OUTPUT_THRESHOLD + 1
    loaded = store.load_messages(project.id, conversation.id).messages
    assert loaded[-1].fullOutputPath == stored.fullOutputPath


def test_an_index_replaced_by_another_process_sends_the_append_the_long_way(store: RuntimeStore, project, conversation, long_ways: list[str]) -> None:  # type: ignore[no-untyped-def]
    store.append_message(project.id, conversation.id, _reply("one"))
    other = RuntimeStore(store.data_dir)  # another process: its own index cache and lock descriptor
    other.append_message(project.id, conversation.id, _reply("two"))
    other.rename_conversation(project.id, conversation.id, "renamed elsewhere")  # replaces index.json
    store.append_message(project.id, conversation.id, _reply("three"))
    assert long_ways == [conversation.id, conversation.id]
    store.append_message(project.id, conversation.id, _reply("four"))  # short again
    assert len(long_ways) == 2
    store.flush()
    meta = RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id)
    assert (meta.title, meta.messageCount) == ("renamed elsewhere", 4)


def test_the_short_path_counts_what_another_process_appended_since(store: RuntimeStore, project, conversation, long_ways: list[str]) -> None:  # type: ignore[no-untyped-def]
    store.append_message(project.id, conversation.id, _reply("one"))
    store.append_message(project.id, conversation.id, _reply("two"))
    index_path = project.runtime_dir / "conversations" / "index.json"
    saved = index_path.stat()
    other = RuntimeStore(store.data_dir)
    other.append_message(project.id, conversation.id, _reply("theirs"))  # staged there, index.json untouched
    assert (index_path.stat().st_ino, index_path.stat().st_mtime_ns) == (saved.st_ino, saved.st_mtime_ns)
    store.append_message(project.id, conversation.id, _reply("three"))
    assert long_ways == [conversation.id], "the short path handles another writer's lines"
    assert store.get_conversation(project.id, conversation.id).messageCount == 4
    store.flush()
    entry = next(e for e in json.loads(index_path.read_text("utf-8")) if e["id"] == conversation.id)
    assert (entry["messageCount"], entry["logBytes"]) == (4, store.log_path(project.id, conversation.id).stat().st_size)


def test_a_lock_held_too_long_is_a_one_line_error_on_the_short_path(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    store.append_message(project.id, conversation.id, _reply("one"))
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()
    lock = store._guards[project.id].lock
    fd = os.open(lock.path, os.O_RDWR)  # another open file: its flock excludes the store's
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        lock.timeout = 0.05
        with pytest.raises(StoreWriteError, match="Another CrewAgent process has held"):
            store.append_message(project.id, conversation.id, _reply("two"))
    finally:
        os.close(fd)
    assert log_path.read_bytes() == before
    lock.timeout = 30.0
    store.append_message(project.id, conversation.id, _reply("two"))  # the lock was released after the error
    assert store.get_conversation(project.id, conversation.id).messageCount == 2


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=253_402_300_799_999_999_999 - 10**9), st.lists(st.integers(0, 2_500_000), max_size=5))
def test_the_timestamp_of_a_later_instant_in_or_past_the_millisecond(start: int, steps: list[int]) -> None:
    """utc_now_iso reuses the last text while the clock is still in its millisecond."""
    real = time.time_ns
    clock = [start]
    try:
        time.time_ns = lambda: clock[0]  # type: ignore[assignment]
        for step in [0, *steps]:
            clock[0] += step
            assert utc_now_iso() == iso_from_ns(clock[0]) == _datetime_text(clock[0])
    finally:
        time.time_ns = real  # type: ignore[assignment]


def _datetime_text(ns: int) -> str:
    from datetime import datetime, timezone

    when = datetime.fromtimestamp(ns // 10**9, timezone.utc).replace(microsecond=ns // 1000 % 10**6)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_full_field_order_table_still_encodes_every_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoding's table of field orders is bounded; a shape past the bound is ordered each time."""
    monkeypatch.setattr(messages_module, "_LOG_ORDER", {})
    monkeypatch.setattr(messages_module, "_MAX_LOG_ORDERS", 1)
    shapes = [
        ConversationMessage.new("user", "a", mode="agent"),
        ConversationMessage.new("assistant", None, tool_calls=[{"id": "c", "function": {"name": "f", "arguments": "{}"}}]),
        ConversationMessage.new("tool", "r", tool_call_id="c", toolName="f", duration=1.5),
    ]
    for message in [*shapes, *shapes]:
        assert message.to_log_bytes(b"\n") == message.__pydantic_serializer__.to_json(message, exclude_unset=True) + b"\n"
    assert len(messages_module._LOG_ORDER) == 1
