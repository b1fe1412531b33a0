"""The fs tools on real files: windows, limits, truncation hints, hashes, conflicts, atomic writes, patches."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.tools import ToolContext, ToolPolicy, default_registry
from crewagent.core.tools import _files, fs
from crewagent.core.tools.results import ErrorCode, error


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    runtime = tmp_path / "data" / "projects" / "proj_1"
    pkg = tmp_path / "pkg"
    outside = tmp_path / "outside"
    for folder in (project / "docs", runtime / "state", runtime / "conversations", pkg / "steps", outside):
        folder.mkdir(parents=True)
    return {"project": project, "runtime": runtime, "state": runtime / "state", "pkg": pkg, "outside": outside}


def make_ctx(env: dict[str, Path], **fields: Any) -> ToolContext:
    return ToolContext(
        project_root=env["project"],
        state_dir=env["state"],
        pkg_dir=env["pkg"],
        protected=(env["runtime"] / "conversations",),
        **fields,
    )


def call(env: dict[str, Path], name: str, args: dict[str, Any], **fields: Any) -> dict[str, Any]:
    ctx = fields.pop("ctx", None) or make_ctx(env, **fields)
    result = asyncio.run(default_registry().execute(name, json.dumps(args), ctx, call_id="call_1"))
    json.dumps(result)  # every result must be sendable to the model as JSON
    return result


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


NUMBERED = "".join(f"line {i:03d}\n" for i in range(1, 51))  # 50 lines of 9 bytes


# -- fs.read ---------------------------------------------------------------------------------


def test_read_whole_file_with_hash_and_line_count(env: dict[str, Path]) -> None:
    (env["project"] / "docs" / "n.txt").write_text(NUMBERED)
    result = call(env, "fs.read", {"path": "docs/n.txt"})
    assert result["ok"] and result["content"] == NUMBERED
    assert result["sha256"] == sha(NUMBERED.encode())
    assert (result["totalLines"], result["startLine"], result["endLine"], result["truncated"]) == (50, 1, 50, False)
    assert result["path"] == "@project/docs/n.txt"


def test_read_line_window(env: dict[str, Path]) -> None:
    (env["project"] / "n.txt").write_text(NUMBERED)
    result = call(env, "fs.read", {"path": "n.txt", "startLine": 10, "endLine": 12})
    assert result["content"] == "line 010\nline 011\nline 012\n"
    assert (result["startLine"], result["endLine"], result["totalLines"]) == (10, 12, 50)
    assert result["sha256"] == sha(NUMBERED.encode())  # always the whole file
    tail = call(env, "fs.read", {"path": "n.txt", "startLine": 49, "endLine": 80})
    assert tail["content"] == "line 049\nline 050\n" and tail["endLine"] == 50 and not tail["truncated"]


def test_read_past_the_end_says_how_long_the_file_is(env: dict[str, Path]) -> None:
    (env["project"] / "n.txt").write_text(NUMBERED)
    result = call(env, "fs.read", {"path": "n.txt", "startLine": 70})
    assert result["content"] == "" and "only 50 lines" in result["hint"]
    (env["project"] / "empty.txt").write_text("")
    empty = call(env, "fs.read", {"path": "empty.txt"})
    assert (empty["content"], empty["totalLines"], empty["hint"]) == ("", 0, "The file is empty.")
    assert empty["sha256"] == sha(b"")


def test_read_truncates_at_the_limit_with_a_hint_that_continues(env: dict[str, Path]) -> None:
    (env["project"] / "n.txt").write_text(NUMBERED)
    policy = ToolPolicy(max_read_bytes=100)  # 11 whole lines of 9 bytes
    first = call(env, "fs.read", {"path": "n.txt"}, policy=policy)
    assert first["truncated"] and first["content"] == NUMBERED[:99]
    assert (first["endLine"], first["nextStartLine"]) == (11, 12)
    assert "startLine=12" in first["hint"]
    pieces = [first["content"]]
    start = first["nextStartLine"]
    while True:
        page = call(env, "fs.read", {"path": "n.txt", "startLine": start}, policy=policy)
        pieces.append(page["content"])
        if not page["truncated"]:
            break
        start = page["nextStartLine"]
    assert "".join(pieces) == NUMBERED


def test_max_bytes_argument_lowers_but_never_raises_the_limit(env: dict[str, Path]) -> None:
    (env["project"] / "n.txt").write_text(NUMBERED)
    lower = call(env, "fs.read", {"path": "n.txt", "maxBytes": 20}, policy=ToolPolicy(max_read_bytes=100))
    assert lower["content"] == NUMBERED[:18]
    higher = call(env, "fs.read", {"path": "n.txt", "maxBytes": 10_000}, policy=ToolPolicy(max_read_bytes=100))
    assert len(higher["content"]) == 99


def test_a_line_longer_than_the_limit_is_cut_on_a_character_boundary(env: dict[str, Path]) -> None:
    text = "é" * 300 + "\nnext\n"  # 600 bytes of 2-byte characters, then a short line
    (env["project"] / "long.txt").write_text(text, encoding="utf-8")
    policy = ToolPolicy(max_read_bytes=101)
    first = call(env, "fs.read", {"path": "long.txt"}, policy=policy)
    assert first["truncated"] and first["content"] == "é" * 50
    assert first["nextOffset"] == 100 and "offset=100" in first["hint"]
    rest = call(env, "fs.read", {"path": "long.txt", "offset": first["nextOffset"]}, policy=ToolPolicy(max_read_bytes=10_000))
    assert first["content"] + rest["content"] == text
    assert "\ufffd" not in rest["content"]


def test_byte_window_never_splits_a_character(env: dict[str, Path]) -> None:
    data = "aé€😀b".encode()
    (env["project"] / "u.txt").write_bytes(data)
    windows = [(offset, limit) for offset in range(len(data)) for limit in range(1, len(data) + 1)]

    async def read_each() -> list[dict[str, Any]]:
        # What call() does for each window, with one context and one event loop for the 121 reads,
        # as the app runs a conversation's calls (execute gives each call its own ctx.for_call):
        # a context per read resolved its sandbox and protected paths again (realpath of each),
        # and with an asyncio.run each that was 80 % of this test's CPU.
        registry, ctx = default_registry(), make_ctx(env)
        return [
            await registry.execute("fs.read", json.dumps({"path": "u.txt", "offset": offset, "limit": limit}), ctx, call_id="call_1")
            for offset, limit in windows
        ]

    for (offset, limit), result in zip(windows, asyncio.run(read_each()), strict=True):
        json.dumps(result)  # sendable to the model, as call() checks
        assert "\ufffd" not in result["content"], (offset, limit)
        assert result["content"].encode() in data


def test_read_refuses_binary_missing_folders_and_mixed_windows(env: dict[str, Path]) -> None:
    (env["project"] / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (env["project"] / "n.txt").write_text(NUMBERED)
    assert code(call(env, "fs.read", {"path": "img.png"})) == ErrorCode.E_BINARY_FILE
    assert code(call(env, "fs.read", {"path": "missing.txt"})) == ErrorCode.ENOENT
    assert code(call(env, "fs.read", {"path": "docs"})) == ErrorCode.E_NOT_A_FILE
    mixed = call(env, "fs.read", {"path": "n.txt", "startLine": 2, "offset": 5})
    assert code(mixed) == ErrorCode.E_SCHEMA_VALIDATION
    backwards = call(env, "fs.read", {"path": "n.txt", "startLine": 5, "endLine": 2})
    assert code(backwards) == ErrorCode.E_SCHEMA_VALIDATION


def test_read_of_a_huge_file_is_a_read_limit_error(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fs, "MAX_READ_FILE_BYTES", 100)
    (env["project"] / "n.txt").write_text(NUMBERED)
    assert code(call(env, "fs.read", {"path": "n.txt"})) == ErrorCode.E_READ_LIMIT


def test_read_in_pkg_and_state(env: dict[str, Path]) -> None:
    (env["pkg"] / "steps" / "s1.md").write_text("step one\n")
    (env["state"] / "w.md").write_text("state\n")
    assert call(env, "fs.read", {"path": "@pkg/steps/s1.md"})["content"] == "step one\n"
    assert call(env, "fs.read", {"path": "@state/w.md"})["content"] == "state\n"


def test_read_through_a_symlink_out_is_refused(env: dict[str, Path]) -> None:
    (env["outside"] / "secret.txt").write_text("secret")
    os.symlink(env["outside"] / "secret.txt", env["project"] / "s.txt")
    assert code(call(env, "fs.read", {"path": "s.txt"})) == ErrorCode.E_SANDBOX_VIOLATION


# -- fs.write --------------------------------------------------------------------------------


def test_write_creates_parents_and_reports_the_hash(env: dict[str, Path]) -> None:
    result = call(env, "fs.write", {"path": "@project/artifacts/deep/x.md", "content": "héllo\n"})
    target = env["project"] / "artifacts" / "deep" / "x.md"
    assert result["ok"] and result["created"] and target.read_text(encoding="utf-8") == "héllo\n"
    assert result["sha256"] == sha("héllo\n".encode()) and result["bytes"] == 7
    again = call(env, "fs.write", {"path": "@project/artifacts/deep/x.md", "content": "bye\n"})
    assert again["ok"] and not again["created"] and target.read_text() == "bye\n"


def test_write_with_matching_hash_succeeds_and_a_stale_hash_conflicts(env: dict[str, Path]) -> None:
    target = env["project"] / "doc.md"
    target.write_text("v1\n")
    read = call(env, "fs.read", {"path": "doc.md"})
    ok = call(env, "fs.write", {"path": "doc.md", "content": "v2\n", "ifMatchSha256": read["sha256"]})
    assert ok["ok"] and target.read_text() == "v2\n"
    stale = call(env, "fs.write", {"path": "doc.md", "content": "v3\n", "ifMatchSha256": read["sha256"]})
    assert code(stale) == ErrorCode.E_CONFLICT
    assert stale["error"]["currentSha256"] == sha(b"v2\n")
    assert target.read_text() == "v2\n"
    gone = call(env, "fs.write", {"path": "other.md", "content": "x", "ifMatchSha256": read["sha256"]})
    assert code(gone) == ErrorCode.E_CONFLICT and not (env["project"] / "other.md").exists()


def test_write_limit(env: dict[str, Path]) -> None:
    result = call(env, "fs.write", {"path": "big.md", "content": "é" * 60}, policy=ToolPolicy(max_write_bytes=100))
    assert code(result) == ErrorCode.E_WRITE_LIMIT and not (env["project"] / "big.md").exists()


def test_failed_write_keeps_the_old_file_and_leaves_no_temp_file(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = env["project"] / "docs" / "keep.md"
    target.write_text("original\n")

    def disk_full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", disk_full)
    result = call(env, "fs.write", {"path": "docs/keep.md", "content": "new\n"})
    assert code(result) == "ENOSPC" and "No space left" in result["error"]["message"]
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["keep.md"]


def test_write_keeps_the_permission_bits(env: dict[str, Path]) -> None:
    target = env["project"] / "run.sh"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o750)
    assert call(env, "fs.write", {"path": "run.sh", "content": "#!/bin/sh\necho\n"})["ok"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


@pytest.mark.parametrize("path", ["@pkg/steps/new.md", ".crewagent.json", "@state/logs/execution/c.jsonl", "../x.md"])
def test_write_to_protected_places_is_refused(env: dict[str, Path], path: str) -> None:
    result = call(env, "fs.write", {"path": path, "content": "x"})
    assert code(result) == ErrorCode.E_SANDBOX_VIOLATION
    assert not (env["pkg"] / "steps" / "new.md").exists()


def test_write_onto_a_folder_is_refused(env: dict[str, Path]) -> None:
    assert code(call(env, "fs.write", {"path": "docs", "content": "x"})) == ErrorCode.E_NOT_A_FILE


# -- fs.list ---------------------------------------------------------------------------------


def _tree(env: dict[str, Path]) -> None:
    project = env["project"]
    (project / "docs" / "a.md").write_text("aaaa")
    (project / "docs" / "sub").mkdir()
    (project / "docs" / "sub" / "b.md").write_text("b")
    (project / "notes.txt").write_text("n")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref")
    (env["outside"] / "secret.md").write_text("secret")
    os.symlink(env["outside"], project / "out")


def test_list_entries_with_type_and_size(env: dict[str, Path]) -> None:
    _tree(env)
    result = call(env, "fs.list", {})
    entries = {entry["name"]: entry for entry in result["entries"]}
    assert set(entries) == {".git", "docs", "notes.txt", "out"}
    assert entries["docs"]["type"] == "dir" and entries["notes.txt"] == {
        "path": "@project/notes.txt", "name": "notes.txt", "type": "file", "size": 1,
    }
    assert entries["out"]["type"] == "symlink" and entries["out"]["outside"] is True


def test_list_recursive_with_glob_skips_git_and_never_follows_links_out(env: dict[str, Path]) -> None:
    _tree(env)
    result = call(env, "fs.list", {"recursive": True, "glob": "*.md"})
    assert [entry["path"] for entry in result["entries"]] == ["@project/docs/a.md", "@project/docs/sub/b.md"]
    everything = call(env, "fs.list", {"recursive": True})
    paths = [entry["path"] for entry in everything["entries"]]
    assert "@project/.git" in paths and "@project/.git/HEAD" not in paths
    assert not any("secret" in path for path in paths)
    by_path = call(env, "fs.list", {"recursive": True, "glob": "docs/sub/*"})
    assert [entry["path"] for entry in by_path["entries"]] == ["@project/docs/sub/b.md"]


def test_list_cap_reports_truncation(env: dict[str, Path]) -> None:
    for index in range(10):
        (env["project"] / f"f{index}.txt").write_text("x")
    result = call(env, "fs.list", {"maxEntries": 3})
    assert result["count"] == 3 and result["truncated"] and "glob" in result["hint"]
    assert code(call(env, "fs.list", {"maxEntries": 10**6})) == ErrorCode.E_SCHEMA_VALIDATION


def test_list_hides_conversation_logs_kept_inside_the_project(env: dict[str, Path]) -> None:
    inner = env["project"] / ".data" / "projects" / "p" / "conversations" / "c"
    inner.mkdir(parents=True)
    (inner / "messages.jsonl").write_text("{}\n")
    ctx = ToolContext(project_root=env["project"], protected=(inner.parent,))
    result = call(env, "fs.list", {"recursive": True}, ctx=ctx)
    assert not any("conversations" in entry["path"] for entry in result["entries"])
    assert any(entry["path"] == "@project/.data/projects/p" for entry in result["entries"])


def test_list_errors(env: dict[str, Path]) -> None:
    (env["project"] / "f.txt").write_text("x")
    assert code(call(env, "fs.list", {"path": "nope"})) == ErrorCode.ENOENT
    assert code(call(env, "fs.list", {"path": "f.txt"})) == ErrorCode.E_NOT_A_DIRECTORY
    assert code(call(env, "fs.list", {"path": "@state/../conversations"})) == ErrorCode.E_SANDBOX_VIOLATION


# -- fs.search -------------------------------------------------------------------------------


def test_search_substring_and_regex(env: dict[str, Path]) -> None:
    (env["project"] / "docs" / "a.md").write_text("Alpha\nbeta\nALPHA beta\n")
    (env["project"] / "b.py").write_text("alpha = 1\n")
    found = call(env, "fs.search", {"query": "alpha"})
    assert [(m["path"], m["line"]) for m in found["matches"]] == [
        ("@project/b.py", 1), ("@project/docs/a.md", 1), ("@project/docs/a.md", 3),
    ]
    sensitive = call(env, "fs.search", {"query": "alpha", "caseSensitive": True, "glob": "*.md"})
    assert sensitive["matches"] == []
    regex = call(env, "fs.search", {"query": r"^be+ta$", "regex": True, "path": "docs/a.md"})
    assert [(m["line"], m["text"]) for m in regex["matches"]] == [(2, "beta")]


def test_search_skips_binary_and_huge_files_and_caps_results(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fs, "SEARCH_MAX_FILE_BYTES", 1000)
    (env["project"] / "bin.dat").write_bytes(b"needle\x00\x01")
    (env["project"] / "huge.txt").write_text("needle\n" * 500)
    (env["project"] / "many.txt").write_text("needle\n" * 50)
    result = call(env, "fs.search", {"query": "needle", "maxResults": 7})
    assert result["count"] == 7 and result["truncated"]
    assert {m["path"] for m in result["matches"]} == {"@project/many.txt"}
    assert result["skipped"] == {"binary": 1, "tooLarge": 1}


def test_search_does_not_follow_links_out_or_into_logs(env: dict[str, Path]) -> None:
    (env["outside"] / "secret.txt").write_text("needle\n")
    (env["runtime"] / "conversations" / "log.jsonl").write_text("needle\n")
    os.symlink(env["outside"], env["project"] / "out")
    os.symlink(env["outside"] / "secret.txt", env["project"] / "secret.txt")
    os.symlink(env["runtime"] / "conversations", env["project"] / "logs")
    assert call(env, "fs.search", {"query": "needle"})["matches"] == []


def test_search_with_an_invalid_regex_is_a_schema_error(env: dict[str, Path]) -> None:
    assert code(call(env, "fs.search", {"query": "(", "regex": True})) == ErrorCode.E_SCHEMA_VALIDATION


# -- fs.apply_patch --------------------------------------------------------------------------

WORKFLOW = """---
schemaVersion: 1
currentNodeId: ''
stepsCompleted: []
variables:
  topic: cats
  mood: calm
