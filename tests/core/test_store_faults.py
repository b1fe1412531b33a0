"""Bad input and failing disks: a clear error, and nothing already stored is lost."""

from __future__ import annotations

import base64
import errno
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.errors import ConversationNotFound, OffloadedOutputError, ProjectError, StoreWriteError
from crewagent.core.messages import ConversationMessage, to_openai
from crewagent.core.store import RuntimeStore
from crewagent.core.store import _fsutil
from crewagent.core.store.log import encode_message

BIG = "".join(f"row {n:05d}: ✓ ok\n" for n in range(5000))  # ~90 KB: offloaded


def _user(text: str) -> ConversationMessage:
    return ConversationMessage.new("user", text)


def _tool(content: str, **fields: Any) -> ConversationMessage:
    return ConversationMessage.new("tool", content, tool_call_id="call_1", **fields)


def _seed(store: RuntimeStore, project_id: str, conversation_id: str, count: int = 5) -> list[ConversationMessage]:
    return [store.append_message(project_id, conversation_id, _user(f"kept message {n} é")) for n in range(count)]


def _assert_intact(data_dir: Path, project_id: str, conversation_id: str, expected: list[ConversationMessage]) -> None:
    """A fresh store loads exactly ``expected`` with nothing damaged."""
    result = RuntimeStore(data_dir).load_messages(project_id, conversation_id)
    assert result.problems == []
    assert [m.to_log_dict() for m in result.messages] == [m.to_log_dict() for m in expected]


def _tool_results(project, conversation_id: str) -> Path:  # type: ignore[no-untyped-def]
    return project.runtime_dir / "state" / "logs" / "tool-results" / conversation_id


def _files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()) if path.exists() else []


# -- disk full ---------------------------------------------------------------------------------


