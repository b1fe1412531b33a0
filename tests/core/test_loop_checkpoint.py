"""The streaming checkpoint and what recovery makes of it (the crash windows, reproduced in-process)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.llm import LlmAdapter, ProviderConfig
from crewagent.core.loop import ConversationSession, TextDelta, toolloop
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import default_registry
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, finished, make_context, shape, turn
from crewagent.core.llm.local_server import Pause
from tests.fakes.scripted_server import ScriptedServer, Step, chunk, raw_stream, slow_text, text

WORDS = [f"w{n} " for n in range(14)]
#: The loop checkpoints at most every CHECKPOINT_INTERVAL_S (0.5 s) of a stream; these tests use a
#: tenth of it and stream 14 words 10 ms apart: the last word arrives at least 0.14 s after the
#: stream began, so at least one checkpoint is written whatever the load (as 0.84 s did for 0.5 s).
INTERVAL_S, WORD_GAP_S = 0.05, 0.01


@pytest.fixture(autouse=True)
def short_checkpoint_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolloop, "CHECKPOINT_INTERVAL_S", INTERVAL_S)


class _DiesBeforeClearing(RuntimeStore):
    """A store whose process 'dies' right after the answer was appended: the checkpoint is never cleared."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.saved: list[dict[str, Any]] = []

    def save_stream_checkpoint(self, project_id: str, conversation_id: str, data: dict[str, Any]) -> None:
        self.saved.append(dict(data))
        super().save_stream_checkpoint(project_id, conversation_id, data)

    def clear_stream_checkpoint(self, project_id: str, conversation_id: str) -> None:
        pass


def _recover(store: RuntimeStore, project: ProjectInfo, conversation_id: str, config: ProviderConfig) -> list[Any]:
    """What the app does when it opens a conversation (no model call)."""

    async def main() -> list[Any]:
        async with LlmAdapter(config) as adapter:
            session = ConversationSession(
                store, project, conversation_id, adapter=adapter, registry=default_registry(), tool_context=make_context(project, conversation_id)
            )
            return await asyncio.to_thread(session.recover)

    return asyncio.run(main())


def test_the_checkpoint_is_written_while_streaming_and_removed_at_the_end(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(slow_text(*WORDS, interval=WORD_GAP_S))
    seen: list[Any] = []

    def on_event(event: Any, session: ConversationSession) -> None:
        if isinstance(event, TextDelta):
            seen.append(store.read_stream_checkpoint(project.id, conversation.id))

    events = turn(store, project, conversation.id, scripted_llm.config(), "go", on_event=on_event)

    assert finished(events).reason == "completed"
    written = [c for c in seen if c is not None]
    assert written, "no checkpoint during a stream of 3 intervals"
    assert all("".join(WORDS).startswith(c["content"]) and c["content"] for c in written)
    assert store.read_stream_checkpoint(project.id, conversation.id) is None


def _slow_tool_calls(*words: str, interval: float) -> Step:
    """Text streamed slowly (so a checkpoint is written), then one fs.list call."""
    items: list[Any] = [chunk({"role": "assistant", "content": ""})]
    for word in words:
        items += [Pause(interval), chunk({"content": word})]
    head = {"index": 0, "id": "c1", "type": "function", "function": {"name": "fs_list", "arguments": "{}"}}
    items += [chunk({"tool_calls": [head]}), chunk({}, "tool_calls")]
    return raw_stream(*items, label="slow text, then a tool call")


@pytest.mark.parametrize("answer", ["text", "tool_calls"])
def test_a_crash_between_the_append_and_clearing_the_checkpoint_recovers_nothing_twice(
    answer: str, scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """The window a kill -9 can hit: the answer is in the log, its checkpoint still on disk."""
    dying = _DiesBeforeClearing(store.data_dir)
    if answer == "text":
        scripted_llm.script(slow_text(*WORDS, interval=WORD_GAP_S))
    else:
        scripted_llm.script(_slow_tool_calls(*WORDS, interval=WORD_GAP_S), text("Listed."))

    events = turn(dying, project, conversation.id, scripted_llm.config(), "go")

    assert finished(events).reason == "completed"
    assert dying.saved, "no checkpoint was written"
    log_before = assert_log_valid(store, project.id, conversation.id)
    assert store.read_stream_checkpoint(project.id, conversation.id) is not None  # left behind by the "crash"

    appended = _recover(RuntimeStore(store.data_dir), project, conversation.id, scripted_llm.config())

    assert appended == []  # the answer is already in the log: nothing comes back as "interrupted"
    assert [m.id for m in assert_log_valid(store, project.id, conversation.id)] == [m.id for m in log_before]
    assert store.read_stream_checkpoint(project.id, conversation.id) is None

    # and the next turn sends the answer once
    scripted_llm.script(text("ok"))
    assert finished(turn(store, project, conversation.id, scripted_llm.config(), "next")).reason == "completed"
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert sum("".join(WORDS) in (m.get("content") or "") for m in history) == 1


def test_a_checkpoint_of_a_dead_stream_comes_back_as_llm_interrupted(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """What a kill -9 mid-stream leaves (a checkpoint, no answer) becomes an interrupted error part."""
    scripted_llm.script(text("first"))
    turn(store, project, conversation.id, scripted_llm.config(), "hello")
    store.save_stream_checkpoint(
        project.id, conversation.id, {"messageId": "msg_dead", "savedAt": "x", "content": "Half a sent", "reasoning": "hmm", "stamp": {"mode": "chat"}}
    )

    scripted_llm.script(text("...ence, as I was saying."))
    events = turn(store, project, conversation.id, scripted_llm.config(), "continue")

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant", "assistant!error", "user", "assistant"]
    recovered = log[2]
    assert recovered.id == "msg_dead" and recovered.interrupted is True
    assert recovered.error["code"] == "LLM_INTERRUPTED" and recovered.reasoning_content == "hmm"
    assert recovered.text.startswith("Half a sent\n\nLLM_ERROR") and "LLM_INTERRUPTED" in recovered.text
    history = [m for m in assert_request_valid(scripted_llm.bodies[-1]) if m["role"] != "system"]
    assert history[2]["content"] == recovered.text
    assert store.read_stream_checkpoint(project.id, conversation.id) is None
