"""The newest messages read from the end of the log: the timeline's quick first page of a long conversation."""

from __future__ import annotations

from pathlib import Path

from crewagent.core.messages import ConversationMessage
from crewagent.core.store import RuntimeStore
from crewagent.core.store.log import encode_message, load_tail


def _messages(count: int) -> list[ConversationMessage]:
    return [ConversationMessage.new("user" if n % 2 else "assistant", f"message {n} " + "é→" * (n % 7)) for n in range(count)]


def test_the_tail_is_the_newest_messages_in_order_across_read_blocks(tmp_path: Path) -> None:
    log = tmp_path / "messages.jsonl"
    messages = _messages(50)
    log.write_bytes(b"".join(encode_message(m) for m in messages))
    for block in (7, 64, 1 << 16):  # a block boundary inside a line, a UTF-8 character, or none
        tail = load_tail(log, 12, block=block)
        assert [m.id for m in tail] == [m.id for m in messages[-12:]]
    assert [m.id for m in load_tail(log, 500)] == [m.id for m in messages]
    assert load_tail(tmp_path / "missing.jsonl", 5) == []


def test_a_line_being_written_and_a_damaged_line_are_left_out(tmp_path: Path) -> None:
    log = tmp_path / "messages.jsonl"
    messages = _messages(6)
    body = b"".join(encode_message(m) for m in messages[:4]) + b'{"id": "broken", "role": \n' + encode_message(messages[4])
    log.write_bytes(body + encode_message(messages[5])[:20])  # the last line has no newline yet
    assert [m.id for m in load_tail(log, 3, block=16)] == [messages[2].id, messages[3].id, messages[4].id]
    # ``limit``: only what was written before that moment counts.
    cut = len(encode_message(messages[0])) + len(encode_message(messages[1])) - 3
    assert [m.id for m in load_tail(log, 2, limit=cut)] == [messages[0].id]


def test_the_store_reads_the_newest_messages_of_a_conversation(store: RuntimeStore, tmp_path: Path) -> None:
    project = store.create_project(tmp_path / "project")
    meta = store.create_conversation(project.id)
    assert store.load_newest(project.id, meta.id, 10) == []
    messages = _messages(30)
    store.append_messages(project.id, meta.id, messages)
    newest = store.load_newest(project.id, meta.id, 10)
    assert [m.id for m in newest] == [m.id for m in messages[-10:]]
    assert newest == store.load_messages(project.id, meta.id).messages[-10:]
    store.delete_conversation(project.id, meta.id)
    assert store.load_newest(project.id, meta.id, 10) == []
