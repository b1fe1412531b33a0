"""kill -9 of a real process in the middle of a Regenerate: the conversation reloads on the new branch, valid.

The process runs a script (the Regenerate through core's entry point), forked from the session's
warmed-up zygote (tests/fakes/zygote.py) instead of a fresh interpreter.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.context import build_llm_messages
from crewagent.core.export import export_conversation
from crewagent.core.loop.session import recover_and_load
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, current_branch, validate_messages
from tests.fakes.scripted_server import ScriptedServer, slow_text
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote

#: Regenerates the conversation's last answer through core's single entry point, as the window does.
_REGENERATE = """
import asyncio, sys
from crewagent.core.loop.factory import provider_config
from crewagent.core.message_actions import regenerate_turn
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from crewagent.core.turns import run_turn

async def main() -> None:
    store = RuntimeStore(sys.argv[1])
    project = store.open_project(sys.argv[2])
    settings = SettingsStore().load()
    config = provider_config(settings, SecretStore(), provider="openai-compatible", model="scripted")
    plan = regenerate_turn(store.load_messages(project.id, sys.argv[3]).messages)
    async for _ in run_turn(store, project, sys.argv[3], plan.text, mode="chat", settings=settings, config=config, replaces=plan.replaces):
        pass

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_a_kill_mid_regenerate_reloads_into_a_valid_request_on_the_new_branch(
    tmp_path: Path, isolated_dirs: dict[str, Path], store: Any, project: Any, conversation: Any, scripted_llm: ScriptedServer,
    crewagent_zygote: Zygote,
) -> None:
    pid, cid = project.id, conversation.id
    question = store.append_message(pid, cid, ConversationMessage.new("user", "2+2?"))
    store.append_message(pid, cid, ConversationMessage.new("assistant", "Four."))
    scripted_llm.script(slow_text(*(f"w{n} " for n in range(400)), interval=0.02))
    script = tmp_path / "regenerate.py"
    script.write_text(_REGENERATE, encoding="utf-8")
    env = {**os.environ, "OPENAI_BASE_URL": scripted_llm.base_url + "/v1", "OPENAI_API_KEY": "sk-test"}
    errors = tmp_path / "regenerate.err"
    proc = crewagent_zygote.spawn(
        [str(isolated_dirs["data"]), str(project.root), cid], script=script, env=env, stderr=errors,
    )
    try:
        deadline = time.monotonic() + 60
        # Killed once the answer has streamed long enough to be checkpointed (the 500 ms checkpoint).
        while not (seen := (store.read_stream_checkpoint(pid, cid) or {}).get("content")):
            assert proc.poll() is None, errors.read_text(errors="replace")
            assert time.monotonic() < deadline, "the regenerate never streamed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)

    loaded = recover_and_load(store, project, cid)  # what the window and every command do first
    current = current_branch(loaded.messages)
    assert [m.role for m in current] == ["user", "assistant"]
    assert current[0].replaces == question.id and current[0].text == "2+2?"
    # What was checkpointed before the kill survives (under load that may be only the first word).
    assert current[1].interrupted and current[1].text.startswith(seen) and seen.startswith("w0 ")
    request = build_llm_messages(loaded.messages)
    assert request.ok and validate_messages(request.messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert not any("Four." in str(m.get("content")) for m in request.messages)
    # The old answer is still in the log, and the export agrees with the window about the branch.
    assert "Four." in [m.text for m in loaded.messages]
    assert "Four." not in export_conversation(store, pid, cid, "openai").text
