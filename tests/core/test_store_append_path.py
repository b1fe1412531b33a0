"""The append's short path (issue 14): the same text, fields and files as the long way round."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core import messages as messages_module
from crewagent.core.errors import ConversationNotFound
from crewagent.core.messages import ConversationMessage, ConversationMeta, iso_from_ns, utc_now_iso
from crewagent.core.store import RuntimeStore
from crewagent.core.store.index import record_append
from crewagent.core.store.log import encode_message

# 1970 to 9999: every time whose ISO year has four digits.
_NS = st.integers(min_value=0, max_value=253_402_300_799_999_999_999 - 2 * 10**9)  # room for the +1 s below


def _datetime_text(ns: int) -> str:
    """What utc_now_iso returned before: datetime.now reads the same clock, floored to microseconds."""
    when = datetime.fromtimestamp(ns // 10**9, timezone.utc).replace(microsecond=ns // 1000 % 10**6)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@settings(max_examples=300)
@given(st.lists(_NS, min_size=1, max_size=6))
def test_the_timestamp_text_is_the_datetime_text_for_any_instant(instants: list[int]) -> None:
    # Several in a row: the cached second of one must never leak into the next.
    for ns in instants:
        for near in (ns, ns + 1, ns + 999_999, ns + 10**9):
            assert iso_from_ns(near) == _datetime_text(near)


def test_the_timestamp_is_now() -> None:
    before = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    stamp = utc_now_iso()
    after = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert before <= stamp <= after
    assert messages_module._second_text[1] == stamp[:19]


def test_recording_an_append_sets_what_attribute_assignment_sets() -> None:
    # record_append writes the fields directly; that is only equivalent without validated assignment.
    assert not ConversationMeta.model_config.get("validate_assignment")
    base = {"id": "conv_a", "title": "t", "createdAt": "2026-01-01T00:00:00.000Z", "lastActiveAt": "x"}
    direct, assigned = ConversationMeta(**base), ConversationMeta(**base)
    record_append(direct, 123, "2026-01-02T00:00:00.000Z")
    assigned.messageCount += 1
    assigned.logBytes = 123
    assigned.lastActiveAt = "2026-01-02T00:00:00.000Z"
    assert direct.model_dump() == assigned.model_dump()
    assert direct.model_fields_set == assigned.model_fields_set
    assert direct.to_json_dict() == assigned.to_json_dict() and direct.to_json_dict()["logBytes"] == 123


def test_an_append_to_a_legacy_conversation_migrates_it_first(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    """The append no longer stats messages.json; it finds out when the log is missing."""
    log_path = store.log_path(project.id, conversation.id)
    log_path.unlink()  # the original app wrote only messages.json
    legacy = [{"id": "u1", "role": "user", "content": "old question"}, {"id": "a1", "role": "assistant", "content": "old answer"}]
    (log_path.parent / "messages.json").write_text(json.dumps(legacy), "utf-8")

    new = store.append_message(project.id, conversation.id, ConversationMessage.new("user", "new question"))

    fresh = RuntimeStore(store.data_dir)
    assert [m.id for m in fresh.load_messages(project.id, conversation.id).messages] == ["u1", "a1", new.id]
    assert (log_path.parent / "messages.json.bak").exists() and not (log_path.parent / "messages.json").exists()
    assert fresh.get_conversation(project.id, conversation.id).messageCount == 3
    assert store.get_conversation(project.id, conversation.id).messageCount == 3


def test_an_append_recreates_a_missing_log_but_not_a_missing_folder(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    log_path = store.log_path(project.id, conversation.id)
    log_path.unlink()
    first = store.append_message(project.id, conversation.id, ConversationMessage.new("user", "again"))
    assert [m.id for m in store.load_messages(project.id, conversation.id).messages] == [first.id]

    for name in os.listdir(log_path.parent):
        os.unlink(log_path.parent / name)
    log_path.parent.rmdir()  # removed by another process, behind the index's back
    with pytest.raises(ConversationNotFound):
        store.append_message(project.id, conversation.id, ConversationMessage.new("user", "gone"))
    assert not log_path.parent.exists()


def test_a_marked_folder_refuses_the_append_with_its_log_in_place(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    """A deletion interrupted right after its marker (the index still lists the conversation)."""
    store.append_message(project.id, conversation.id, ConversationMessage.new("user", "kept"))
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()
    (log_path.parent / ".deleted").touch()
    with pytest.raises(ConversationNotFound):
        store.append_message(project.id, conversation.id, ConversationMessage.new("user", "too late"))
    assert log_path.read_bytes() == before


def _assert_saved_entries_match_their_logs(store: RuntimeStore, project, index_path) -> None:  # type: ignore[no-untyped-def]
    """The saved entries themselves, not caught up by a listing (which would hide a wrong entry):
    each may be behind its log (another writer's save replaces staged counts), never wrong."""
    store.flush()
    for entry in json.loads(index_path.read_text("utf-8")):
        counted = store.log_path(project.id, entry["id"]).read_bytes()[: entry["logBytes"]]
        assert entry["messageCount"] == len(counted.splitlines()) and counted.endswith(b"\n"), entry


def test_appends_count_into_the_right_entry_when_another_process_reorders_the_index(store: RuntimeStore, project) -> None:  # type: ignore[no-untyped-def]
    """The entry's position is remembered between appends; another writer's index.json may list
    the entries in another order (or fewer of them), and the remembered position must not be trusted."""
    conversations = [store.create_conversation(project.id, title=f"c{n}") for n in range(4)]
    for conversation in conversations:
        store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "one"))
    index_path = project.runtime_dir / "conversations" / "index.json"
    _assert_saved_entries_match_their_logs(store, project, index_path)
    entries = json.loads(index_path.read_text("utf-8"))
    index_path.write_text(json.dumps(entries[::-1]), "utf-8")  # another process saved it reordered
    for conversation in conversations[:2]:
        store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "two"))
    _assert_saved_entries_match_their_logs(store, project, index_path)
    entries = json.loads(index_path.read_text("utf-8"))
    index_path.write_text(json.dumps(entries[1:]), "utf-8")  # and then without its first entry
    for conversation in conversations[1:]:
        store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "three"))
    _assert_saved_entries_match_their_logs(store, project, index_path)
    counts = {meta.id: meta.messageCount for meta in RuntimeStore(store.data_dir).list_conversations(project.id)}
    assert counts == {conversations[0].id: 2, conversations[1].id: 3, conversations[2].id: 2, conversations[3].id: 2}
    counts_here = {meta.id: meta.messageCount for meta in store.list_conversations(project.id)}
    assert counts_here == counts


