"""The desktop worker with an MCP server (issue 12): Stop cancels a call in flight, and quitting
stops the server's whole process group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crewagent.core.settings import SettingsStore
from crewagent.worker import WorkerThread
from tests.core.loop_helpers import assert_log_valid, error_code_of
from tests.core.mcp_helpers import MCP_GROUP, echo_server, mark, processes_with, wait_gone
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_provider

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(MCP_GROUP)]


def test_stop_cancels_an_mcp_call_and_quitting_leaves_no_process(
    qtbot: Any, qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer, store: Any, project: Any, conversation: Any
) -> None:
    marker = mark()
    SettingsStore().update(mcp={"servers": [echo_server("edge", marker, trusted=True)]})
    # The server starts a child of its own first: quitting must end the whole process group.
    scripted_llm.script(tool_calls(call("c1", "mcp__edge__spawn_child", "{}"), call("s1", "mcp__edge__slow", '{"seconds": 120}')))
    from crewagent.worker import Worker

    host = WorkerThread(Worker(isolated_dirs["data"], provider_factory=scripted_provider(scripted_llm))).start()
    try:
        client, recorder = TurnClient(host.worker), TurnRecorder(host.worker.turns)
        recorder.listen(host.worker.turns, "mcp_state_changed")  # Settings → MCP's live status
        with wait_signal(qtbot, host.worker.project_opened):
            client.open_project.emit(str(project.root))
        client.send.emit(project.id, conversation.id, "wait two minutes", "chat")
        # Started lazily by the turn, in the worker's loop; the server and its child.
        qtbot.waitUntil(lambda: len(recorder.of("tool_finished")) == 1 and len(processes_with(marker)) == 2, timeout=120_000)
        running = [state for (state,) in recorder.of("mcp_state_changed") if state.status == "running"]
        assert running and running[0].server_id == "edge" and "slow" in {tool.name for tool in running[0].tools}
        client.stop.emit(conversation.id)
        qtbot.waitUntil(recorder.finished, timeout=30_000)  # not the two minutes of the call
        assert recorder.of("turn_finished")[-1][1] == "stopped"
    finally:
        assert host.worker.turns.shutdown(timeout=15.0)
        host.stop()
    assert wait_gone(marker) == []
    results = {m.tool_call_id: m for m in assert_log_valid(store, project.id, conversation.id) if m.role == "tool"}
    assert error_code_of(results["c1"]) is None and error_code_of(results["s1"]) == "TOOL_INTERRUPTED"
