"""Unit tests of the RuntimeStore: projects, conversations, appends and the offload format."""

from __future__ import annotations

import builtins
import hashlib
import json
import shutil
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from crewagent.core.errors import ConversationNotFound, ProjectError
from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.store import TOOL_OUTPUT_THRESHOLD, RuntimeStore
from crewagent.core.store import index as index_module
from crewagent.core.store import log as log_module
from crewagent.core.store import runtime as runtime_module
from crewagent.core.store.checkpoint import ConversationBusy
from crewagent.core.store.log import encode_message


def _user(text: str, **fields: object) -> ConversationMessage:
    return ConversationMessage.new("user", text, **fields)


def _tool(content: str, call_id: str = "call_1", **fields: object) -> ConversationMessage:
    return ConversationMessage.new("tool", content, tool_call_id=call_id, **fields)


def _log_lines(store: RuntimeStore, project_id: str, conversation_id: str) -> list[bytes]:
    return store.log_path(project_id, conversation_id).read_bytes().splitlines()


# -- projects --------------------------------------------------------------------------------


def test_create_project_writes_project_file_with_stable_id(store, tmp_path: Path) -> None:
    folder = tmp_path / "work" / "alpha"
    project = store.create_project(folder, "Alpha")

    data = json.loads((folder / ".crewagent.json").read_text("utf-8"))
    assert data["projectId"] == project.id
    assert data["projectName"] == "Alpha"
    assert data["schemaVersion"] == 1
    assert (folder / "artifacts").is_dir()
    assert project.artifacts_dir == folder.resolve() / "artifacts"

    # Opening (or "creating" again) from another store process keeps the same identity.
    again = RuntimeStore(store.data_dir).open_project(folder)
    assert again.id == project.id
    assert again.name == "Alpha"
    assert RuntimeStore(store.data_dir).create_project(folder, "Renamed?").id == project.id
    assert json.loads((folder / ".crewagent.json").read_text("utf-8"))["projectName"] == "Alpha"


def test_open_project_refuses_a_plain_folder_unless_asked_to_create(store, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ProjectError, match="not a CrewAgent project"):
        store.open_project(plain)
    assert not (plain / ".crewagent.json").exists()
    assert store.recent_projects() == []

    project = store.open_project(plain, create=True)
    assert (plain / ".crewagent.json").is_file()
    assert [entry.projectId for entry in store.recent_projects()] == [project.id]


def test_two_projects_get_different_ids(store, tmp_path: Path) -> None:
    first = store.create_project(tmp_path / "a")
    second = store.create_project(tmp_path / "b")
    assert first.id != second.id
    assert first.runtime_dir != second.runtime_dir


def test_moved_project_folder_is_found_again_with_its_conversations(store, tmp_path: Path) -> None:
    old = tmp_path / "old-place"
    project = store.create_project(old, "Movable")
    conversation = store.create_conversation(project.id, title="Kept across the move")
    message = store.append_message(project.id, conversation.id, _user("remember me"))

    new = tmp_path / "elsewhere" / "new-place"
    new.parent.mkdir()
    shutil.move(str(old), str(new))

    fresh = RuntimeStore(store.data_dir)
    reopened = fresh.open_project(new)
    assert reopened.id == project.id
    assert reopened.root == new.resolve()
    titles = [meta.title for meta in fresh.list_conversations(reopened.id)]
    assert titles == ["Kept across the move"]
    loaded = fresh.load_messages(reopened.id, conversation.id)
    assert [m.to_log_dict() for m in loaded.messages] == [message.to_log_dict()]

    # The recent list now names the new place once, not the old one as well.
    recent = fresh.recent_projects()
    assert [(entry.projectId, entry.projectRoot) for entry in recent] == [(project.id, str(new.resolve()))]
    assert recent[0].exists


def test_recent_projects_most_recent_first(store, tmp_path: Path) -> None:
    a = store.create_project(tmp_path / "a", "A")
    b = store.create_project(tmp_path / "b", "B")
    c = store.create_project(tmp_path / "c", "C")
    assert [entry.name for entry in store.recent_projects()] == ["C", "B", "A"]

    store.open_project(tmp_path / "a")
    assert [entry.projectId for entry in store.recent_projects()] == [a.id, c.id, b.id]

    store.forget_project(c.id)
    assert [entry.projectId for entry in RuntimeStore(store.data_dir).recent_projects()] == [a.id, b.id]
    assert (tmp_path / "c" / ".crewagent.json").is_file()  # forgetting keeps the folder


