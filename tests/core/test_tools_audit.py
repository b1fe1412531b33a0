"""The execution audit: where it goes, what a line holds, and that no partial line is ever left."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from crewagent.core.tools.audit import MAX_ARGS_CHARS, AuditLog, audit_path, read_audit, truncate_args
from crewagent.core.tools.results import error, ok


def test_audit_paths_for_runs_and_conversations(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert audit_path(state, run_id="run_1", conversation_id="c") == state / "runs" / "run_1" / "logs" / "execution.jsonl"
    assert audit_path(state, conversation_id="conv_1") == state / "logs" / "execution" / "conv_1.jsonl"
    assert audit_path(state, conversation_id="../../evil").parent == state / "logs" / "execution"


def test_a_record_holds_time_tool_args_outcome_and_duration(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "a" / "execution.jsonl")
    audit.record(tool="fs.read", args={"path": "x"}, result=ok(content="..."), duration_ms=1.23456, call_id="c1")
    audit.record(tool="fs.write", args={"path": "y"}, result=error("E_USER_DENIED", "no"), duration_ms=2, approval="deny")
    first, second = read_audit(audit.path)
    assert first["tool"] == "fs.read" and first["ok"] is True and "errorCode" not in first
    assert first["durationMs"] == 1.235 and first["callId"] == "c1" and first["ts"].endswith("Z")
    assert (second["ok"], second["errorCode"], second["approval"]) == (False, "E_USER_DENIED", "deny")


def test_long_arguments_are_truncated() -> None:
    shortened = truncate_args({"path": "x", "content": "y" * 10_000, "nested": [{"text": "z" * 1000}]})
    assert shortened["path"] == "x"
    assert shortened["content"].endswith("(10000 chars)") and len(shortened["content"]) < 400
    many = truncate_args({f"k{i}": "v" * 200 for i in range(100)})
    assert set(many) == {"_truncated", "_chars"} and len(many["_truncated"]) == MAX_ARGS_CHARS


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "execution.jsonl"
    path.write_bytes(b'{"tool": "fs.read", "ok": tr')  # a crash mid-write
    AuditLog(path).record(tool="fs.list", args={}, result=ok(), duration_ms=0)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and json.loads(lines[1])["tool"] == "fs.list"
    assert [record["tool"] for record in read_audit(path)] == ["fs.list"]


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "execution.jsonl"
    audits = [AuditLog(path), AuditLog(path)]  # two instances, as two conversations of one run would have

    def write(audit: AuditLog, worker: int) -> None:
        for index in range(200):
            audit.record(tool="fs.read", args={"w": worker, "i": index, "pad": "x" * 500}, result=ok(), duration_ms=0)

    threads = [threading.Thread(target=write, args=(audits[i % 2], i)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw = path.read_text().splitlines()
    assert len(raw) == 800
    assert all(json.loads(line)["tool"] == "fs.read" for line in raw)


def test_an_audit_that_cannot_be_written_does_not_raise(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    AuditLog(blocker / "execution.jsonl").record(tool="fs.read", args={}, result=ok(), duration_ms=0)
    assert "could not append" in caplog.text


def test_credentials_in_arguments_are_masked_even_where_a_long_value_is_cut() -> None:
    # Only the start of a long value is kept and searched (a 20 MB fs.write content is not);
    # a token that runs over the cut is masked all the same.
    shortened = truncate_args({
        "url": "https://user:pw@example.com/v1?api_key=sk-live-1",
        "content": "x" * 280 + "Authorization: Bearer abcdefghijklmnopqrstuvwxyz " + "y" * 5_000_000,
    })
    assert "pw@" not in shortened["url"] and "sk-live-1" not in shortened["url"]
    assert "abcdefgh" not in shortened["content"]
    assert shortened["content"].endswith("… (5000329 chars)")
