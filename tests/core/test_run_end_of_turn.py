"""A kill -9 at the end of a run's turn, just before its phase is written, is resumed by the next turn.

A run's turn ends by writing its phase into ``runs/index.json`` (when it changed) and then removing
its running marker. A process killed between its last persisted answer and that write leaves the
old phase and the marker: the next turn must see that the last one died (intent ``resume``), end
in the right phase, and leave a log and requests that are valid chains.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest

from crewagent.core.loop import LoopEvent, TurnFinished
from crewagent.core.runs import RunIndex, RunMetadata
from crewagent.core.runs.engine import running_marker
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover
from crewagent.core.turns import TurnHooks, run_turn
from tests.core.loop_helpers import assert_log_valid, assert_request_valid
from tests.core.run_helpers import install_notes, start_run
from tests.fakes.scripted_server import ScriptedServer, text
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote


def _turn(store: RuntimeStore, project: ProjectInfo, run: RunMetadata, server: ScriptedServer, message: str) -> list[LoopEvent]:
    async def main() -> list[LoopEvent]:
        turn = run_turn(
            store, project, run.conversationId, message, mode="run", settings=Settings(), config=server.config(),
            hooks=TurnHooks(approver=AutoApprover()),
        )
        return [event async for event in turn]

    return asyncio.run(main())


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

def end_turn(self, changes):
    # The model's last answer is in the log; the run's phase is about to be written.
    Path(reached).write_text("ready", encoding="utf-8")
    time.sleep(600)

engine.RunDriver._end_turn = end_turn
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
@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_a_kill_just_before_the_phase_write_is_resumed_by_the_next_turn(
    store: RuntimeStore, project: ProjectInfo, tmp_path: Path, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer,
    crewagent_zygote: Zygote,
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    run = start_run(store, project, package)
    index = RunIndex(project.runtime_dir)
    reached = tmp_path / "reached"
    scripted_llm.script(text("What should the note say?"))
    # A real process killed with SIGKILL: the script forked from the session's zygote, which has
    # imported the app already (a fresh interpreter spent 3 CPU-s on the imports).
    script, output = tmp_path / "child.py", tmp_path / "child.out"
    script.write_text(_CHILD, encoding="utf-8")
    argv = [str(isolated_dirs["data"]), str(project.root), run.conversationId, scripted_llm.base_url, str(reached)]
    child = crewagent_zygote.spawn(argv, env=dict(os.environ), script=script, stdout=output)
    try:
        deadline = time.monotonic() + 120
        while not reached.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # polls a file another process writes; no event crosses processes
        assert reached.exists(), output.read_text(errors="replace")
        child.send_signal(signal.SIGKILL)
        code = child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    assert code == -signal.SIGKILL
    out = output.read_text(errors="replace")
    assert "TurnStarted" in out.split() and "TurnFinished" not in out.split()

    # On disk: the old phase and the marker (the answer before it is in the log).
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