def test_recent_project_with_missing_folder_is_flagged(store, tmp_path: Path) -> None:
    kept = store.create_project(tmp_path / "kept")
    gone = store.create_project(tmp_path / "gone")
    shutil.rmtree(tmp_path / "gone")

    flags = {entry.projectId: entry.exists for entry in RuntimeStore(store.data_dir).recent_projects()}
    assert flags == {kept.id: True, gone.id: False}


@pytest.mark.parametrize(
    "damage",
    [b"{not json", b"\xff\xfe\x00garbage", b'{"projectName": "no id"}', b"[1, 2, 3]"],
    ids=["invalid-json", "not-utf8", "missing-projectId", "not-an-object"],
)
def test_damaged_project_file_is_an_error_and_left_untouched(store, tmp_path: Path, damage: bytes) -> None:
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / ".crewagent.json").write_bytes(damage)

    for action in (lambda: store.open_project(folder), lambda: store.create_project(folder, "X")):
        with pytest.raises(ProjectError, match="damaged") as info:
            action()
        assert ".crewagent.json" in str(info.value)
        assert (folder / ".crewagent.json").read_bytes() == damage
    assert store.recent_projects() == []


# -- conversations ---------------------------------------------------------------------------


def test_create_conversation_is_listed_and_persisted(store, project) -> None:
    meta = store.create_conversation(project.id, title="Plan the trip", entry_type="agent", agentId="analyst")

    assert meta.id.startswith("conv_")
    assert (meta.title, meta.entryType, meta.activeType, meta.messageCount) == ("Plan the trip", "agent", "agent", 0)
    assert meta.agentId == "analyst"
    assert meta.createdAt == meta.lastActiveAt

    listed = RuntimeStore(store.data_dir).list_conversations(project.id)
    assert [m.model_dump() for m in listed] == [meta.model_dump()]
    on_disk = json.loads((project.runtime_dir / "conversations" / "index.json").read_text("utf-8"))
    assert [entry["id"] for entry in on_disk] == [meta.id]
    assert store.log_path(project.id, meta.id).is_file()
    assert store.load_messages(project.id, meta.id).messages == []


def test_list_is_ordered_by_last_activity(store, project) -> None:
    first = store.create_conversation(project.id, title="first")
    second = store.create_conversation(project.id, title="second")
    store.append_message(project.id, second.id, _user("x"))
    store.append_message(project.id, first.id, _user("y"))  # first is now the most recent

    assert [m.id for m in RuntimeStore(store.data_dir).list_conversations(project.id)] == [first.id, second.id]


def test_untitled_conversation_takes_its_title_from_the_first_user_message(store, project) -> None:
    meta = store.create_conversation(project.id)
    assert meta.title == "New conversation"
    store.append_message(project.id, meta.id, ConversationMessage.new("system", "You are helpful."))
    store.append_message(project.id, meta.id, _user("  How do I   rotate a PDF page?\n"))
    store.append_message(project.id, meta.id, _user("Something else"))

    assert RuntimeStore(store.data_dir).get_conversation(project.id, meta.id).title == "How do I rotate a PDF page?"


def test_rename_conversation_persists(store, project, conversation) -> None:
    store.rename_conversation(project.id, conversation.id, "  Budget   review ")
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).title == "Budget review"

    with pytest.raises(ValueError, match="empty"):
        store.rename_conversation(project.id, conversation.id, "   ")
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).title == "Budget review"

    with pytest.raises(ConversationNotFound):
        store.rename_conversation(project.id, "conv_does_not_exist", "x")


def test_rename_sticks_even_after_the_first_user_message(store, project) -> None:
    meta = store.create_conversation(project.id)
    store.rename_conversation(project.id, meta.id, "Mine")
    store.append_message(project.id, meta.id, _user("would have become the title"))
    assert store.get_conversation(project.id, meta.id).title == "Mine"


def test_update_active_type_and_selection(store, project, conversation) -> None:
    store.update_conversation(project.id, conversation.id, activeType="run", workflowId="wf-1")
    meta = RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id)
    assert (meta.entryType, meta.activeType, meta.workflowId) == ("chat", "run", "wf-1")

    with pytest.raises(ValidationError):
        store.update_conversation(project.id, conversation.id, activeType="nonsense")
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).activeType == "run"