def _in_child_with_file_size_limit(limit: int, action: Callable[[], None]) -> dict[str, Any]:
    """Run ``action`` in a forked child whose files cannot grow past ``limit`` bytes (EFBIG).

    Reports the exception it raised and the results of every os.write the store made.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        report: dict[str, Any] = {"writes": []}
        try:
            os.close(read_fd)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
            real_write = os.write

            def recording_write(fd: int, data: Any) -> int:
                try:
                    written = real_write(fd, data)
                except OSError as exc:
                    report["writes"].append([len(data), f"errno {exc.errno}"])
                    raise
                report["writes"].append([len(data), written])
                return written

            _fsutil.os.write = recording_write  # type: ignore[attr-defined]  # forked child only
            action()
            report["error"] = None
        except StoreWriteError as exc:
            report.update(error="StoreWriteError", message=str(exc), errno=exc.errno)
        except BaseException:
            report.update(error="unexpected", message=traceback.format_exc())
        finally:
            os.write(write_fd, json.dumps(report).encode())
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


def test_disk_full_mid_line_leaves_no_partial_line(store, project, conversation) -> None:
    kept = _seed(store, project.id, conversation.id)
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()
    message = _user("this one does not fit " + "x" * 4000)
    line = encode_message(message)

    def append() -> None:
        RuntimeStore(store.data_dir).append_message(project.id, conversation.id, message)

    report = _in_child_with_file_size_limit(len(before) + len(line) // 2, append)

    assert report["error"] == "StoreWriteError", report
    assert report["errno"] == errno.EFBIG
    assert "disk is full" in report["message"] and str(log_path) in report["message"]
    assert "Nothing already stored was lost" in report["message"]
    # The write really failed part-way through the line: a short write, then EFBIG.
    assert report["writes"][0][0] == len(line)
    assert 0 < report["writes"][0][1] < len(line)
    assert report["writes"][-1][1] == f"errno {errno.EFBIG}"

    assert log_path.read_bytes() == before
    _assert_intact(store.data_dir, project.id, conversation.id, kept)
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == len(kept)

    # Once there is room again, the same message is stored normally.
    store.append_message(project.id, conversation.id, message)
    _assert_intact(store.data_dir, project.id, conversation.id, [*kept, message])


def test_disk_full_while_offloading_logs_no_preview(store, project, conversation) -> None:
    kept = _seed(store, project.id, conversation.id)
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()
    message = _tool(BIG)

    def append() -> None:
        RuntimeStore(store.data_dir).append_message(project.id, conversation.id, message)

    report = _in_child_with_file_size_limit(len(before) + 20_000, append)

    assert report["error"] == "StoreWriteError", report
    assert report["errno"] == errno.EFBIG
    assert "disk is full" in report["message"]
    assert log_path.read_bytes() == before  # no preview pointing at a file that was never written
    assert _files_under(_tool_results(project, conversation.id)) == []  # no half-written temp file
    _assert_intact(store.data_dir, project.id, conversation.id, kept)


def test_dev_full_gives_a_disk_full_error(store, project, conversation) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    log_path = store.log_path(project.id, conversation.id)
    log_path.unlink()
    log_path.symlink_to("/dev/full")
    with pytest.raises(StoreWriteError, match="disk is full") as info:
        store.append_message(project.id, conversation.id, _user("nowhere to go"))
    assert info.value.errno == errno.ENOSPC
    assert store.get_conversation(project.id, conversation.id).messageCount == 0


# -- permission denied -------------------------------------------------------------------------


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """chattr +i: even root gets EPERM writing it (the read-only situation that holds for root)."""
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("chattr is not available")
    done = subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not supported here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def test_read_only_log_is_a_clear_error(store, project, conversation) -> None:
    kept = _seed(store, project.id, conversation.id)
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()
    with _immutable(log_path):
        with pytest.raises(StoreWriteError, match="permission denied") as info:
            store.append_message(project.id, conversation.id, _user("refused"))
        assert info.value.errno in (errno.EPERM, errno.EACCES)
        assert str(log_path) in str(info.value)
        # Reading still works while the file cannot be written.
        _assert_intact(store.data_dir, project.id, conversation.id, kept)
    assert log_path.read_bytes() == before
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == len(kept)


def test_read_only_offload_folder_logs_no_preview(store, project, conversation) -> None:
    kept = _seed(store, project.id, conversation.id)
    folder = _tool_results(project, conversation.id)
    folder.mkdir(parents=True)
    before = store.log_path(project.id, conversation.id).read_bytes()
    with _immutable(folder):
        with pytest.raises(StoreWriteError, match="permission denied"):
            store.append_message(project.id, conversation.id, _tool(BIG))
    assert store.log_path(project.id, conversation.id).read_bytes() == before
    assert _files_under(folder) == []
    _assert_intact(store.data_dir, project.id, conversation.id, kept)


def test_read_only_index_does_not_fail_an_append_that_was_stored(store, project, conversation) -> None:
    kept = _seed(store, project.id, conversation.id, 2)
    with _immutable(project.runtime_dir / "conversations"):  # index.json cannot be replaced
        stored = store.append_message(project.id, conversation.id, _user("stored even so"))
        _assert_intact(store.data_dir, project.id, conversation.id, [*kept, stored])
    # The index was left behind while read-only; the next load brings the count up to date.
    fresh = RuntimeStore(store.data_dir)
    assert len(fresh.load_messages(project.id, conversation.id).messages) == 3
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == 3


def test_listing_with_a_read_only_index_logs_what_it_could_not_save(store, project, conversation, caplog) -> None:
    """Issue 10: the store says what it swallows; the listing still counts right."""
    _seed(store, project.id, conversation.id, 2)
    store.flush()
    with open(store.log_path(project.id, conversation.id), "ab") as handle:
        handle.write(encode_message(_user("written elsewhere")))
    with _immutable(project.runtime_dir / "conversations"):  # index.json cannot be replaced
        with caplog.at_level(logging.WARNING, logger="crewagent.core.store.runtime"):
            metas = RuntimeStore(store.data_dir).list_conversations(project.id)
    assert [meta.messageCount for meta in metas] == [3]
    assert "not saved while listing" in caplog.text and "permission denied" in caplog.text.lower()


class _FailingOs:
    """The os module as _fsutil sees it, with writes to one file failing with EACCES part-way."""

    def __init__(self, target: Path, *, fail_open: bool):
        self._target = str(target)
        self._fail_open = fail_open
        self._target_fds: set[int] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: Any, flags: int, mode: int = 0o777) -> int:
        if str(path) == self._target and self._fail_open:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        fd = os.open(path, flags, mode)
        if str(path) == self._target:
            self._target_fds.add(fd)
        return fd

    def write(self, fd: int, data: Any) -> int:
        if fd in self._target_fds:
            self._target_fds.discard(fd)
            os.write(fd, bytes(data[: len(data) // 2]))  # half the line reaches the file...
            raise PermissionError(errno.EACCES, "Permission denied")  # ...then the write is refused
        return os.write(fd, data)


@pytest.mark.parametrize("fail_open", [True, False], ids=["on-open", "part-way"])
def test_permission_denied_injected_at_the_os_boundary(
    store, project, conversation, monkeypatch: pytest.MonkeyPatch, fail_open: bool
) -> None:
    kept = _seed(store, project.id, conversation.id)
    log_path = store.log_path(project.id, conversation.id)
    before = log_path.read_bytes()

    with monkeypatch.context() as patch:
        patch.setattr(_fsutil, "os", _FailingOs(log_path, fail_open=fail_open))
        with pytest.raises(StoreWriteError, match="permission denied") as info:
            store.append_message(project.id, conversation.id, _user("refused " * 50))
    assert info.value.errno == errno.EACCES
    assert "Nothing already stored was lost" in str(info.value)

    assert log_path.read_bytes() == before
    _assert_intact(store.data_dir, project.id, conversation.id, kept)
    after = store.append_message(project.id, conversation.id, _user("works again"))
    _assert_intact(store.data_dir, project.id, conversation.id, [*kept, after])


# -- damaged log lines -------------------------------------------------------------------------


def test_damaged_lines_are_skipped_reported_and_kept_aside(store, project, conversation) -> None:
    good = [_user(f"good {n}") for n in range(4)]
    valid_json_wrong_role = json.dumps({"id": "m1", "role": "robot", "createdAt": "2026-01-01T00:00:00Z"}).encode()
    lines: list[bytes] = [
        encode_message(good[0]).rstrip(b"\n"),  # 1
        b'{"id": "torn", "role": "user", "content": "cut o',  # 2 truncated in the middle
        encode_message(good[1]).rstrip(b"\n"),  # 3
        b"\xff\xfe not utf-8 \xc3\x28",  # 4
        b"",  # 5 blank: ignored, not a problem
        valid_json_wrong_role,  # 6 schema-invalid
        b"[1, 2, 3]",  # 7 JSON but not an object
        b'{"role": "user", "content": "no id"}',  # 8 missing required fields
        encode_message(good[2]).rstrip(b"\n"),  # 9
        encode_message(good[3]).rstrip(b"\n"),  # 10
        b'{"id": "tail", "role": "assis',  # 11 torn tail, no newline
    ]
    log_path = store.log_path(project.id, conversation.id)
    raw = b"\n".join(lines)
    log_path.write_bytes(raw)

    result = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id)

    assert [m.id for m in result.messages] == [m.id for m in good]
    assert result.skipped_lines == [2, 4, 6, 7, 8, 11]
    reasons = {problem.line: problem.reason for problem in result.problems}
    assert "torn" in reasons[2] and "torn" in reasons[11]
    assert "UTF-8" in reasons[4]
    assert "role" in reasons[6]
    assert "not a valid message" in reasons[7] and "not a valid message" in reasons[8]
    summary = result.problem_summary()
    assert "6 damaged line(s)" in summary and "2, 4, 6, 7, 8, 11" in summary and "messages.corrupt.jsonl" in summary
    assert log_path.read_bytes() == raw  # loading never rewrites the log

    side = [json.loads(line) for line in (log_path.parent / "messages.corrupt.jsonl").read_text("utf-8").splitlines()]
    assert [record["line"] for record in side] == [2, 4, 6, 7, 8, 11]
    assert side[0]["raw"] == lines[1].decode()
    assert base64.b64decode(side[1]["rawBase64"]) == lines[3]
    assert side[2]["raw"] == valid_json_wrong_role.decode()

    # The next append after the torn tail starts on a fresh line, and everything still loads.
    follow = store.append_message(project.id, conversation.id, _user("after the damage"))
    assert log_path.read_bytes() == raw + b"\n" + encode_message(follow)
    again = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id)
    assert [m.id for m in again.messages] == [*(m.id for m in good), follow.id]
    assert again.skipped_lines == [2, 4, 6, 7, 8, 11]


def test_a_log_of_nothing_but_garbage_loads_empty_and_stays_usable(store, project, conversation) -> None:
    log_path = store.log_path(project.id, conversation.id)
    log_path.write_bytes(os.urandom(4096).replace(b"\n", b"\x00") + b"\n" + b"\x00" * 100)
    result = store.load_messages(project.id, conversation.id)
    assert result.messages == []
    assert result.skipped_lines == [1, 2]
    message = store.append_message(project.id, conversation.id, _user("fresh start"))
    assert [m.id for m in store.load_messages(project.id, conversation.id).messages] == [message.id]


# -- damaged index.json ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage", [b"[{\"id\": \"conv_", b"\xff\xff", b'{"not": "a list"}', b'[{"title": "no id"}]'],
    ids=["truncated", "not-utf8", "not-a-list", "invalid-entry"],
)
def test_corrupt_index_is_rebuilt_from_the_conversation_folders(store, project, damage: bytes) -> None:
    alpha = store.create_conversation(project.id, title="Alpha plans")
    beta = store.create_conversation(project.id, entry_type="agent", agentId="writer")
    store.rename_conversation(project.id, beta.id, "Beta renamed")
    store.update_conversation(project.id, beta.id, activeType="run")
    untitled = store.create_conversation(project.id)
    for n in range(3):
        store.append_message(project.id, alpha.id, _user(f"a{n}"))
    store.append_message(project.id, beta.id, _tool(BIG))
    store.append_message(project.id, untitled.id, _user("What is the capital of Peru?"))
    (project.runtime_dir / "conversations" / untitled.id / "meta.json").unlink()  # no metadata copy left

    index_path = project.runtime_dir / "conversations" / "index.json"
    index_path.write_bytes(damage)

    fresh = RuntimeStore(store.data_dir)
    metas = {meta.id: meta for meta in fresh.list_conversations(project.id)}

    assert set(metas) == {alpha.id, beta.id, untitled.id}
    assert (metas[alpha.id].title, metas[alpha.id].messageCount) == ("Alpha plans", 3)
    assert (metas[beta.id].title, metas[beta.id].messageCount) == ("Beta renamed", 1)
    assert (metas[beta.id].entryType, metas[beta.id].activeType, metas[beta.id].agentId) == ("agent", "run", "writer")
    assert (metas[untitled.id].title, metas[untitled.id].messageCount) == ("What is the capital of Peru?", 1)

    kept_aside = list(index_path.parent.glob("index.json.corrupt-*"))
    assert len(kept_aside) == 1 and kept_aside[0].read_bytes() == damage
    assert [entry["id"] for entry in json.loads(index_path.read_text("utf-8"))]  # a valid index again
    # The conversations themselves are untouched and usable.
    beta_msg = fresh.load_messages(project.id, beta.id).messages[0]
    assert fresh.read_full_output(project.id, beta_msg) == BIG
    fresh.append_message(project.id, alpha.id, _user("a3"))
    assert RuntimeStore(store.data_dir).get_conversation(project.id, alpha.id).messageCount == 4


# -- offloaded outputs -------------------------------------------------------------------------


def test_missing_offload_file_keeps_the_preview_and_says_it_is_missing(store, project, conversation) -> None:
    stored = store.append_message(project.id, conversation.id, _tool(BIG))
    after = store.append_message(project.id, conversation.id, _user("next"))
    (_tool_results(project, conversation.id) / f"{stored.id}.json").unlink()

    fresh = RuntimeStore(store.data_dir)
    result = fresh.load_messages(project.id, conversation.id)
    assert result.problems == []
    assert [m.id for m in result.messages] == [stored.id, after.id]
    loaded = result.messages[0]
    assert loaded.content == stored.content and loaded.text.startswith(BIG[:500])
    with pytest.raises(OffloadedOutputError, match="missing") as info:
        fresh.read_full_output(project.id, loaded)
    assert stored.fullOutputPath in str(info.value)
    assert "preview" in str(info.value)


def test_tampered_offload_file_fails_its_checksum(store, project, conversation) -> None:
    stored = store.append_message(project.id, conversation.id, _tool(BIG))
    path = _tool_results(project, conversation.id) / f"{stored.id}.json"
    path.write_bytes(path.read_bytes().replace(b"row 04999", b"row 0499X"))

    loaded = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id).messages[0]
    with pytest.raises(OffloadedOutputError, match="checksum"):
        store.read_full_output(project.id, loaded)


def test_offload_path_pointing_outside_state_is_refused(store, project, conversation, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read", "utf-8")
    forged = _tool("preview", fullOutputPath="@state/../../../../../../../../" + str(secret).lstrip("/"))
    store.append_message(project.id, conversation.id, forged)
    loaded = store.load_messages(project.id, conversation.id).messages[0]
    with pytest.raises(OffloadedOutputError, match="outside the state folder"):
        store.read_full_output(project.id, loaded)


# -- legacy messages.json ----------------------------------------------------------------------


def test_legacy_messages_json_is_migrated_once(store, project, conversation) -> None:
    folder = store.log_path(project.id, conversation.id).parent
    store.log_path(project.id, conversation.id).unlink()  # the original app wrote only messages.json
    legacy_items: list[Any] = [
        {"id": "u1", "role": "user", "content": "hello", "timestamp": "2024-05-01T10:00:00Z"},
        {"id": "a1", "role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        "not an object",
        {"id": "t1", "role": "tool", "tool_call_id": "c1", "content": BIG, "legacyExtra": {"k": [1, 2]}},
        {"id": "x1", "role": "wizard", "content": "bad role"},
        {"role": "assistant", "content": "no id or time"},
    ]
    original = json.dumps(legacy_items, ensure_ascii=False).encode("utf-8")
    (folder / "messages.json").write_bytes(original)

    fresh = RuntimeStore(store.data_dir)
    result = fresh.load_messages(project.id, conversation.id)

    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert [m.id for m in result.messages[:3]] == ["u1", "a1", "t1"]
    assert result.messages[0].createdAt == "2024-05-01T10:00:00Z"
    assert result.messages[1].content is None and result.messages[1].tool_calls[0].id == "c1"  # type: ignore[index]
    tool = result.messages[2]
    assert tool.is_offloaded and fresh.read_full_output(project.id, tool) == BIG
    assert tool.legacyExtra == {"k": [1, 2]}  # type: ignore[attr-defined]
    assert result.messages[3].id and result.messages[3].createdAt

    # The load that migrated says so, and names the malformed items it skipped.
    assert result.migrated_from_legacy
    assert result.skipped_lines == [3, 5]
    assert "not an object" in result.problems[0].reason
    assert "role" in result.problems[1].reason
    assert "2 damaged" in result.problem_summary()

    assert not (folder / "messages.json").exists()
    assert (folder / "messages.json.bak").read_bytes() == original
    assert (folder / "messages.jsonl").is_file()
    side = [json.loads(line) for line in (folder / "messages.corrupt.jsonl").read_text("utf-8").splitlines()]
    assert [record["line"] for record in side] == [3, 5]  # the two malformed items, by position
    assert fresh.get_conversation(project.id, conversation.id).messageCount == 4

    # A second load reads the migrated log and does not migrate again.
    log_before = (folder / "messages.jsonl").read_bytes()
    again = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id)
    assert not again.migrated_from_legacy and again.problems == []
    assert [m.to_log_dict() for m in again.messages] == [m.to_log_dict() for m in result.messages]
    assert (folder / "messages.jsonl").read_bytes() == log_before
    assert (folder / "messages.json.bak").read_bytes() == original
    assert not (folder / "messages.json").exists()


def test_legacy_file_that_is_not_an_array_is_not_fatal(store, project, conversation) -> None:
    folder = store.log_path(project.id, conversation.id).parent
    store.log_path(project.id, conversation.id).unlink()
    (folder / "messages.json").write_bytes(b'{"messages": "oops"')
    result = store.load_messages(project.id, conversation.id)
    assert result.messages == []
    assert result.migrated_from_legacy
    assert len(result.problems) == 1 and "legacy messages.json unreadable" in result.problems[0].reason
    assert (folder / "messages.json.bak").read_bytes() == b'{"messages": "oops"'
    message = store.append_message(project.id, conversation.id, _user("carry on"))
    assert [m.id for m in store.load_messages(project.id, conversation.id).messages] == [message.id]


# -- delete ------------------------------------------------------------------------------------


def _conversation_with_everything(store, project, title: str):  # type: ignore[no-untyped-def]
    meta = store.create_conversation(project.id, title=title)
    store.append_message(project.id, meta.id, _user("hi"))
    store.append_message(project.id, meta.id, _tool(BIG))
    folder = store.log_path(project.id, meta.id).parent
    (folder / "agents").mkdir()
    (folder / "agents" / "agent_x.jsonl").write_bytes(encode_message(_user("subagent work")))
    assert _files_under(_tool_results(project, meta.id))
    return meta, folder


def test_delete_removes_index_entry_log_sidechains_and_offloaded_outputs(store, project) -> None:
    doomed, doomed_folder = _conversation_with_everything(store, project, "doomed")
    kept, kept_folder = _conversation_with_everything(store, project, "kept")
    kept_files = _files_under(kept_folder) + _files_under(_tool_results(project, kept.id))

    store.delete_conversation(project.id, doomed.id)

    assert not doomed_folder.exists()
    assert not _tool_results(project, doomed.id).exists()
    index = json.loads((project.runtime_dir / "conversations" / "index.json").read_text("utf-8"))
    assert [entry["id"] for entry in index] == [kept.id]
    # The other conversation is untouched.
    assert _files_under(kept_folder) + _files_under(_tool_results(project, kept.id)) == kept_files
    kept_tool = store.load_messages(project.id, kept.id).messages[1]
    assert store.read_full_output(project.id, kept_tool) == BIG


def test_crash_during_delete_never_resurrects_the_conversation(store, project) -> None:
    doomed, doomed_folder = _conversation_with_everything(store, project, "doomed")
    kept = store.create_conversation(project.id, title="kept")
    # A crash after the marker and the index update, before the files were removed.
    (doomed_folder / ".deleted").touch()
    index_path = project.runtime_dir / "conversations" / "index.json"
    index_path.write_text(json.dumps([e for e in json.loads(index_path.read_text("utf-8")) if e["id"] != doomed.id]))

    for rebuild in ("corrupt", "missing"):
        if rebuild == "corrupt":
            index_path.write_bytes(b"{garbage")
        else:
            index_path.unlink()
        assert [m.id for m in RuntimeStore(store.data_dir).list_conversations(project.id)] == [kept.id]

    # The rebuild also finished the interrupted removal: nothing of it is left on disk.
    fresh = RuntimeStore(store.data_dir)
    with pytest.raises(ConversationNotFound):
        fresh.load_messages(project.id, doomed.id)
    assert not doomed_folder.exists()
    assert not _tool_results(project, doomed.id).exists()
    with pytest.raises(ConversationNotFound):
        fresh.delete_conversation(project.id, doomed.id)
    assert [m.id for m in RuntimeStore(store.data_dir).list_conversations(project.id)] == [kept.id]


def test_crash_before_index_update_lets_delete_finish(store, project) -> None:
    doomed, doomed_folder = _conversation_with_everything(store, project, "doomed")
    (doomed_folder / ".deleted").touch()  # the crash came right after the marker

    fresh = RuntimeStore(store.data_dir)
    with pytest.raises(ConversationNotFound):
        fresh.load_messages(project.id, doomed.id)
    fresh.delete_conversation(project.id, doomed.id)
    assert fresh.list_conversations(project.id) == []
    assert not doomed_folder.exists()
    assert not _tool_results(project, doomed.id).exists()


# -- hostile ids and paths ---------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../x", "..", "a/b", "/etc", "conv\x00x", "", "x" * 200])
def test_hostile_conversation_ids_are_refused(store, project, tmp_path: Path, bad_id: str) -> None:
    store.create_conversation(project.id, title="a real one")  # the project's runtime folder exists
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for action in (
        lambda: store.load_messages(project.id, bad_id),
        lambda: store.append_message(project.id, bad_id, _user("x")),
        lambda: store.delete_conversation(project.id, bad_id),
        lambda: store.log_path(project.id, bad_id),
        lambda: store.rename_conversation(project.id, bad_id, "t"),
    ):
        with pytest.raises(ConversationNotFound):
            action()
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("bad_id", ["../x", "proj/../../x", ""])
def test_hostile_project_ids_are_refused(store, bad_id: str) -> None:
    with pytest.raises(ProjectError):
        store.list_conversations(bad_id)
    with pytest.raises(ProjectError):
        store.create_conversation(bad_id)


@pytest.mark.parametrize("message_id", ["../../../../escape", "a/b/c", "..", "/abs/path", "sp ace\\back"])
def test_message_ids_from_imports_cannot_steer_the_offload_file(store, project, conversation, message_id) -> None:
    message = ConversationMessage(
        id=message_id, role="tool", createdAt="2026-01-01T00:00:00Z", content=BIG, tool_call_id="c"
    )
    runtime_before = {p for p in store.data_dir.rglob("*") if p.is_file()}
    stored = store.append_message(project.id, conversation.id, message)

    results_root = (project.runtime_dir / "state" / "logs" / "tool-results").resolve()
    created = {p for p in store.data_dir.rglob("*") if p.is_file()} - runtime_before
    offload_files = [p for p in created if p.suffix == ".json" and results_root in p.resolve().parents]
    assert len(offload_files) == 1
    assert offload_files[0].parent == results_root / conversation.id
    assert stored.fullOutputPath == f"@state/logs/tool-results/{conversation.id}/{offload_files[0].name}"
    assert ".." not in stored.fullOutputPath and "/abs" not in stored.fullOutputPath
    assert not (project.runtime_dir / "escape").exists()

    loaded = RuntimeStore(store.data_dir).load_messages(project.id, conversation.id).messages[0]
    assert loaded.id == message_id
    assert store.read_full_output(project.id, loaded) == BIG
    assert to_openai(loaded, content=store.read_full_output(project.id, loaded))["content"] == BIG


def test_project_root_that_is_a_file(store, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("just a file", "utf-8")
    for action in (lambda: store.create_project(target), lambda: store.open_project(target, create=True)):
        with pytest.raises(ProjectError, match="is a file"):
            action()
    assert target.read_text("utf-8") == "just a file"
    assert store.recent_projects() == []
