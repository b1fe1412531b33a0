"""The end of a run's turn: its writes run beside the session's own end of turn, and nothing sees them half done.

A run's turn ends by writing its phase into ``runs/index.json`` (when it changed) and removing its
running marker. Those writes start as the turn ends and run on a thread of their own while the
session writes the conversations index; the session waits for them before it releases the
conversation's turn lock, and this process's readers of the runs index wait for them too. A
kill -9 before they are made leaves what it always left: the old phase and the marker, and the
next turn resumes the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.errors import CrewAgentError
from crewagent.core.loop import LoopEvent, TurnFinished
from crewagent.core.runs import RunIndex, RunMetadata, engine
from crewagent.core.runs.engine import running_marker
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn
from tests.core.loop_helpers import assert_log_valid, assert_request_valid
from tests.core.run_helpers import install_notes, start_run
from tests.fakes.scripted_server import ScriptedServer, text

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0


def _turn(store: RuntimeStore, project: ProjectInfo, run: RunMetadata, server: ScriptedServer, message: str) -> list[LoopEvent]:
    async def main() -> list[LoopEvent]:
        turn = run_turn(
            store, project, run.conversationId, message, mode="run", settings=Settings(), config=server.config(),
            hooks=TurnHooks(approver=AutoApprover()),
        )
        return [event async for event in turn]

    return asyncio.run(main())


def test_the_phase_write_runs_beside_the_session_flush_under_the_turn_lock_and_readers_wait_for_it(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path],
    scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    index = RunIndex(project.runtime_dir)
    flushing = threading.Event()
    seen: dict[str, Any] = {}
    original_end, original_flush = engine._end_turn, RuntimeStore.flush

    def end_turn(*args: Any) -> RunMetadata:
        # The first turn's phase write (idle -> waiting-user) is held back until the session has
        # begun its own end of turn: it can only get there if it does not wait for this write.
        seen["flush began first"] = flushing.wait(WAIT_S)
        seen["turn still held"] = store.is_turn_running(project.id, run.conversationId)
        return original_end(*args)

    def flush(self: RuntimeStore) -> None:
        flushing.set()
        # A reader of this process, while the write is under way: it waits for it.
        seen["phase read meanwhile"] = index.get(run.runId).phase
        original_flush(self)

    monkeypatch.setattr(engine, "_end_turn", end_turn)
    monkeypatch.setattr(RuntimeStore, "flush", flush)
    scripted_llm.script(text("What should the note say?"))

    events = _turn(store, project, run, scripted_llm, "start")

    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "waiting_user"
    assert seen == {"flush began first": True, "turn still held": True, "phase read meanwhile": "waiting-user"}
    # The turn returned only once the write was made: the index and the marker say it ended.
    assert index.get(run.runId).phase == "waiting-user"
    assert not running_marker(project, run.runId).exists()
    assert not store.is_turn_running(project.id, run.conversationId)


def test_a_failed_phase_write_is_reported_by_the_turn(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    index = RunIndex(project.runtime_dir)
    scripted_llm.script(text("What should the note say?"))
    broken = threading.Event()
    original_end = engine._end_turn

    def end_turn(*args: Any) -> RunMetadata:
        index.path.write_text("{damaged", encoding="utf-8")  # after the turn's lookup, before the write
        broken.set()
        return original_end(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "_end_turn", end_turn)
        with pytest.raises(CrewAgentError, match="cannot be read"):
            _turn(store, project, run, scripted_llm, "start")
    assert broken.is_set()
    assert not store.is_turn_running(project.id, run.conversationId)  # the lock was let go all the same


_CHILD = """
import asyncio, sys, time
from pathlib import Path
from crewagent.core.llm import ProviderConfig
from crewagent.core.runs import engine
from crewagent.core.settings import Settings
from crewagent.core.store import RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn

data, folder, conversation_id, base_url, reached = sys.argv[1:6]

def end_turn(*args):
    # The turn has ended (its TurnFinished is out); its phase write is about to be made.
    Path(reached).write_text("ready", encoding="utf-8")
    time.sleep(600)

engine._end_turn = end_turn
store = RuntimeStore(Path(data))
project = store.open_project(folder)
config = ProviderConfig(provider="openai-compatible", base_url=base_url, api_key="sk-test", model="test-model", timeout=30.0)

async def main():
    async for event in run_turn(store, project, conversation_id, "start", mode="run", settings=Settings(), config=config,
                                hooks=TurnHooks(approver=AutoApprover())):
        print(type(event).__name__, flush=True)

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_kill_after_the_turn_ended_but_before_its_phase_write_is_resumed_by_the_next_turn(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    index = RunIndex(project.runtime_dir)
    reached = tmp_path / "reached"
    scripted_llm.script(text("What should the note say?"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), str(ROOT)])}
    argv = [sys.executable, "-c", _CHILD, str(isolated_dirs["data"]), str(project.root), run.conversationId, scripted_llm.base_url, str(reached)]
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not reached.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # polls a file another process writes; no event crosses processes
        assert reached.exists(), child.communicate(timeout=30)
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    assert child.returncode == -signal.SIGKILL
    assert "TurnFinished" in out.split()  # the end had been reported

    # On disk, what a kill just before the write always left: the old phase, the marker.
    assert index.get(run.runId).phase == "idle"
    assert running_marker(project, run.runId).exists()
    assert_log_valid(store, project.id, run.conversationId)

    scripted_llm.script(text("Where were we? Tell me what the note should say."))
    events = _turn(store, project, run, scripted_llm, "a short note")

    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "waiting_user"
    directive = json.dumps(scripted_llm.bodies[-1]["messages"])
    assert "intent: resume" in directive  # the marker said the last turn died: resumed, not started again
    assert index.get(run.runId).phase == "waiting-user"
    assert not running_marker(project, run.runId).exists()
    for body in scripted_llm.bodies:
        assert_request_valid(body)
    assert_log_valid(store, project.id, run.conversationId)
