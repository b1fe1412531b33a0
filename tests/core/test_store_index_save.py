"""index.json is saved off the path of appends that are not a burst (a chat), and nothing is lost
when the process is killed before it was saved: the listing counts the rest from the log."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import datetime
from pathlib import Path

import pytest

from crewagent.core.messages import ConversationMessage
from crewagent.core.store import RuntimeStore
from crewagent.core.store import index as index_module
from tests.fakes.lean_fork import fork_child


def _index_json(project) -> Path:  # type: ignore[no-untyped-def]
    return project.runtime_dir / "conversations" / "index.json"


def _entry(project, conversation_id: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return next(e for e in json.loads(_index_json(project).read_text("utf-8")) if e["id"] == conversation_id)


def _when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_appends_further_apart_than_the_interval_leave_the_save_to_flush(store, project, conversation, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(index_module, "SAVE_INTERVAL_S", 0.0)  # every append "more than the interval" after the last
    store.append_message(project.id, conversation.id, ConversationMessage.new("user", "first"))
    saved = (_index_json(project).stat().st_ino, _entry(project, conversation.id))
    for number in range(3):
        store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", f"reply {number}"))
    assert (_index_json(project).stat().st_ino, _entry(project, conversation.id)) == saved  # not replaced by an append
    assert store.get_conversation(project.id, conversation.id).messageCount == 4  # in memory
    store.flush()  # a turn's end
    assert _entry(project, conversation.id)["messageCount"] == 4


def test_an_index_staged_too_long_is_saved_by_the_next_append(store, project, conversation, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(index_module, "SAVE_INTERVAL_S", 0.0)
    store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "first"))
    monkeypatch.setattr(index_module, "MAX_STAGED_S", 0.0)
    store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "second"))
    assert _entry(project, conversation.id)["messageCount"] == 2


def test_a_burst_still_saves_while_it_runs(store, project, conversation, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Another process sees a long burst progress (about once per interval), not only at its end."""
    monkeypatch.setattr(index_module, "SAVE_INTERVAL_S", 0.2)
    store.flush()
    before = _index_json(project).stat().st_ino
    started = time.monotonic()
    while _index_json(project).stat().st_ino == before and time.monotonic() - started < 10:
        store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "burst"))
    assert _index_json(project).stat().st_ino != before
    assert _entry(project, conversation.id)["messageCount"] >= 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork and SIGKILL")
def test_sigkill_before_the_index_was_saved_loses_nothing_in_the_listing(store, project) -> None:  # type: ignore[no-untyped-def]
    older = store.create_conversation(project.id, title="older")
    conversation = store.create_conversation(project.id)  # titled by its first message
    replies = 5

    def body(write_fd: int) -> None:
        index_module.SAVE_INTERVAL_S = 0.0  # this forked child only: appends as far apart as a chat's
        child = RuntimeStore(store.data_dir)
        child.append_message(project.id, conversation.id, ConversationMessage.new("user", "Plan the release"))
        for number in range(replies):
            last = ConversationMessage.new("assistant", f"reply {number}")
            child.append_message(project.id, conversation.id, last)
        os.write(write_fd, f"{last.createdAt}\n".encode())
        time.sleep(60)  # killed here, with the index changes staged and not saved

    pid, read_fd = fork_child(body)
    try:
        line = b""
        while not line.endswith(b"\n"):
            chunk = os.read(read_fd, 4096)
            assert chunk, "the child ended early"
            line += chunk
        assert not line.startswith(b"ERROR"), line
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_fd)
    last_created = line.decode().strip()

    on_disk = _entry(project, conversation.id)
    assert on_disk["messageCount"] == 1  # saved with the title, not since: the case under test
    log_path = store.log_path(project.id, conversation.id)

    listed = RuntimeStore(store.data_dir).list_conversations(project.id)
    assert [meta.id for meta in listed] == [conversation.id, older.id]
    meta = listed[0]
    assert (meta.title, meta.titleSource, meta.autoTitle) == ("Plan the release", "auto", False)
    assert (meta.messageCount, meta.logBytes) == (1 + replies, log_path.stat().st_size)
    assert abs(_when(meta.lastActiveAt) - _when(last_created)) < 1.0
    # The listing saved what it caught up: the next process reads it without counting again.
    assert _entry(project, conversation.id)["messageCount"] == 1 + replies
    assert len(RuntimeStore(store.data_dir).load_messages(project.id, conversation.id).messages) == 1 + replies
