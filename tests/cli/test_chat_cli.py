"""``crewagent chat``: one headless turn against the demo provider, persisted as in the app."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.store import RuntimeStore
from tests.core.loop_helpers import assert_log_valid, shape
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote


def _chat(capsys: pytest.CaptureFixture[str], data: Path, project: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["chat", "--data-dir", str(data), "--project", str(project), "--provider", "demo", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _log(data: Path, project: Path, conversation_id: str) -> list:  # type: ignore[type-arg]
    store = RuntimeStore(data)
    return assert_log_valid(store, store.open_project(project).id, conversation_id)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    project = tmp_path / "my folder"
    project.mkdir()
    (project / "README.md").write_text("# Hello\nA tiny project.\n", encoding="utf-8")
    (project / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    return project


@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_list_the_files_on_a_fresh_machine(folder: Path, tmp_path: Path, crewagent_zygote: Zygote) -> None:
    """The "Done when" of issue 4, as a new user runs it: a real process (forked from the warmed-up
    zygote, tests/fakes/zygote.py: the command without a fresh interpreter's imports), a fresh data dir, no key."""
    data = tmp_path / "fresh-data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = crewagent_zygote.run(
        ["chat", "--data-dir", str(data), "--project", str(folder), "--provider", "demo", "list the files"], env=env, timeout=60
    )

    assert proc.returncode == 0, proc.stderr
    assert "[demo] Here is what the tools returned" in proc.stdout
    assert "fs.list" in proc.stdout and "README.md" in proc.stdout and "notes.txt" in proc.stdout
    conversation_id = proc.stderr.splitlines()[0].strip()
    assert conversation_id.startswith("conv_")
    assert "fs.list" in proc.stderr  # the tool call is shown on stderr, not mixed into the answer
    log = _log(data, folder, conversation_id)
    assert shape(log) == ["user", "assistant+calls", "tool", "assistant"]
    assert log[1].tool_calls[0].function.name == "fs.list"
    assert json.loads(log[2].text)["ok"] is True and log[2].tool_call_id == log[1].tool_calls[0].id
    assert log[3].text == proc.stdout.strip()  # what was printed is what was stored


def test_new_conversation_and_continue_flags(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, _, err = _chat(capsys, data, folder, "hello")
    assert code == 0
    first = err.splitlines()[0]

    code, _, err = _chat(capsys, data, folder, "hello again")  # no flag: the most recent conversation
    assert code == 0 and err.splitlines()[0] == first

    code, _, err = _chat(capsys, data, folder, "--new", "a fresh start")
    second = err.splitlines()[0]
    assert code == 0 and second != first

    code, _, err = _chat(capsys, data, folder, "--conversation", first, "back to the first")
    assert code == 0 and err.splitlines()[0] == first

    assert [m.content for m in _log(data, folder, first) if m.role == "user"] == ["hello", "hello again", "back to the first"]
    assert [m.content for m in _log(data, folder, second) if m.role == "user"] == ["a fresh start"]

    code, _, err = _chat(capsys, data, folder, "--conversation", "conv_nope", "hi")
    assert code == 2 and "conv_nope" in err


@pytest.mark.parametrize("value", ["fast", "-1", "nan", "60"])
def test_a_bad_demo_pacing_is_a_one_line_error_and_creates_nothing(
    value: str, capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREWAGENT_DEMO_CHUNK_DELAY", value)
    data = tmp_path / "data"
    code, out, err = _chat(capsys, data, folder, "hello")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "CREWAGENT_DEMO_CHUNK_DELAY" in err and "Traceback" not in err
    assert not (data / "projects").exists() or not list((data / "projects").rglob("messages.jsonl"))


def test_fail_exits_1_with_the_error_persisted_and_continue_resumes(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out, err = _chat(capsys, data, folder, "fail")
    assert code == 1
    conversation_id = err.splitlines()[0]
    assert "LLM_HTTP_ERROR" in err and "failing on purpose" in err
    log = _log(data, folder, conversation_id)
    assert shape(log) == ["user", "assistant!error"]
    assert log[1].error["code"] == "LLM_HTTP_ERROR" and log[1].error["status"] == 500

    code, out, _ = _chat(capsys, data, folder, "continue")
    assert code == 0 and "Continuing after the error" in out
    assert shape(_log(data, folder, conversation_id)) == ["user", "assistant!error", "user", "assistant"]


def test_a_cut_stream_is_kept_and_continue_finishes_it(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out, err = _chat(capsys, data, folder, "fail mid-stream")
    assert code == 1
    conversation_id = err.splitlines()[0]
    partial = out.strip()
    assert partial.startswith("[demo] This answer is being cut off")
    log = _log(data, folder, conversation_id)
    assert log[-1].partType == "error" and log[-1].text.startswith(partial)

    code, out, _ = _chat(capsys, data, folder, "continue")
    assert code == 0 and "(continuing)" in out and "finishes the sentence" in out


def test_json_output_is_the_persisted_messages(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    code = main(["chat", "--data-dir", str(data), "--project", str(folder), "--provider", "demo", "--json", "read README.md"])
    captured = capsys.readouterr()

    assert code == 0
    lines = [json.loads(line) for line in captured.out.splitlines() if line.strip()]
    assert [m["role"] for m in lines] == ["user", "assistant", "tool", "assistant"]
    assert lines[1]["tool_calls"][0]["function"]["name"] == "fs.read"
    assert json.loads(lines[2]["content"])["content"] == "# Hello\nA tiny project.\n"
    conversation_id = captured.err.splitlines()[0]
    assert [m.id for m in _log(data, folder, conversation_id)] == [m["id"] for m in lines]
    # Usage (issue 17): on every assistant line as the provider reported it, and summed on stderr.
    out_tokens = [m["usage"]["completion_tokens"] for m in lines if m["role"] == "assistant"]
    in_tokens = [m["usage"]["prompt_tokens"] for m in lines if m["role"] == "assistant"]
    assert len(out_tokens) == 2 and sum(out_tokens) > 0
    # The demo estimates its prompt tokens from the request: the second call also carries the
    # first answer and the tool result, so it is bigger.
    assert 0 < in_tokens[0] < in_tokens[1]
    total = f"{sum(in_tokens):,} in · {sum(out_tokens):,} out"
    assert f"tokens this turn: {total}; this conversation: {total}" in captured.err
