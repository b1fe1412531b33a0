"""Damaged and unreadable stored files (issue 15, items 4-7): reported, skipped, never a crash."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from crewagent.core.errors import ProjectError, SetupError, StoreReadError
from crewagent.core.jsonparse import DamagedJsonError, parse_json
from crewagent.core.messages import ConversationMessage, new_message_id, utc_now_iso
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from crewagent.core.store.log import QUARANTINE_NAME

DEEP = b"[" * 1500


def _message(text: str) -> ConversationMessage:
    return ConversationMessage(id=new_message_id(), createdAt=utc_now_iso(), role="user", content=text)


@pytest.mark.parametrize(
    "data",
    [DEEP, DEEP.decode(), b'{"a":' + b"[" * 100_000, b"\xff\xfe{}", b"", b"[1,", b'{"a": 1} trailing'],
)
def test_parse_json_turns_every_failure_into_a_value_error(data: bytes | str) -> None:
    with pytest.raises(DamagedJsonError) as info:
        parse_json(data)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_parse_json_reads_what_json_loads_reads() -> None:
    text = json.dumps({"a": [1, 2.5, None, True, "ü 你好"], "big": 10**30, "nested": [[[{}]]]})
    assert parse_json(text) == json.loads(text)
    assert parse_json(text.encode()) == json.loads(text)


def test_a_deeply_nested_log_line_is_quarantined_and_skipped(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    store.append_message(project.id, conversation.id, _message("before"))
    log = store.log_path(project.id, conversation.id)
    with open(log, "ab") as handle:
        handle.write(DEEP + b"\n")
    store.append_message(project.id, conversation.id, _message("after"))

    loaded = store.load_messages(project.id, conversation.id)

    assert [m.text for m in loaded.messages] == ["before", "after"]
    assert loaded.skipped_lines == [2]
    assert "nested" in loaded.problems[0].reason or "recursion" in loaded.problems[0].reason
    quarantined = [json.loads(line) for line in (log.parent / QUARANTINE_NAME).read_text().splitlines()]
    assert quarantined[0]["line"] == 2 and quarantined[0]["raw"] == DEEP.decode()


def test_a_deep_legacy_messages_json_is_reported_not_fatal(store: RuntimeStore, project, conversation) -> None:  # type: ignore[no-untyped-def]
    folder = store.log_path(project.id, conversation.id).parent
    (folder / "messages.jsonl").unlink()
    (folder / "messages.json").write_bytes(DEEP)
    loaded = store.load_messages(project.id, conversation.id)
    assert loaded.messages == [] and loaded.migrated_from_legacy
    assert "legacy messages.json unreadable" in loaded.problems[0].reason


def test_a_deep_settings_file_is_set_aside_for_defaults(isolated_dirs: dict[str, Path]) -> None:
    path = isolated_dirs["config"] / "settings.json"
    path.write_bytes(DEEP)
    settings_store = SettingsStore()
    assert settings_store.load().llm.provider == "demo"
    assert settings_store.problems and "damaged" in settings_store.problems[0]
    assert (isolated_dirs["config"] / "settings.json.corrupt").read_bytes() == DEEP


def test_a_settings_folder_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "config-file"
    file.write_text("not a folder")
    with pytest.raises(SetupError, match="is a file, not a folder"):
        SettingsStore(file).load()
    assert file.read_text() == "not a folder"


@pytest.mark.parametrize("sub", ["", "below"])
def test_a_data_folder_that_is_a_file_is_an_error(tmp_path: Path, sub: str) -> None:
    file = tmp_path / "data-file"
    file.write_text("x")
    with pytest.raises(SetupError, match=f"{file} is a file, not a folder"):
        RuntimeStore(file / sub if sub else file)


def test_an_empty_project_path_is_refused(store: RuntimeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for path in ("", "  "):
        with pytest.raises(ProjectError, match="project path is empty"):
            store.open_project(path, create=True)
    assert not (tmp_path / ".crewagent.json").exists()


def test_a_log_replaced_by_a_folder_leaves_the_project_usable(store: RuntimeStore, project) -> None:  # type: ignore[no-untyped-def]
    good = store.create_conversation(project.id, title="good")
    bad = store.create_conversation(project.id, title="bad")
    store.append_message(project.id, good.id, _message("kept"))
    log = store.log_path(project.id, bad.id)
    log.unlink()
    log.mkdir()

    fresh = RuntimeStore(store.data_dir)  # nothing cached
    assert {meta.title for meta in fresh.list_conversations(project.id)} == {"good", "bad"}
    assert [m.text for m in fresh.load_messages(project.id, good.id).messages] == ["kept"]
    with pytest.raises(StoreReadError, match=f"Cannot read {log}: it is a folder"):
        fresh.load_messages(project.id, bad.id)
    with pytest.raises(StoreReadError, match="it is a folder"):
        fresh.load_newest(project.id, bad.id, 10)


def test_a_stale_index_is_reconciled_with_the_conversation_folders(store: RuntimeStore, project, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    first = store.create_conversation(project.id, title="first")
    hidden = store.create_conversation(project.id, title="hidden one")
    store.append_message(project.id, hidden.id, _message("still here"))
    store.flush()
    index_path = store.log_path(project.id, hidden.id).parent.parent / "index.json"
    entries = json.loads(index_path.read_text())
    index_path.write_text(json.dumps([e for e in entries if e["id"] == first.id]))

    fresh = RuntimeStore(store.data_dir)
    with caplog.at_level(logging.WARNING, logger="crewagent"):
        metas = {meta.id: meta for meta in fresh.list_conversations(project.id)}

    assert set(metas) == {first.id, hidden.id}
    assert metas[hidden.id].title == "hidden one"  # from its meta.json
    assert metas[hidden.id].messageCount == 1
    assert [m.text for m in fresh.load_messages(project.id, hidden.id).messages] == ["still here"]
    notices = fresh.take_notices()
    assert len(notices) == 1 and hidden.id in notices[0] and "brought back" in notices[0]
    assert notices[0] in caplog.text
    assert fresh.take_notices() == []
    # The index on disk was repaired: the next process sees it without a notice.
    assert {e["id"] for e in json.loads(index_path.read_text())} == {first.id, hidden.id}
    again = RuntimeStore(store.data_dir)
    assert len(again.list_conversations(project.id)) == 2 and again.take_notices() == []


def test_an_empty_index_hides_nothing_and_a_deleted_folder_stays_deleted(store: RuntimeStore, project) -> None:  # type: ignore[no-untyped-def]
    kept = store.create_conversation(project.id, title="kept")
    gone = store.create_conversation(project.id, title="gone")
    gone_folder = store.log_path(project.id, gone.id).parent
    (gone_folder / ".deleted").touch()  # a deletion a crash interrupted
    index_path = gone_folder.parent / "index.json"
    index_path.write_text("[]")

    fresh = RuntimeStore(store.data_dir)
    assert [meta.id for meta in fresh.list_conversations(project.id)] == [kept.id]
    assert not gone_folder.exists()  # the interrupted deletion was finished
    assert fresh.get_conversation(project.id, kept.id).title == "kept"


def test_a_conversation_without_meta_is_brought_back_from_its_log(store: RuntimeStore, project) -> None:  # type: ignore[no-untyped-def]
    conv = store.create_conversation(project.id)
    store.append_message(project.id, conv.id, _message("What is the plan?"))
    folder = store.log_path(project.id, conv.id).parent
    (folder / "meta.json").unlink()
    (folder.parent / "index.json").write_text("[]")
    fresh = RuntimeStore(store.data_dir)
    (meta,) = fresh.list_conversations(project.id)
    assert meta.id == conv.id and meta.title == "What is the plan?"


def test_deep_json_from_the_model_or_a_tool_is_an_error_value_not_a_crash(tmp_path: Path) -> None:
    """The other readers of untrusted JSON: tool arguments, tool results, export, checkpoints, audit."""
    from crewagent.core.context.compression import outcome
    from crewagent.core.store.checkpoint import CHECKPOINT_NAME, read_checkpoint
    from crewagent.core.tools.audit import read_audit
    from crewagent.core.tools.registry import parse_arguments

    deep = '{"a":' + "[" * 1500
    arguments, problem = parse_arguments(deep)
    assert arguments is None and problem.startswith("are not valid JSON")
    assert outcome(deep).startswith("ok: ")
    (tmp_path / CHECKPOINT_NAME).write_text(deep)
    assert read_checkpoint(tmp_path) is None
    audit = tmp_path / "audit.jsonl"
    audit.write_text(deep + "\n" + json.dumps({"tool": "fs.read"}) + "\n")
    assert read_audit(audit) == [{"tool": "fs.read"}]
