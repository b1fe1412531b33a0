"""The command line on a fresh --data-dir: import/export round trips, listings, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.cli import main
from tests.examples import examples

TOOL_CALL_ID = "call_abc"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _sample(big: str = "tool output") -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Read the file 📄 and summarise — 你好", "name": "alice"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": TOOL_CALL_ID, "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a.md"}'}},
                {"id": "call_2", "type": "function", "function": {"name": "fs_list", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": TOOL_CALL_ID, "content": big},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"ok": true, "entries": []}'},
        {"role": "assistant", "content": "Here is the summary."},
    ]


def _import(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path, messages: Any) -> str:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    code, out, err = _run(capsys, "import", "--data-dir", str(data_dir), "--project", str(tmp_path / "proj"), str(source))
    assert code == 0, err
    return out.strip()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("crewagent 0.")


def test_import_export_round_trip_with_a_1mb_tool_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh-data"
    big = json.dumps({"ok": True, "content": "x" * 1_000_000 + "🎉 end"})
    messages = _sample(big)
    conversation_id = _import(capsys, tmp_path, data_dir, messages)

    # The log itself holds only the preview; the full payload lives in the offload file.
    log = next(data_dir.glob("projects/*/conversations/*/messages.jsonl"))
    assert log.stat().st_size < 20_000
    offloaded = list(data_dir.glob("projects/*/state/logs/tool-results/*/*.json"))
    assert len(offloaded) == 1 and offloaded[0].read_text(encoding="utf-8") == big

    code, out, err = _run(
        capsys, "export", "--project", str(tmp_path / "proj"), "--conversation", conversation_id,
        "--format", "openai", "--data-dir", str(data_dir),
    )
    assert code == 0, err
    assert json.loads(out) == messages


def test_data_dir_before_the_subcommand(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    conversation_id = _import(capsys, tmp_path, data_dir, _sample())
    code, out, _ = _run(capsys, "--data-dir", str(data_dir), "conversations", "--project", str(tmp_path / "proj"), "--json")
    assert code == 0
    listed = json.loads(out)
    assert [entry["id"] for entry in listed] == [conversation_id]
    assert listed[0]["messageCount"] == 6
    assert listed[0]["title"].startswith("Read the file")


def test_conversations_lists_most_recent_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    first = _import(capsys, tmp_path, data_dir, [{"role": "user", "content": "first"}])
    second = _import(capsys, tmp_path, data_dir, [{"role": "user", "content": "second"}])
    code, out, _ = _run(capsys, "conversations", "--project", str(tmp_path / "proj"), "--data-dir", str(data_dir))
    assert code == 0
    assert out.index(second) < out.index(first)
    assert "first" in out and "second" in out


def test_markdown_export_shows_tool_calls_and_results(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    conversation_id = _import(capsys, tmp_path, data_dir, _sample('{"ok": true, "content": "# Title"}'))
    code, out, _ = _run(
        capsys, "export", "--project", str(tmp_path / "proj"), "--conversation", conversation_id,
        "--format", "markdown", "--data-dir", str(data_dir),
    )
    assert code == 0
    # The transcript shows the app's own tool names: import mapped the wire names back.
    assert "Tool call** `fs.read`" in out
    assert '"path": "a.md"' in out
    assert "Result of `fs.read`" in out and "# Title" in out
    assert "Here is the summary." in out


def test_jsonl_export_is_the_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    conversation_id = _import(capsys, tmp_path, data_dir, _sample())
    out_file = tmp_path / "out.jsonl"
    code, _, _ = _run(
        capsys, "export", "--project", str(tmp_path / "proj"), "--conversation", conversation_id,
        "--format", "jsonl", "-o", str(out_file), "--data-dir", str(data_dir),
    )
    assert code == 0
    lines = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [line["role"] for line in lines] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert all(line["id"] and line["createdAt"] for line in lines)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"role": "user", "content": "hi"}, "got a JSON object"),
        ([{"role": "user", "content": "hi"}, 3], "messages[1] is a JSON number"),
        ([{"role": "wizard", "content": "hi"}], "messages[0] has role 'wizard'"),
        ([{"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}]}], "messages[0]"),
        ("not json at all", "not valid JSON"),
    ],
)
def test_import_rejects_what_is_not_a_messages_array(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, payload: Any, problem: str
) -> None:
    data_dir = tmp_path / "d"
    source = tmp_path / "bad.json"
    source.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    code, out, err = _run(capsys, "import", "--project", str(tmp_path / "proj"), str(source), "--data-dir", str(data_dir))
    assert code == 2
    assert problem in err
    assert out == ""
    # Nothing was created: no project data, no conversation.
    assert not list(data_dir.glob("projects/*/conversations/*"))


def test_export_of_unknown_conversation_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(
        capsys, "export", "--project", str(tmp_path / "p"), "--conversation", "conv_nope", "--data-dir", str(tmp_path / "d")
    )
    assert code == 2
    assert "conv_nope" in err


def test_export_with_missing_offload_file_warns_and_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    conversation_id = _import(capsys, tmp_path, data_dir, _sample("y" * 80_000))
    for path in data_dir.glob("projects/*/state/logs/tool-results/*/*.json"):
        path.unlink()
    code, out, err = _run(
        capsys, "export", "--project", str(tmp_path / "proj"), "--conversation", conversation_id, "--data-dir", str(data_dir)
    )
    assert code == 1
    assert "missing" in err
    exported = json.loads(out)
    assert exported[3]["content"].startswith("y" * 500) and "[Full output: @state/logs/tool-results/" in exported[3]["content"]


# -- property: any valid messages[] survives import → export ------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_ids = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789_-"), min_size=1, max_size=12)


@st.composite
def _conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(_text)})
    for turn in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(_text)})
        if draw(st.booleans()):
            ids = draw(st.lists(_ids, min_size=1, max_size=3, unique=True))
            out.append(
                {
                    "role": "assistant",
                    "content": draw(st.one_of(st.none(), _text)),
                    "tool_calls": [
                        {"id": f"{turn}_{i}", "type": "function", "function": {"name": "fs_read", "arguments": json.dumps({"q": draw(_text)})}}
                        for i in ids
                    ],
                }
            )
            for i in ids:
                size = draw(st.sampled_from([0, 10, 60_000]))
                out.append({"role": "tool", "tool_call_id": f"{turn}_{i}", "content": draw(_text) + "é" * size})
        out.append({"role": "assistant", "content": draw(_text)})
    return out


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=_conversations())
def test_any_valid_messages_array_round_trips(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, messages: list[dict[str, Any]]
) -> None:
    data_dir = tmp_path / f"d{abs(hash(json.dumps(messages))) % 10**12}"
    conversation_id = _import(capsys, tmp_path, data_dir, messages)
    code, out, err = _run(
        capsys, "export", "--project", str(tmp_path / "proj"), "--conversation", conversation_id, "--data-dir", str(data_dir)
    )
    assert code == 0, err
    assert json.loads(out) == messages


def test_console_script_runs_in_a_real_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m crewagent export`` in a fresh interpreter prints the conversation (non-ASCII
    text through a real pipe). One fresh interpreter, not two: the import before it, whose output
    is only the id, runs in this process (~0.7 CPU-s of imports saved)."""
    source = tmp_path / "in.json"
    source.write_text(json.dumps(_sample()), encoding="utf-8")
    env_args = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "proj")]
    code, out, err = _run(capsys, "import", *env_args, str(source))
    assert code == 0, err
    conversation_id = out.strip()
    exported = subprocess.run(
        [sys.executable, "-m", "crewagent", "export", *env_args, "--conversation", conversation_id],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(exported.stdout) == _sample()