def test_the_last_byte_is_read_only_when_someone_else_wrote_last(store: RuntimeStore, project, conversation, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """An append reads the log's last byte (a torn record to step over?) unless the log ends where
    this process's last append ended: then that byte is the append's own newline."""
    from crewagent.core.store import _fsutil

    reads: list[int] = []
    real_pread = os.pread

    def counting_pread(fd: int, length: int, offset: int) -> bytes:
        reads.append(offset)
        return real_pread(fd, length, offset)

    monkeypatch.setattr(_fsutil.os, "pread", counting_pread)
    log_path = store.log_path(project.id, conversation.id)
    first = store.append_message(project.id, conversation.id, ConversationMessage.new("user", "one"))
    reads.clear()
    second = store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "two"))
    assert reads == [], "the second append read the newline the first one wrote"
    reads.clear()
    with open(log_path, "ab") as other:  # another process, killed in the middle of its record
        other.write(b'{"id": "torn", "role": "us')
    third = store.append_message(project.id, conversation.id, ConversationMessage.new("user", "three"))
    assert reads == [log_path.stat().st_size - len(encode_message(third)) - 2], "the torn tail went unnoticed"
    loaded = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id)
    assert [m.id for m in loaded.messages] == [first.id, second.id, third.id]
    assert len(loaded.problems) == 1