updatedAt: 2024-05-01
---
# Workflow

Body text with --- inside
---
and a trailing line without newline"""


def test_update_frontmatter_merges_keys_and_keeps_the_body(env: dict[str, Path]) -> None:
    target = env["state"] / "runs" / "r1" / "workflow.md"
    target.parent.mkdir(parents=True)
    target.write_text(WORKFLOW)
    update = {"currentNodeId": "step-1", "stepsCompleted": ["start"], "variables": {"mood": None, "x": 1}}
    result = call(env, "fs.apply_patch", {"path": "@state/runs/r1/workflow.md", "updateFrontmatter": update})
    assert result["ok"] and result["changed"]
    assert result["frontmatter"] == {
        "schemaVersion": 1,
        "currentNodeId": "step-1",
        "stepsCompleted": ["start"],
        "variables": {"topic": "cats", "x": 1},
        "updatedAt": "2024-05-01",
    }
    text = target.read_text()
    assert text.endswith(WORKFLOW[WORKFLOW.index("# Workflow"):])
    assert result["sha256"] == sha(text.encode())
    reread = call(env, "fs.read", {"path": "@state/runs/r1/workflow.md"})
    assert reread["sha256"] == result["sha256"]


def test_update_frontmatter_accepts_yaml_text_and_keeps_crlf(env: dict[str, Path]) -> None:
    target = env["project"] / "crlf.md"
    target.write_bytes(b"---\r\na: 1\r\n---\r\nbody\r\n")
    result = call(env, "fs.apply_patch", {"path": "crlf.md", "updateFrontmatter": "b: [x, y]\n"})
    assert result["ok"]
    assert target.read_bytes() == b"---\r\na: 1\r\nb:\r\n- x\r\n- y\r\n---\r\nbody\r\n"


def test_update_frontmatter_adds_one_to_a_plain_file(env: dict[str, Path]) -> None:
    target = env["project"] / "plain.md"
    target.write_text("# Title\n")
    assert call(env, "fs.apply_patch", {"path": "plain.md", "updateFrontmatter": {"status": "draft"}})["ok"]
    assert target.read_text() == "---\nstatus: draft\n---\n\n# Title\n"


@pytest.mark.parametrize(
    ("content", "update"),
    [
        ("---\na: [unclosed\n---\nbody\n", {"b": 1}),  # the file's frontmatter is not YAML
        ("---\n- a list\n---\nbody\n", {"b": 1}),  # not a mapping
        ("---\na: 1\nbody without a closing line\n", {"b": 1}),
        ("---\na: 1\n---\nbody\n", "b: [unclosed"),  # the update is not YAML
        ("---\na: 1\n---\nbody\n", "- just a list"),
    ],
)
def test_invalid_frontmatter_is_refused_and_nothing_changes(env: dict[str, Path], content: str, update: Any) -> None:
    target = env["project"] / "w.md"
    target.write_text(content)
    result = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": update})
    assert code(result) == ErrorCode.E_INVALID_FRONTMATTER
    assert target.read_text() == content


def test_frontmatter_guard_can_refuse_a_state_update(env: dict[str, Path]) -> None:
    target = env["project"] / "w.md"
    target.write_text("---\ncurrentNodeId: a\n---\n")
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def guard(shown: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        seen.append((shown, old, new))
        if new.get("currentNodeId") != "b":
            return error(ErrorCode.E_INVALID_TRANSITION, "allowed: b", allowed=["b"])
        return None

    refused = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"currentNodeId": "z"}}, frontmatter_guard=guard)
    assert code(refused) == ErrorCode.E_INVALID_TRANSITION and refused["error"]["allowed"] == ["b"]
    assert target.read_text() == "---\ncurrentNodeId: a\n---\n"
    assert call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"currentNodeId": "b"}}, frontmatter_guard=guard)["ok"]
    assert seen[0] == ("@project/w.md", {"currentNodeId": "a"}, {"currentNodeId": "z"})


def test_replace_edits(env: dict[str, Path]) -> None:
    target = env["project"] / "t.txt"
    target.write_text("one two two three\n")
    done = call(env, "fs.apply_patch", {"path": "t.txt", "replace": [{"old": "one", "new": "1"}, {"old": "two", "new": "2", "all": True}]})
    assert done["ok"] and done["replacements"] == 3 and target.read_text() == "1 2 2 three\n"
    twice = call(env, "fs.apply_patch", {"path": "t.txt", "replace": [{"old": "2", "new": "x"}]})
    assert code(twice) == ErrorCode.E_PATCH_FAILED and "2 times" in twice["error"]["message"]
    missing = call(env, "fs.apply_patch", {"path": "t.txt", "replace": [{"old": "three", "new": "3"}, {"old": "nope", "new": ""}]})
    assert code(missing) == ErrorCode.E_PATCH_FAILED
    assert target.read_text() == "1 2 2 three\n"  # all edits or none


def test_unified_diff(env: dict[str, Path]) -> None:
    target = env["project"] / "code.py"
    target.write_text("a\nb\nc\nd\ne\n")
    diff = "--- a/code.py\n+++ b/code.py\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -5,1 +5,2 @@\n e\n+f\n"
    result = call(env, "fs.apply_patch", {"path": "code.py", "diff": diff})
    assert result["ok"] and result["hunks"] == 2 and target.read_text() == "a\nb\nC\nd\ne\nf\n"
    stale = call(env, "fs.apply_patch", {"path": "code.py", "diff": "@@ -3,1 +3,1 @@\n-c\n+X\n"})
    assert code(stale) == ErrorCode.E_PATCH_FAILED and target.read_text() == "a\nb\nC\nd\ne\nf\n"


def test_patch_limits_conflicts_and_forms(env: dict[str, Path]) -> None:
    target = env["project"] / "w.md"
    target.write_text("---\na: 1\n---\n" + "x" * 200)
    tight = ToolPolicy(max_read_bytes=100)
    assert code(call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"b": 2}}, policy=tight)) == ErrorCode.E_READ_LIMIT
    small_write = ToolPolicy(max_write_bytes=100)
    assert code(call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"b": 2}}, policy=small_write)) == ErrorCode.E_WRITE_LIMIT
    stale = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"b": 2}, "ifMatchSha256": "0" * 64})
    assert code(stale) == ErrorCode.E_CONFLICT
    two_forms = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {"b": 2}, "diff": "@@ -1 +1 @@\n"})
    assert code(two_forms) == ErrorCode.E_SCHEMA_VALIDATION
    assert code(call(env, "fs.apply_patch", {"path": "nope.md", "updateFrontmatter": {"b": 2}})) == ErrorCode.ENOENT
    assert code(call(env, "fs.apply_patch", {"path": "@pkg/x.md", "updateFrontmatter": {"b": 2}})) == ErrorCode.E_SANDBOX_VIOLATION
    assert target.read_text() == "---\na: 1\n---\n" + "x" * 200


def test_parallel_frontmatter_updates_lose_nothing(env: dict[str, Path]) -> None:
    target = env["project"] / "w.md"
    target.write_text("---\nstart: 0\n---\nbody\n")
    ctx = make_ctx(env)
    registry = default_registry()

    async def many() -> list[dict[str, Any]]:
        calls = [
            registry.execute("fs.apply_patch", {"path": "w.md", "updateFrontmatter": {f"k{i}": i}}, ctx)
            for i in range(20)
        ]
        return await asyncio.gather(*calls)

    assert all(result["ok"] for result in asyncio.run(many()))
    final = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": {}})
    assert final["frontmatter"] == {"start": 0, **{f"k{i}": i for i in range(20)}}
    assert target.read_text().endswith("---\nbody\n")


def test_a_store_project_gives_state_and_protects_its_conversation_logs(store: Any, project: Any, conversation: Any) -> None:
    ctx = ToolContext.for_project(project)
    log = store.log_path(project.id, conversation.id)
    assert log.exists()
    store.state_dir(project.id).mkdir(parents=True, exist_ok=True)
    os.symlink(log.parent.parent, store.state_dir(project.id) / "convs")
    registry = default_registry()
    for path in (
        f"@state/../conversations/{conversation.id}/messages.jsonl",
        f"@state/convs/{conversation.id}/messages.jsonl",
        str(log),
    ):
        result = asyncio.run(registry.execute("fs.read", {"path": path}, ctx))
        assert code(result) == ErrorCode.E_SANDBOX_VIOLATION, path
    written = asyncio.run(registry.execute("fs.write", {"path": "@state/runs/r1/workflow.md", "content": "---\n---\n"}, ctx))
    assert written["ok"]
    assert (store.state_dir(project.id) / "runs" / "r1" / "workflow.md").read_text() == "---\n---\n"
    listing = asyncio.run(registry.execute("fs.list", {"path": "@state", "recursive": True}, ctx))
    assert [(e["path"], e["type"], e.get("outside")) for e in listing["entries"]] == [
        # @state/convs, a link into the conversation logs, is skipped silently (issue 15).
        ("@state/runs", "dir", None),
        ("@state/runs/r1", "dir", None),
        ("@state/runs/r1/workflow.md", "file", None),
    ]


def test_a_yaml_alias_bomb_is_refused_before_it_expands(env: dict[str, Path]) -> None:
    """300 bytes of nested YAML aliases stand for 9**9 values; merging them took the process's memory."""
    bomb = "a0: &a0 [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
    )
    (env["project"] / "w.md").write_text("---\nstep: 1\n---\nbody\n")
    result = call(env, "fs.apply_patch", {"path": "w.md", "updateFrontmatter": bomb})
    assert code(result) == ErrorCode.E_INVALID_FRONTMATTER and "aliases" in result["error"]["message"]
    (env["project"] / "b.md").write_text(f"---\n{bomb}---\nbody\n")
    result = call(env, "fs.apply_patch", {"path": "b.md", "updateFrontmatter": {"step": 2}})
    assert code(result) == ErrorCode.E_INVALID_FRONTMATTER
    assert (env["project"] / "w.md").read_text() == "---\nstep: 1\n---\nbody\n"


def test_a_remembered_frontmatter_is_handed_out_as_a_fresh_copy_each_time() -> None:
    # load_mapping remembers recent texts (a run's state is parsed up to four times a turn): a
    # caller that changes what it got must not change what the next caller of the same text gets.
    from crewagent.core.tools import frontmatter

    text = "vars: {a: 1, nested: {b: [1, 2]}}\nsteps: [x]\ntags: !!set {t: null}\nwhen: 2026-01-01\n"
    first = frontmatter.load_mapping(text)
    first["vars"]["nested"]["b"].append(3)
    first["steps"].clear()
    first["tags"].add("u")
    first["new"] = True
    again = frontmatter.load_mapping(text)
    assert again == {"vars": {"a": 1, "nested": {"b": [1, 2]}}, "steps": ["x"], "tags": {"t"}, "when": again["when"]}
    assert str(again["when"]) == "2026-01-01"
    with pytest.raises(frontmatter.FrontmatterError):
        frontmatter.load_mapping("a: [unclosed\n")
    with pytest.raises(frontmatter.FrontmatterError):  # a refusal is not remembered as a value
        frontmatter.load_mapping("a: [unclosed\n")
