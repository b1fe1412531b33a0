"""File > Export Conversation… writes exactly what `crewagent export` writes (issue 18, item 15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewagent.cli import main as cli
from crewagent.ui.dialogs import ExportAnswer
from crewagent.ui.export_action import SHORTCUT
from crewagent.ui.mainwindow import MainWindow
from tests.ui.conftest import ScriptedDialogs, open_project

SAMPLE = [
    {"role": "user", "content": "Read the file 📄 and summarise — 你好"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a.md"}'}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "line one\nline two " + "x" * 60_000},
    {"role": "assistant", "content": "Here is the **summary**."},
]


@pytest.fixture
def imported(tmp_path: Path, isolated_dirs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """A project folder holding one conversation imported through the command line (a large, offloaded output)."""
    source, folder = tmp_path / "in.json", tmp_path / "proj"
    source.write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    assert cli(["import", "--data-dir", str(isolated_dirs["data"]), "--project", str(folder), "--title", "Notes: a/b", str(source)]) == 0
    return folder, capsys.readouterr().out.strip()


@pytest.mark.parametrize("fmt", ["markdown", "openai", "jsonl"])
def test_the_windows_export_is_byte_for_byte_the_command_lines(
    qtbot: Any, window: MainWindow, dialogs: ScriptedDialogs, imported: tuple[Path, str], tmp_path: Path, isolated_dirs: dict[str, Path], fmt: str
) -> None:
    folder, conversation_id = imported
    open_project(qtbot, window, folder)
    assert window.project_view.select_conversation(conversation_id)
    target = tmp_path / f"from-window.{fmt}"
    dialogs.export = ExportAnswer(str(target), fmt)
    assert window.exporter.action.shortcut().toString() == SHORTCUT
    assert window.exporter.action in window.file_menu.actions()

    window.exporter.action.trigger()
    qtbot.waitUntil(lambda: str(target) in window.message_bar.text, timeout=10_000)

    assert dialogs.asked[-1] == "export_file Notes a b"  # a file name without / or :
    by_cli = tmp_path / f"from-cli.{fmt}"
    argv = ["export", "--data-dir", str(isolated_dirs["data"]), "--project", str(folder), "--conversation", conversation_id]
    assert cli([*argv, "--format", fmt, "-o", str(by_cli)]) == 0
    assert target.read_bytes() == by_cli.read_bytes()
    if fmt != "jsonl":  # JSON Lines is the log itself, which refers to the offloaded file
        assert b"x" * 60_000 in target.read_bytes()  # the offloaded output in full


def test_export_without_an_open_conversation_says_so_and_asks_nothing(
    qtbot: Any, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    window.exporter.action.trigger()
    assert not dialogs.asked
    assert "Open a conversation" in window.message_bar.text


def test_a_file_that_cannot_be_written_is_a_one_line_error(
    qtbot: Any, window: MainWindow, dialogs: ScriptedDialogs, imported: tuple[Path, str], tmp_path: Path
) -> None:
    folder, conversation_id = imported
    open_project(qtbot, window, folder)
    assert window.project_view.select_conversation(conversation_id)
    dialogs.export = ExportAnswer(str(tmp_path / "missing-folder" / "out.md"), "markdown")
    window.exporter.action.trigger()
    qtbot.waitUntil(lambda: "Cannot write" in window.message_bar.text, timeout=10_000)
    assert "\n" not in window.message_bar.text
