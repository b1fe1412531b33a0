"""runs/index.json: one run per line, a damaged entry hides nothing else, a lookup finds its run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from crewagent.core.runs import RunIndex, RunMetadata
from crewagent.core.runs.index import RunNotFound


def _run(run_id: str, **fields: object) -> RunMetadata:
    base = {"runId": run_id, "conversationId": "conv_1", "packageId": "notes@1", "workflowId": "notes"}
    return RunMetadata.model_validate({**base, "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z", **fields})


def test_the_index_is_json_with_one_run_per_line_and_round_trips(tmp_path: Path) -> None:
    index = RunIndex(tmp_path)
    runs = [_run("run_a", packageName="Notes ✎", lastError={"code": "E", "message": "line\nbreak"}), _run("run_b")]
    for run in runs:
        index.add(run)
    index.update("run_a", phase="waiting-user", paused=False)

    text = index.path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 4
    assert [json.loads(line.rstrip(","))["runId"] for line in lines[1:-1]] == ["run_a", "run_b"]
    assert json.loads(text) == [run.model_dump(mode="json") for run in index.list()]
    got = index.get("run_a")
    assert (got.phase, got.packageName, got.lastError, got.paused) == ("waiting-user", "Notes ✎", {"code": "E", "message": "line\nbreak"}, False)  # type: ignore[attr-defined]


def test_a_lookup_skips_damaged_entries_and_finds_its_run(tmp_path: Path) -> None:
    index = RunIndex(tmp_path)
    good = _run("run_b", phase="failed").model_dump(mode="json")
    index.folder.mkdir(parents=True)
    damaged = {"runId": "run_b", "phase": "no such phase"}
    index.path.write_text(json.dumps([{"runId": "run_a"}, damaged, "not a run", good]), encoding="utf-8")

    assert index.get("run_b").phase == "failed"
    assert [run.runId for run in index.list()] == ["run_b"]
    with pytest.raises(RunNotFound):
        index.get("run_a")  # only a damaged entry
    with pytest.raises(RunNotFound):
        index.get("run_c")


def test_threads_adding_runs_at_once_lose_none(tmp_path: Path) -> None:
    # The index is read, changed and replaced under the runs folder's lock, shared by the
    # process's threads: no thread's change is lost to another's replace.
    import threading

    def add(worker: int) -> None:
        for n in range(10):
            RunIndex(tmp_path).add(_run(f"run_{worker}_{n}"))

    threads = [threading.Thread(target=add, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(RunIndex(tmp_path).list()) == 40


def test_another_holder_of_the_lock_file_keeps_a_change_waiting(tmp_path: Path) -> None:
    # The lock is the runs folder's .lock, shared with other processes (and with filelock, which
    # older builds used): while someone else holds it, a change waits, then goes through.
    import threading

    from filelock import FileLock

    index = RunIndex(tmp_path)
    index.add(_run("run_a"))
    other = FileLock(index.folder / ".lock")  # a second open of the file: flock treats it as another owner
    other.acquire()
    done = threading.Event()

    def change() -> None:
        index.update("run_a", phase="waiting-user")
        done.set()

    thread = threading.Thread(target=change)
    thread.start()
    try:
        assert not done.wait(0.3), "the change did not wait for the lock"
        assert index.path.read_text(encoding="utf-8").count('"phase": "idle"') == 1
    finally:
        other.release()
    thread.join(10)
    assert done.is_set() and RunIndex(tmp_path).get("run_a").phase == "waiting-user"


@pytest.mark.skipif(sys.platform == "win32", reason="on Windows a reader takes the lock (an open file blocks the replace)")
def test_a_lookup_does_not_wait_for_another_holder_of_the_lock(tmp_path: Path) -> None:
    # Every Run-mode turn looks its run up, and `crewagent runs` lists them: on POSIX a read takes
    # no lock (writers replace the file whole), so neither waits for another process's change.
    import threading

    from filelock import FileLock

    index = RunIndex(tmp_path)
    index.add(_run("run_a"))
    other = FileLock(index.folder / ".lock")
    other.acquire()
    found: list[str] = []
    done = threading.Event()

    def look() -> None:
        found.append(index.get("run_a").phase)
        found.append(str(len(index.list())))
        done.set()

    thread = threading.Thread(target=look)
    thread.start()
    try:
        assert done.wait(20), "a lookup waited for the lock"
    finally:
        other.release()
        thread.join(40)
    assert found == ["idle", "1"]


def test_reads_beside_a_writer_replacing_the_index_always_see_a_whole_index(tmp_path: Path) -> None:
    import threading

    index = RunIndex(tmp_path)
    for n in range(30):  # an index of some size, so that a torn read would show
        index.add(_run(f"run_{n:02}", currentNodeId="x" * 200))
    stop = threading.Event()

    def write() -> None:
        for n in range(60):
            index.update("run_15", phase="waiting-user" if n % 2 else "idle")
        stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = set()
    while not stop.is_set():
        seen.add(index.get("run_15").phase)
        assert len(index.list()) == 30
    writer.join(60)
    assert seen <= {"idle", "waiting-user"}


def test_the_lock_is_reentrant_in_a_thread(tmp_path: Path) -> None:
    index = RunIndex(tmp_path)
    with index._locked(), index._locked():
        index.add(_run("run_a"))
    assert [run.runId for run in index.list()] == ["run_a"]



def test_a_lookup_parses_the_index_again_only_when_its_bytes_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crewagent.core.runs import index as index_module

    index = RunIndex(tmp_path)
    for name in ("run_a", "run_b"):
        index.add(_run(name))
    parses: list[bytes] = []
    real_parse = index_module.parse_json

    def counting(raw: bytes) -> object:
        parses.append(raw)
        return real_parse(raw)

    monkeypatch.setattr(index_module, "parse_json", counting)
    assert index.get("run_a").conversationId == "conv_1"
    assert RunIndex(tmp_path).get("run_b").conversationId == "conv_1"  # another RunIndex of the folder
    assert [run.runId for run in index.list()] == ["run_a", "run_b"]
    assert parses == []  # the index this process wrote: its entries are known

    index.path.write_bytes(index.path.read_bytes())  # the same bytes, rewritten by someone else
    assert index.get("run_a").conversationId == "conv_1"
    assert parses == []

    # Other bytes of the same size and the same times (a rewrite within one tick of a coarse
    # clock): the lookup sees them, as it compares the bytes, not the file's size or times.
    info = index.path.stat()
    text = index.path.read_text(encoding="utf-8")
    replacement = index.path.with_name("replacement.json")
    replacement.write_text(text.replace('"conv_1"', '"conv_2"', 1), encoding="utf-8")
    os.utime(replacement, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(replacement, index.path)
    assert (index.path.stat().st_size, index.path.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)
    assert index.get("run_a").conversationId == "conv_2"
    assert len(parses) == 1
    index.update("run_b", phase="waiting-user")  # a change made here reads the index it parsed
    assert len(parses) == 1 and [run.phase for run in RunIndex(tmp_path).list()] == ["idle", "waiting-user"]


def test_a_change_encodes_only_the_entries_it_changed_and_writes_what_a_full_dump_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run's first turn changes its phase: one entry of an index holding the project's whole
    # history. The lines of the other runs, written by this process, are not encoded again, and
    # the file is byte for byte what encoding every entry would give.
    index = RunIndex(tmp_path)
    for n in range(30):
        index.add(_run(f"run_{n:02}", packageName="Notes ✎" if n % 3 else "Notes"))
    encoded: list[object] = []
    real_encode = json.JSONEncoder.encode

    def counting(self: json.JSONEncoder, value: object) -> str:
        encoded.append(value)
        return real_encode(self, value)

    monkeypatch.setattr(json.JSONEncoder, "encode", counting)
    index.update("run_07", phase="waiting-user", lastError={"code": "E", "message": "line\nbreak"})
    index.add(_run("run_30"))
    index.update("run_30", phase="completed")
    assert [entry["runId"] for entry in encoded] == ["run_07", "run_30", "run_30"]  # type: ignore[index]
    monkeypatch.undo()

    entries = json.loads(index.path.read_text(encoding="utf-8"))
    full = "[\n" + ",\n".join(json.dumps(entry, ensure_ascii=False) for entry in entries) + "\n]\n"
    assert index.path.read_bytes() == full.encode()
    assert [(run.runId, run.phase) for run in index.list() if run.phase != "idle"] == [("run_07", "waiting-user"), ("run_30", "completed")]

    # An index rewritten by another process is parsed, and its lines are encoded again once.
    index.path.write_text(full.replace('"run_12"', '"run_x"'), encoding="utf-8")
    monkeypatch.setattr(json.JSONEncoder, "encode", counting)
    encoded.clear()
    index.update("run_x", phase="failed")
    index.update("run_x", phase="idle")
    assert len(encoded) == 31 + 1
    monkeypatch.undo()
    assert RunIndex(tmp_path).get("run_x").phase == "idle" and len(RunIndex(tmp_path).list()) == 31
