"""MCP through the real window and worker (issue 12), against real third-party servers and the
scripted OpenAI-compatible server: the "Done when" path with mcp-server-time, added in Settings → MCP,
and a server-everything image shown inline in its tool part."""

from __future__ import annotations

import json
import shlex
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices

from crewagent.core.settings import SettingsStore
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline import TimelineRole
from crewagent.ui.timeline.rows.tool import tool_label
from crewagent.worker import WorkerThread
from tests.core.mcp_helpers import EVERYTHING, MCP_GROUP, START_TIMEOUT, everything_missing, processes_with_env
from tests.fakes import mcp_fork
from tests.fakes.mcp_fork import MCPForkServer
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.ui.test_conversation import ScriptedApprovals, _option, approvals, host, make_window, open_conversation, rows, say  # noqa: F401
from tests.ui.test_mcp_images import Opened
from tests.ui.test_settings import no_system_keyring  # noqa: F401  (fixture: keys go to the private file)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(MCP_GROUP)]


def _gone(qtbot: Any, marker: str) -> None:
    qtbot.waitUntil(lambda: processes_with_env(marker) == [], timeout=20_000)


def test_done_when_mcp_server_time_added_in_settings_answers_the_tokyo_question_and_quitting_leaves_nothing(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow],
    approvals: ScriptedApprovals, host: WorkerThread, mcp_fork_server: MCPForkServer | None,
) -> None:
    main = make_window()
    open_conversation(qtbot, main, project.root)
    marker = f"CREWAGENT_TEST_MARK=time-{uuid.uuid4().hex}"  # in the server's environment: finds its process

    # Settings → MCP: add mcp-server-time, test it (its tools), save.
    main.settings_dialog.show_settings("mcp")
    page = main.settings_dialog.mcp_page
    page.add_button.click()
    form = page.form
    form.server_id.setText("time")
    # `python -m mcp_server_time --local-timezone UTC`, forked from the session's MCP fork server
    # (tests/fakes/mcp_fork.py: the command the app starts passes it the app's pipes).
    command, *args = mcp_fork.command("mcp_server_time", "--local-timezone", "UTC")
    form.command.setText(command)
    form.args.setText(shlex.join(args))
    form.env.setPlainText(marker)
    form.start_timeout.setValue(START_TIMEOUT)
    form.done_button.click()
    assert not form.isVisible(), form.error.text()
    page.test_button.click()
    qtbot.waitUntil(lambda: page.status_text("time") != "starting…", timeout=int(START_TIMEOUT * 1000))
    assert page.status_text("time").startswith("works · "), page.status.text()
    assert "get_current_time" in {page.tools.topLevelItem(n).text(0) for n in range(page.tools.topLevelItemCount())}  # type: ignore[union-attr]
    main.settings_dialog.apply()
    qtbot.waitUntil(lambda: main.settings_dialog.status.text() == "Saved. The changes are in effect.")
    main.settings_dialog.close()

    # The model asks for the Tokyo time; the turn starts the server (it goes green) and calls it.
    scripted_llm.script(
        tool_calls(call("t1", "mcp__time__get_current_time", json.dumps({"timezone": "Asia/Tokyo"}))),
        text("It is evening in Tokyo."),
    )
    approvals.answers = ["allow_once"]  # asked unless the tool declares readOnlyHint
    say(qtbot, main, "what time is it in Tokyo?", wait=False)
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: not conversation.busy, timeout=int(START_TIMEOUT * 1000))
    assert rows(main)[-2:] == [("tool mcp__time__get_current_time", "ok"), ("assistant", "It is evening in Tokyo.")]
    assert page.status_text("time").startswith("running · ")  # the live status of the server the turn started
    part = conversation.model.index_of_call("t1")
    assert tool_label(part.data(TimelineRole.TOOL_NAME)) == ("get_current_time", "MCP time")  # the MCP call and its server
    result = json.loads(part.data(TimelineRole.TOOL_RESULT))
    assert result["ok"] is True and json.loads(result["content"])["timezone"] == "Asia/Tokyo"
    # The answer was written from the tool's result: the second model call carried it.
    [tool_message] = [m for m in scripted_llm.bodies[1]["messages"] if m["role"] == "tool"]
    assert "Asia/Tokyo" in tool_message["content"]
    assert processes_with_env(marker)  # running, until the app quits

    main.close()
    host.stop()  # quitting the app: the worker stops every MCP server
    _gone(qtbot, marker)


def test_a_server_everything_image_shows_inline_and_opens(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow],
    approvals: ScriptedApprovals, isolated_dirs: dict[str, Path],
) -> None:
    reason = everything_missing()
    if reason:
        pytest.skip(reason)
    server = {"id": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"], "startTimeoutSeconds": START_TIMEOUT}
    SettingsStore().update(mcp={"servers": [server]})
    scripted_llm.script(tool_calls(call("e1", "mcp__everything__get-tiny-image", "{}")), text("Here is the picture."))
    approvals.answers = ["allow_once"]
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "show me a tiny image", wait=False)
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: not conversation.busy, timeout=int(START_TIMEOUT * 1000))
    assert ("tool mcp__everything__get-tiny-image", "ok") in rows(main)

    view, model = conversation.timeline, conversation.model
    key = str(model.index_of_call("e1").data(TimelineRole.KEY))
    closed = view.visualRect(model.index_of_call("e1")).height()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(model.index_of_call("e1")).center())
    qtbot.waitUntil(lambda: bool(view.view_state.images.get(key)), timeout=30_000)  # read and scaled by the worker
    [image] = view.view_state.images[key]
    assert image.problem is None and image.thumbnail is not None and not image.thumbnail.isNull()
    qtbot.waitUntil(lambda: view.visualRect(model.index_of_call("e1")).height() > closed + image.thumbnail.height())

    part = model.index_of_call("e1")
    hits = {hit.name: hit.rect for hit in view.timeline_delegate._layout(_option(view, part), part, None).hits}
    opened = Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=hits["open_image:0"].center().toPoint())
        qtbot.waitUntil(lambda: len(opened.urls) == 1)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    path = Path(opened.urls[0].toLocalFile())
    assert path.read_bytes().startswith(b"\x89PNG") and "state" in path.parts and "mcp" in path.parts


def test_the_mcp_page_shows_the_live_stderr_of_a_server_a_turn_started(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    marker = uuid.uuid4().hex
    script = f"import sys; sys.stderr.write('turn-started server says {marker}\\n'); sys.stderr.flush(); sys.exit(3)"
    SettingsStore().update(mcp={"servers": [{"id": "noisy", "command": sys.executable, "args": ["-c", script]}]})
    scripted_llm.script(text("No tools today."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "hello", wait=False)
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: not conversation.busy, timeout=60_000)  # the server failed to start: a turn without its tools

    main.settings_dialog.show_settings("mcp")
    page = main.settings_dialog.mcp_page
    assert page.status_text("noisy").startswith("error: ")  # the turn's start of it, told before the dialog was built
    page.servers.setCurrentItem(page.servers.topLevelItem(0))
    assert page.selected_id() == "noisy"
    # Never tested from the page: the log is the one the turn worker's server manager keeps.
    qtbot.waitUntil(lambda: f"turn-started server says {marker}" in page.log.toPlainText(), timeout=30_000)
    assert "[crewagent] MCP server 'noisy'" in page.log.toPlainText()  # the app's own note on why it stopped
