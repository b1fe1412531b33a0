"""kill -9 of a real ``crewagent chat`` while its subagent streams; the next run repairs both chains."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, error_code_of, shape
from tests.fakes.scripted_server import MODEL, ScriptedServer, call, slow_text, text, tool_calls
from tests.fakes.subagent_helpers import marker, only_sidechain, sidechain_valid, task_step
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote, ZygoteProcess

CHILD = marker("crash-child")


def _chat(
    zygote: Zygote, store: RuntimeStore, project: ProjectInfo, server: ScriptedServer, out: Path, *argv: str
) -> ZygoteProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-crash", CREWAGENT_MODEL=MODEL)
    return zygote.spawn(
        ["chat", "--data-dir", str(store.data_dir), "--project", str(project.root), "--provider", "openai-compatible", *argv],
        env=env, stdout=out,
    )


def _child_checkpoint(store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> dict[str, Any] | None:
    """The streaming checkpoint of the conversation's one subagent, once it has one."""
    chains = store.sidechains(project.id, conversation.id)
    sessions = [meta.sessionId for meta in chains.metas()]
    return chains.read_checkpoint(sessions[0]) if len(sessions) == 1 else None


def _wait_for(condition, proc: ZygoteProcess, out: Path, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"crewagent chat exited ({proc.returncode}): {out.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; output so far: {out.read_text(errors='replace')}")
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.xdist_group(ZYGOTE_GROUP)  # with the other users of the session's zygote: one zygote per run
def test_kill_while_a_child_streams_then_both_logs_recover(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path,
    crewagent_zygote: Zygote,
) -> None:
    scripted_llm.script(task_step("call_task", "crash-child", prompt="List, then explain at length."))
    scripted_llm.script_for(
        CHILD,
        tool_calls(call("call_list", "fs_list", json.dumps({"path": "@project"}))),
        slow_text(*[f"word{n} " for n in range(200)], interval=0.05),  # ~10 s: killed long before the end
    )
    proc = _chat(crewagent_zygote, store, project, scripted_llm, tmp_path / "run1.out", "--conversation", conversation.id, "--yes", "delegate it")
    try:
        _wait_for(lambda: len(scripted_llm.bodies_for(CHILD)) == 2, proc, tmp_path / "run1.out")
        # past the child's 500 ms streaming checkpoint
        _wait_for(lambda: bool((_child_checkpoint(store, project, conversation) or {}).get("content")), proc, tmp_path / "run1.out")
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)

    # what the dead process left: a running child, its checkpoint, an unanswered Task call
    meta = only_sidechain(store, project.id, conversation.id)
    chains = store.sidechains(project.id, conversation.id)
    assert meta.status == "running" and not chains.is_running(meta.sessionId)
    partial = chains.read_checkpoint(meta.sessionId)
    assert partial is not None and partial["content"].startswith("word0 word1")
    assert shape(store.load_messages(project.id, conversation.id).messages) == ["user", "assistant+calls"]

    # the next run recovers both chains before it calls the model
    scripted_llm.script(text("The delegated work was interrupted; I will redo it if you want."))
    proc = _chat(crewagent_zygote, store, project, scripted_llm, tmp_path / "run2.out", "--conversation", conversation.id, "what happened?")
    assert proc.wait(60) == 0, (tmp_path / "run2.out").read_text(errors="replace")

    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]
    assert "TOOL_INTERRUPTED" in history[2]["content"] and history[2]["tool_call_id"] == "call_task"
    assert set(history[2]) == {"role", "content", "tool_call_id"}

    log = assert_log_valid(store, project.id, conversation.id)
    repaired = log[2].to_log_dict()
    assert error_code_of(log[2]) == "TOOL_INTERRUPTED" and repaired["synthetic"] is True
    assert repaired["subagentSessionId"] == meta.sessionId and repaired["subagentStatus"] == "cancelled"
    assert chains.read_meta(meta.sessionId).status == "interrupted"
    child_log = sidechain_valid(store, project.id, conversation.id, meta.sessionId)
    assert shape(child_log) == ["user", "assistant+calls", "tool", "assistant!error", "assistant!error"]
    assert child_log[3].text.startswith(partial["content"]) and "LLM_INTERRUPTED" in child_log[3].text
    assert child_log[-1].to_log_dict()["error"]["code"] == "SUBAGENT_INTERRUPTED"
    assert chains.read_checkpoint(meta.sessionId) is None
