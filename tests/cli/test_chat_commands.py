"""``crewagent chat`` with command tools: --yes runs them, no terminal denies them, a terminal asks, kill -9 leaves nothing running.

The two real ``crewagent chat`` processes are forked from the session's zygote (tests/fakes/zygote.py):
real processes, on a terminal or killed with SIGKILL, without a fresh interpreter's 2-3 CPU-s of imports."""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.cli import main
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from tests.core.loop_helpers import assert_log_valid
from tests.core.test_tools_terminal import gone
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote, ZygoteProcess

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and ptys")


@pytest.fixture
def scripted_provider(scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    SettingsStore().update(llm={"provider": "openai-compatible", "baseUrl": scripted_llm.base_url, "model": "scripted-model"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return scripted_llm


def run_call(call_id: str, *args: str, command: str = sys.executable) -> Any:
    return call(call_id, "terminal_run", json.dumps({"command": command, "args": list(args)}))


def tool_results(server: ScriptedServer, request: int) -> dict[str, Any]:
    return {m["tool_call_id"]: json.loads(m["content"]) for m in server.bodies[request]["messages"] if m["role"] == "tool"}


def test_yes_runs_the_command_and_without_a_terminal_it_is_denied(
    scripted_provider: ScriptedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    scripted_provider.script(
        tool_calls(run_call("c1", "-c", "print('hello from the tool')")), text("Ran."),
        tool_calls(run_call("c2", "-c", "print('never')")), text("Denied."),
    )  # fmt: skip
    assert main(["chat", "--project", str(folder), "--new", "--yes", "run it"]) == 0
    err = capsys.readouterr().err
    assert "hello from the tool" in err  # the live output, on stderr as it came
    ran = tool_results(scripted_provider, 1)["c1"]
    assert ran["ok"] is True and ran["stdout"] == "hello from the tool\n" and ran["exitCode"] == 0

    assert main(["chat", "--project", str(folder), "run it again"]) == 0  # stdin is not a terminal here
    denied = tool_results(scripted_provider, 3)["c2"]
    assert denied["error"]["code"] == "E_USER_DENIED" and "--yes" in denied["error"]["message"]
    conversation_id = capsys.readouterr().err.splitlines()[0].strip()
    store = RuntimeStore()
    assert_log_valid(store, store.open_project(folder).id, conversation_id)


def _chat_process(zygote: Zygote, folder: Path, *argv: str, **files: Path | str) -> ZygoteProcess:
    """``crewagent chat --project FOLDER --new ARGV...``, forked from the zygote with this process's environment."""
    return zygote.spawn(["chat", "--project", str(folder), "--new", *argv], env=dict(os.environ), **files)


@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_on_a_terminal_the_user_allows_a_program_for_the_conversation_then_denies_another(
    scripted_provider: ScriptedServer, tmp_path: Path, crewagent_zygote: Zygote
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    scripted_provider.script(
        tool_calls(run_call("c1", "-c", "print(1)")),
        tool_calls(run_call("c2", "-c", "print(2)")),  # the same program: not asked again
        tool_calls(run_call("c3", command="true")),  # another program: asked, and refused
        text("Done."),
    )
    controller, terminal = pty.openpty()
    os.write(controller, b"c\nn\n")  # typed ahead: the first question reads "c", the next "n"
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    try:
        proc = _chat_process(crewagent_zygote, folder, "run things", stdin=os.ttyname(terminal), stdout=out, stderr=err)
        os.close(terminal)
        assert proc.wait(timeout=120) == 0, err.read_text(errors="replace")
    finally:
        os.close(controller)
    asked = out.read_text(errors="replace")
    assert asked.count("Allow terminal.run?") == 2 and f"Program: {sys.executable}" in asked
    assert f"[c] {Path(sys.executable).stem} for this conversation" in asked
    assert tool_results(scripted_provider, 1)["c1"]["stdout"] == "1\n"
    assert tool_results(scripted_provider, 2)["c2"]["stdout"] == "2\n"
    assert tool_results(scripted_provider, 3)["c3"]["error"]["code"] == "E_USER_DENIED"


#: Writes its pid and its grandchild's to ``pids``, then waits to be killed.
TREE = (
    "import os, subprocess, sys, time\n"
    "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "open('pids.tmp', 'w').write(f'{os.getpid()} {g.pid}'); os.replace('pids.tmp', 'pids')\n"
    "time.sleep(120)\n"
)


@pytest.mark.slow  # a real crewagent process killed mid-command
@pytest.mark.xdist_group(ZYGOTE_GROUP)
def test_kill_9_of_crewagent_chat_leaves_no_process_of_the_command(
    scripted_provider: ScriptedServer, tmp_path: Path, crewagent_zygote: Zygote
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    scripted_provider.script(tool_calls(run_call("c1", "-c", TREE)))  # the app dies before it answers
    err = tmp_path / "err.txt"
    proc = _chat_process(crewagent_zygote, folder, "--yes", "run", stderr=err)
    pids_file = folder / "pids"
    deadline = time.monotonic() + 90
    try:
        while not pids_file.exists():
            assert proc.poll() is None, err.read_text(errors="replace")
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)  # polls a file another process writes; no event crosses processes
        child, grandchild = map(int, pids_file.read_text().split())
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert gone(child) and gone(grandchild)