def test_delete_conversation_removes_it(store, project, conversation) -> None:
    other = store.create_conversation(project.id, title="other")
    store.append_message(project.id, conversation.id, _user("bye"))
    store.append_message(project.id, other.id, _user("stay"))

    store.delete_conversation(project.id, conversation.id)

    assert [m.id for m in RuntimeStore(store.data_dir).list_conversations(project.id)] == [other.id]
    with pytest.raises(ConversationNotFound):
        store.load_messages(project.id, conversation.id)
    with pytest.raises(ConversationNotFound):
        store.append_message(project.id, conversation.id, _user("too late"))
    with pytest.raises(ConversationNotFound):
        store.delete_conversation(project.id, conversation.id)
    assert [m.text for m in store.load_messages(project.id, other.id).messages] == ["stay"]


def test_append_to_unknown_conversation_is_refused(store, project) -> None:
    with pytest.raises(ConversationNotFound):
        store.append_message(project.id, "conv_nope", _user("x"))
    assert not (project.runtime_dir / "conversations" / "conv_nope").exists()


# -- appends ---------------------------------------------------------------------------------


def test_append_writes_one_line_per_message_and_counts(store, project, conversation) -> None:
    sent = [
        _user("hello"),
        ConversationMessage.new(
            "assistant",
            None,
            tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        ),
        _tool("a.txt\nb.txt", toolName="ls", duration=12.5),
        ConversationMessage.new("assistant", "Two files: ä, 中文, 🙂", futureField={"nested": [1, None]}),
    ]
    stored = [store.append_message(project.id, conversation.id, m) for m in sent]
    assert [s.to_log_dict() for s in stored] == [m.to_log_dict() for m in sent]

    lines = _log_lines(store, project.id, conversation.id)
    assert [json.loads(line) for line in lines] == [m.to_log_dict() for m in sent]
    assert json.loads(lines[1])["content"] is None

    fresh = RuntimeStore(store.data_dir)
    assert fresh.get_conversation(project.id, conversation.id).messageCount == 4
    reloaded = fresh.load_messages(project.id, conversation.id)
    assert reloaded.problems == []
    assert [to_openai(m) for m in reloaded.messages] == [to_openai(m) for m in sent]
    assert reloaded.messages[3].futureField == {"nested": [1, None]}  # type: ignore[attr-defined]


