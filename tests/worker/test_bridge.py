"""The Worker answers UI requests on its own thread with immutable values and readable errors."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from crewagent.core.messages import ConversationMessage
from crewagent.worker import ConversationSummary, ProjectRef, RecentProjectEntry, Worker, WorkerThread
from tests.worker.conftest import Client, Recorder


def test_recent_projects_mark_a_missing_folder(qtbot: Any, store: Any, tmp_path: Path, client: Client, recorder: Recorder) -> None:
    kept = store.create_project(tmp_path / "kept", "Kept")
    gone = store.create_project(tmp_path / "gone", "Gone")
    (tmp_path / "gone" / ".crewagent.json").unlink()

    client.load_recent_projects.emit()
    qtbot.waitUntil(lambda: bool(recorder.of("recent_projects_changed")))

    (entries,) = recorder.of("recent_projects_changed")[0]
    assert isinstance(entries, tuple)
    assert all(isinstance(entry, RecentProjectEntry) for entry in entries)
    by_id = {entry.project_id: entry for entry in entries}
    assert by_id[kept.id].exists and by_id[kept.id].root == str(tmp_path / "kept")
    assert not by_id[gone.id].exists
    assert [entry.name for entry in entries] == ["Gone", "Kept"]  # most recently opened first


def test_open_project_sends_the_project_then_its_conversations_most_recent_first(
    qtbot: Any, store: Any, project: Any, client: Client, recorder: Recorder
) -> None:
    older = store.create_conversation(project.id, title="Older")
    newer = store.create_conversation(project.id, title="Newer", entry_type="agent")
    store.append_message(project.id, older.id, ConversationMessage.new("user", "bump"))  # now the most recent

    client.open_project.emit(str(project.root))
    qtbot.waitUntil(lambda: bool(recorder.of("recent_projects_changed")))

    names = [name for name, _ in recorder.events]
    assert names == ["project_opened", "conversations_loaded", "recent_projects_changed"]
    (opened,) = recorder.of("project_opened")[0]
    assert opened == ProjectRef(project.id, "My Project", str(project.root), str(project.artifacts_dir), str(project.runtime_dir))
    project_id, items = recorder.of("conversations_loaded")[0]
    assert project_id == project.id
    assert [(item.title, item.entry_type, item.message_count) for item in items] == [
        ("Older", "chat", 1),
        ("Newer", "agent", 0),
    ]
    assert newer.id == items[1].id


def test_results_are_frozen_values(qtbot: Any, project: Any, client: Client, recorder: Recorder) -> None:
    client.create_conversation.emit(project.id, "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("conversation_created")))
    _, item = recorder.of("conversation_created")[0]
    assert isinstance(item, ConversationSummary)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.title = "changed"  # type: ignore[misc]


def test_requests_run_on_the_worker_thread(
    qtbot: Any, tmp_path: Path, worker_thread: WorkerThread, client: Client, recorder: Recorder
) -> None:
    threads: list[int] = []
    worker_thread.worker.project_opened.connect(
        lambda _project: threads.append(threading.get_ident()), Qt.ConnectionType.DirectConnection
    )
    client.create_project.emit(str(tmp_path / "fresh"), "")
    # The recorder's copy is queued to this thread before the direct slot runs on the worker's:
    # this thread may see it first (a failure seen under load), so both are waited for.
    qtbot.waitUntil(lambda: bool(recorder.of("project_opened")) and bool(threads))

    assert threads[0] != threading.get_ident()
    (opened,) = recorder.of("project_opened")[0]
    assert opened.name == "fresh"  # an empty name means the folder's name
    assert (tmp_path / "fresh" / ".crewagent.json").is_file()
    assert (tmp_path / "fresh" / "artifacts").is_dir()


def test_a_folder_that_is_not_a_project_or_does_not_exist_is_reported_as_such(
    qtbot: Any, tmp_path: Path, client: Client, recorder: Recorder
) -> None:
    """The UI offers to make a plain folder a project, and says so when a folder is missing."""
    (tmp_path / "plain").mkdir()
    client.open_project.emit(str(tmp_path / "plain"))
    client.open_project.emit(str(tmp_path / "gone"))
    qtbot.waitUntil(lambda: len(recorder.of("project_unavailable")) == 2)

    assert recorder.of("project_unavailable") == [(str(tmp_path / "plain"), "not_a_project"), (str(tmp_path / "gone"), "missing")]
    assert not recorder.of("project_opened") and not recorder.of("error")
    assert not (tmp_path / "plain" / ".crewagent.json").exists()  # nothing was created
    assert not (tmp_path / "gone").exists()


def test_a_damaged_project_file_is_a_readable_error_and_is_left_alone(
    qtbot: Any, tmp_path: Path, client: Client, recorder: Recorder
) -> None:
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / ".crewagent.json").write_text("{not json", encoding="utf-8")
    client.open_project.emit(str(folder))
    qtbot.waitUntil(lambda: bool(recorder.of("error")))

    ((request, message),) = recorder.of("error")
    assert request == "open_project"
    assert "damaged" in message and ".crewagent.json" in message
    assert (folder / ".crewagent.json").read_text(encoding="utf-8") == "{not json"


def test_forget_project_removes_it_from_the_recent_list_only(
    qtbot: Any, store: Any, project: Any, isolated_dirs: dict[str, Path], client: Client, recorder: Recorder
) -> None:
    client.forget_project.emit(project.id)
    qtbot.waitUntil(lambda: bool(recorder.of("recent_projects_changed")))

    assert recorder.of("recent_projects_changed") == [((),)]
    saved = json.loads((isolated_dirs["data"] / "projects.json").read_text(encoding="utf-8"))
    assert saved["projects"] == []
    assert (Path(project.root) / ".crewagent.json").is_file()


def test_create_conversation_then_reload_shows_it_first(
    qtbot: Any, store: Any, project: Any, conversation: Any, client: Client, recorder: Recorder
) -> None:
    client.create_conversation.emit(project.id, "run")
    qtbot.waitUntil(lambda: bool(recorder.of("conversation_created")))
    client.load_conversations.emit(project.id)
    qtbot.waitUntil(lambda: bool(recorder.of("conversations_loaded")))

    project_id, created = recorder.of("conversation_created")[0]
    assert project_id == project.id
    assert (created.entry_type, created.active_type, created.message_count) == ("run", "run", 0)
    _, items = recorder.of("conversations_loaded")[0]
    assert [item.id for item in items] == [created.id, conversation.id]


def test_new_reuses_the_empty_draft_while_opening_it_holds_its_lock(
    qtbot: Any, store: Any, project: Any, client: Client, recorder: Recorder
) -> None:
    """Opening a conversation recovers it with its turn lock held (on the turn thread); a "+ New"
    arriving meanwhile took that for a running turn and left a second empty draft behind."""
    client.create_conversation.emit(project.id, "chat")
    qtbot.waitUntil(lambda: len(recorder.of("conversation_created")) == 1)
    _, draft = recorder.of("conversation_created")[0]
    with store.turn_lock(project.id, draft.id, turn=False):  # the open's recovery, in this process
        client.create_conversation.emit(project.id, "chat")
        qtbot.waitUntil(lambda: len(recorder.of("conversation_created")) == 2)
    _, again = recorder.of("conversation_created")[1]
    assert again.id == draft.id
    assert [meta.id for meta in store.list_conversations(project.id)] == [draft.id]


def test_conversations_a_stale_index_hid_come_back_with_a_notice(
    qtbot: Any, store: Any, project: Any, conversation: Any, client: Client, recorder: Recorder
) -> None:
    index = store.log_path(project.id, conversation.id).parent.parent / "index.json"
    index.write_text("[]", encoding="utf-8")
    client.load_conversations.emit(project.id)
    # Both signals: the notice (`error`) is emitted just after the list, not before it.
    qtbot.waitUntil(lambda: bool(recorder.of("conversations_loaded")) and bool(recorder.of("error")))

    _, items = recorder.of("conversations_loaded")[0]
    assert [item.id for item in items] == [conversation.id]
    ((request, message),) = recorder.of("error")
    assert request == "load_conversations" and "brought back" in message and conversation.id in message


def test_a_direct_call_from_another_thread_is_refused(worker_thread: WorkerThread) -> None:
    # Calling a slot directly would run the store on the GUI thread: a bug, reported loudly.
    with pytest.raises(RuntimeError, match="connect a signal"):
        worker_thread.worker.load_recent_projects()


def test_an_unknown_conversation_type_is_a_bug_not_a_user_error(qapp: Any, project: Any) -> None:
    worker = Worker()  # not moved: called on its own (this) thread
    errors: list[tuple[str, str]] = []
    worker.error.connect(lambda request, message: errors.append((request, message)))
    with pytest.raises(ValueError, match="Unknown conversation type"):
        worker.create_conversation(project.id, "poem")
    assert errors == []


def test_stop_ends_the_thread(qapp: Any) -> None:
    host = WorkerThread(Worker()).start()
    assert host.thread.isRunning()
    host.stop()
    assert not host.thread.isRunning()
    host.stop()  # idempotent
