"""A command's live output in the expanded tool part while it runs, through the real window, worker and process."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline import TimelineRole
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.ui.test_conversation import ScriptedApprovals, approvals, host, make_window, open_conversation, say  # noqa: F401

#: Prints a line, then waits for the test to create ``go`` in the project: no timing to guess.
WAITING = "import os, time\nprint('LINE-ONE', flush=True)\nwhile not os.path.exists('go'): time.sleep(0.02)\nprint('done')"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell-free python; the same on Windows but untested here")
def test_live_output_shows_in_the_expanded_part_while_the_command_runs(
    qtbot: Any, qtmodeltester: Any, scripted_llm: ScriptedServer, project: Any,
    make_window: Callable[[], MainWindow], approvals: ScriptedApprovals,
) -> None:
    args = json.dumps({"command": sys.executable, "args": ["-c", WAITING]})
    scripted_llm.script(tool_calls(call("call_t", "terminal_run", args)), text("It ran."))
    approvals.answers = ["allow_once"]
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "run it", wait=False)
    model, view = conversation.model, conversation.timeline
    qtbot.waitUntil(lambda: bool(approvals.asked), timeout=15_000)
    (prompt,) = approvals.asked
    assert prompt.tool == "terminal.run" and prompt.scope_label == Path(sys.executable).stem
    assert f"Program: {sys.executable}" in prompt.summary and "Folder: @project" in prompt.summary

    part = model.index_of_call("call_t")
    collapsed = view.visualRect(part).height()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(part).center())
    qtbot.waitUntil(lambda: "LINE-ONE" in (model.index_of_call("call_t").data(TimelineRole.TOOL_LIVE_OUTPUT) or ""), timeout=15_000)
    # The Output section is laid out in the part (taller than the header and the arguments alone).
    qtbot.waitUntil(lambda: view.visualRect(model.index_of_call("call_t")).height() > collapsed + 60)
    assert model.index_of_call("call_t").data(TimelineRole.TOOL_STATE) == "running"
    qtmodeltester.check(model)
    view.grab()

    (project.root / "go").write_text("", encoding="utf-8")
    qtbot.waitUntil(lambda: not conversation.busy, timeout=15_000)
    part = model.index_of_call("call_t")
    result = json.loads(part.data(TimelineRole.TOOL_RESULT))
    assert result["stdout"] == "LINE-ONE\ndone\n" and result["exitCode"] == 0
    assert part.data(TimelineRole.TOOL_LIVE_OUTPUT) == ""  # the result replaces the live text


def test_the_approval_dialog_names_the_program_a_conversation_grant_covers(qtbot: Any) -> None:
    from crewagent.ui.approval import ApprovalDialog
    from crewagent.worker.turn_values import ApprovalPrompt

    summary = "Program: /usr/bin/git\nArguments: status --short\nFolder: @project\nShell: none"
    prompt = ApprovalPrompt("r1", "c1", "terminal.run", summary, {"command": "git"}, "call_1", scope_label="git")
    dialog = ApprovalDialog(prompt)
    qtbot.addWidget(dialog)
    assert dialog.conversation_button.text() == "Allow git in this conversation"
    assert dialog.always_button.text() == "Always allow git"
    shown = [label.text() for label in dialog.findChildren(type(dialog.title))]
    assert summary in shown  # program, arguments, folder and shell, as they will run