def test_append_does_not_read_the_log(store, project, conversation, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost of an append must not grow with the conversation: it never re-reads the log."""
    log_path = store.log_path(project.id, conversation.id)
    # The guard below fails any read of the log, whatever its length: 1,000 lines prove what 10,000
    # did, and the reload here and the export check after the test read a tenth (0.75 CPU-s before).
    store.append_messages(project.id, conversation.id, [_user(f"message {number}") for number in range(1_000)])
    size_before = log_path.stat().st_size

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("append_message read the conversation log")

    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(str(file)).name == "messages.jsonl":
            raise AssertionError(f"append_message opened {file}")
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        for module in (log_module, runtime_module, index_module):
            for name in ("load_log", "iter_log"):
                if hasattr(module, name):
                    patch.setattr(module, name, forbidden)
        patch.setattr(builtins, "open", guarded_open)
        last = store.append_message(project.id, conversation.id, _user("the 1,001st"))

    assert log_path.stat().st_size == size_before + len(encode_message(last))
    loaded = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id)
    assert len(loaded.messages) == 1_001
    assert loaded.messages[-1].id == last.id


# -- large tool outputs ------------------------------------------------------------------------


def test_large_tool_output_is_offloaded_in_the_documented_format(store, project, conversation) -> None:
    content = "".join(f"line {n:06d} of the build output ✓\n" for n in range(3000))
    assert len(content.encode("utf-8")) > TOOL_OUTPUT_THRESHOLD
    message = _tool(content, toolName="shell")

    stored = store.append_message(project.id, conversation.id, message)

    alias = f"@state/logs/tool-results/{conversation.id}/{message.id}.json"
    payload = content.encode("utf-8")
    assert stored.content == content[:500] + f"\n\n[Full output: {alias}]"
    assert stored.fullOutputPath == alias
    assert stored.fullOutputBytes == len(payload)
    assert stored.fullOutputSha256 == hashlib.sha256(payload).hexdigest()
    assert message.content == content  # the caller's message is not modified

    offload_file = project.runtime_dir / "state" / "logs" / "tool-results" / conversation.id / f"{message.id}.json"
    assert offload_file.read_bytes() == payload

    raw_log = store.log_path(project.id, conversation.id).read_bytes()
    assert len(raw_log) < 2_000
    assert content[500:600].encode("utf-8") not in raw_log
    assert b"line 002999" not in raw_log
    logged = json.loads(raw_log)
    assert logged["fullOutputPath"] == alias
    assert logged["tool_call_id"] == "call_1"

    fresh = RuntimeStore(store.data_dir)
    loaded = fresh.load_messages(project.id, conversation.id).messages
    assert loaded[0].to_log_dict() == stored.to_log_dict()
    assert fresh.read_full_output(project.id, loaded[0]) == content


def test_offload_threshold_counts_utf8_bytes(store, project, conversation) -> None:
    at_limit = "a" * TOOL_OUTPUT_THRESHOLD
    over_limit = "a" * (TOOL_OUTPUT_THRESHOLD + 1)
    few_chars_many_bytes = "€" * (TOOL_OUTPUT_THRESHOLD // 3 + 1)  # 3 bytes each: over 50 KB in bytes
    assert len(few_chars_many_bytes) < TOOL_OUTPUT_THRESHOLD

    kept = store.append_message(project.id, conversation.id, _tool(at_limit))
    moved = store.append_message(project.id, conversation.id, _tool(over_limit))
    wide = store.append_message(project.id, conversation.id, _tool(few_chars_many_bytes))

    assert kept.fullOutputPath is None and kept.content == at_limit
    assert moved.fullOutputPath is not None and moved.content.startswith("a" * 500 + "\n\n[Full output: ")
    assert wide.fullOutputPath is not None
    assert wide.content.startswith("€" * 500 + "\n\n[Full output: @state/")  # 500 characters, not bytes
    assert store.read_full_output(project.id, wide) == few_chars_many_bytes


def test_only_tool_messages_are_offloaded(store, project, conversation) -> None:
    big = "x" * (TOOL_OUTPUT_THRESHOLD * 2)
    for message in (_user(big), ConversationMessage.new("assistant", big)):
        stored = store.append_message(project.id, conversation.id, message)
        assert stored.fullOutputPath is None and stored.content == big
    loaded = store.load_messages(project.id, conversation.id).messages
    assert [m.content for m in loaded] == [big, big]
    assert not (project.runtime_dir / "state" / "logs" / "tool-results").exists()


def test_index_catches_up_with_appends_it_did_not_see(store, project, conversation) -> None:
    """Another process (or a crash before the index was saved) appended: the listing still counts them."""
    store.append_message(project.id, conversation.id, _user("through the store"))
    with open(store.log_path(project.id, conversation.id), "ab") as handle:
        for number in range(3):
            handle.write(encode_message(_user(f"written elsewhere {number}")))
    fresh = RuntimeStore(store.data_dir)
    assert fresh.get_conversation(project.id, conversation.id).messageCount == 4
    # A read counts what was appended (without saving it); a damaged line is corrected by the next full load.
    with open(store.log_path(project.id, conversation.id), "ab") as handle:
        handle.write(b"{torn\n")
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == 5
    fresh.load_messages(project.id, conversation.id)
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == 4


def test_an_append_counts_lines_another_writer_added_since_its_last_one(store, project, conversation) -> None:
    """The append catches its cached index entry up from the log size it wrote at (no extra stat)."""
    store.append_message(project.id, conversation.id, _user("first"))
    with open(store.log_path(project.id, conversation.id), "ab") as handle:
        for number in range(3):
            handle.write(encode_message(_user(f"written elsewhere {number}")))
    store.append_message(project.id, conversation.id, _user("last"))
    assert store.get_conversation(project.id, conversation.id).messageCount == 5
    store.flush()
    entry = json.loads((project.runtime_dir / "conversations" / "index.json").read_text(encoding="utf-8"))[0]
    assert (entry["messageCount"], entry["logBytes"]) == (5, store.log_path(project.id, conversation.id).stat().st_size)


def test_an_append_to_a_folder_removed_behind_the_stores_back_is_refused(store, project, conversation) -> None:
    """Another process removed the folder while this store's index still lists it: the append is
    refused and neither the folder nor an offloaded payload is created again."""
    store.append_message(project.id, conversation.id, _user("before"))
    folder = store.log_path(project.id, conversation.id).parent
    shutil.rmtree(folder)
    for message in (_user("after"), _tool("y" * (TOOL_OUTPUT_THRESHOLD * 2))):
        with pytest.raises(ConversationNotFound):
            store.append_message(project.id, conversation.id, message)
    assert not folder.exists()
    assert not (project.runtime_dir / "state" / "logs" / "tool-results").exists()


def test_get_conversation_is_a_read_that_never_writes_the_index(store, project, conversation) -> None:
    """Issue 10: reading one entry counts what others appended, but leaves index.json as it is."""
    store.append_message(project.id, conversation.id, _user("through the store"))
    store.flush()
    with open(store.log_path(project.id, conversation.id), "ab") as handle:
        handle.write(encode_message(_user("written elsewhere")))
    index_json = project.runtime_dir / "conversations" / "index.json"
    before = (index_json.read_bytes(), index_json.stat().st_mtime_ns)
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == 2
    assert (index_json.read_bytes(), index_json.stat().st_mtime_ns) == before


def test_appends_in_a_burst_reach_index_json_after_flush(store, project, conversation) -> None:
    for number in range(5):
        store.append_message(project.id, conversation.id, _user(f"burst {number}"))
    store.flush()
    index = json.loads((project.runtime_dir / "conversations" / "index.json").read_text(encoding="utf-8"))
    assert index[0]["messageCount"] == 5
    assert index[0]["logBytes"] == store.log_path(project.id, conversation.id).stat().st_size


def test_probing_a_deleted_conversation_does_not_bring_its_folder_back(store, project, conversation) -> None:
    """Opening a conversation on one thread while it is deleted on another asks is_turn_running:
    that probe used to create the turn lock file, and with it the deleted folder again."""
    folder = store.log_path(project.id, conversation.id).parent
    store.delete_conversation(project.id, conversation.id)
    assert store.is_turn_running(project.id, conversation.id) is False
    assert not folder.exists()


def test_a_recovery_holding_the_turn_lock_is_told_apart_from_a_turn(store, project, conversation) -> None:
    pid, cid = project.id, conversation.id
    with store.turn_lock(pid, cid, turn=False):
        assert store.is_turn_running(pid, cid)  # recovery and turns still exclude each other
        assert not store.is_turn_running(pid, cid, count_recovery=False)
        with pytest.raises(ConversationBusy):
            with store.turn_lock(pid, cid):
                pass
    with store.turn_lock(pid, cid):
        assert store.is_turn_running(pid, cid, count_recovery=False)
    assert not store.is_turn_running(pid, cid)


def test_probing_the_turn_lock_on_one_thread_never_makes_a_turn_on_another_find_it_busy(
    store, project, conversation
) -> None:
    """A probe takes the lock for an instant: a turn starting in that instant used to be refused
    ("already answering in another window") although nothing else ran."""
    pid, cid = project.id, conversation.id
    done = threading.Event()
    probes: list[bool] = []

    def probe() -> None:
        while not done.is_set():
            probes.append(store.is_turn_running(pid, cid, count_recovery=False))

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(300):
            with store.turn_lock(pid, cid):
                pass
    finally:
        done.set()
        prober.join()
    assert probes


def test_a_deletion_interrupted_after_marking_is_finished_by_the_next_listing(store, project, conversation) -> None:
    store.append_message(project.id, conversation.id, _user("doomed"))
    folder = store.log_path(project.id, conversation.id).parent
    (folder / ".deleted").touch()  # the crash came right after the marker was written
    assert [meta.id for meta in RuntimeStore(store.data_dir).list_conversations(project.id)] == []
    assert not folder.exists()
    with pytest.raises(ConversationNotFound):
        store.append_message(project.id, conversation.id, _user("too late"))


def test_two_tool_messages_with_one_id_keep_both_full_outputs(store, project, conversation) -> None:
    first = ConversationMessage.new("tool", "a" * 60_000, tool_call_id="c1", id="msg_same")
    second = ConversationMessage.new("tool", "b" * 60_000, tool_call_id="c2", id="msg_same")
    stored = [store.append_message(project.id, conversation.id, m) for m in (first, second)]
    assert stored[0].fullOutputPath != stored[1].fullOutputPath
    assert store.read_full_output(project.id, stored[0]) == "a" * 60_000
    assert store.read_full_output(project.id, stored[1]) == "b" * 60_000
