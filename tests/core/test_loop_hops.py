"""The store work a turn does per hop to the store's thread (session 13: fewer hops per turn).

Recovery and the user message share one hop; tool results that finished together share one (each
still its own durable append, in call order); the answer that ends a turn shares its hop with the
index flush; the streaming checkpoint is only cleared when one was written. What each hop wrote
is told apart with a context variable set around every ``asyncio.to_thread`` call (the thread
sees a copy of the caller's context).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import itertools
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock, Timeout

from crewagent.core.errors import StoreWriteError
from crewagent.core.llm import TextDelta
from crewagent.core.loop import ConversationSession, MessagePersisted
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.store.checkpoint import TURN_LOCK_NAME, ConversationBusy
from crewagent.core.tools import Tool, ToolContext, default_registry, ok
from tests.core.forked import fork
from tests.core.loop_helpers import assert_log_valid, finished, make_context, persisted, shape, turn
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

HOP: contextvars.ContextVar[int] = contextvars.ContextVar("hop", default=0)


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Number every hop to a thread; the store below records the hop of each of its calls."""
    numbers = itertools.count(1)
    real = asyncio.to_thread

    async def to_thread(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        token = HOP.set(next(numbers))
        try:
            return await real(func, *args, **kwargs)
        finally:
            HOP.reset(token)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)


class RecordingStore(RuntimeStore):
    """Records (what, hop) for appends, flushes and checkpoint clears; can fail or die on an append."""

    def __init__(self, data_dir: Path, *, fail_on: str | None = None, die_on: str | None = None) -> None:
        super().__init__(data_dir)
        self.calls: list[tuple[str, int]] = []
        self.fail_on = fail_on
        self.die_on = die_on

    def append_message(self, project_id: str, conversation_id: str, message: ConversationMessage) -> ConversationMessage:
        what = message.tool_call_id or message.role
        if what == self.die_on:
            os.kill(os.getpid(), signal.SIGKILL)
        if what == self.fail_on:
            raise StoreWriteError("disk full (test)")
        stored = super().append_message(project_id, conversation_id, message)
        self.calls.append((what, HOP.get()))
        return stored

    def flush(self) -> None:
        super().flush()
        self.calls.append(("flush", HOP.get()))

    def clear_stream_checkpoint(self, project_id: str, conversation_id: str) -> None:
        super().clear_stream_checkpoint(project_id, conversation_id)
        self.calls.append(("clear checkpoint", HOP.get()))


async def _echo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return ok(echo=args.get("value"))


def _registry() -> Any:
    registry = default_registry()
    registry.register(Tool("t.echo", "returns its argument", _echo, parameters={"type": "object", "properties": {"value": {"type": "string"}}}))
    return registry


def _three_echoes() -> Any:
    return tool_calls(*(call(f"c{i}", "t_echo", f'{{"value": "{i}"}}') for i in range(3)), text_parts=["Checking."])


def _recording(data_dir: Path, tmp_path: Path, **failure: str) -> tuple[RecordingStore, ProjectInfo, ConversationMeta]:
    store = RecordingStore(data_dir, **failure)
    project = store.create_project(tmp_path / "p", "P")
    return store, project, store.create_conversation(project.id, title="t")


def _hop_of(calls: list[tuple[str, int]], what: str) -> int:
    return next(hop for name, hop in calls if name == what)


def test_a_tool_turn_makes_four_hops_and_writes_everything_in_order(hops: None, scripted_llm: ScriptedServer, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    store, project, conversation = _recording(isolated_dirs["data"], tmp_path)
    scripted_llm.script(_three_echoes(), text("All ", "three ", "echoed."))

    # no execution audit: its hop per call would let the results finish one by one
    ctx = dataclasses.replace(make_context(project, conversation.id), audit=None)
    events = turn(store, project, conversation.id, scripted_llm.config(), "echo thrice", registry=_registry(), ctx=ctx)

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "tool", "tool", "assistant"]
    assert [m.tool_call_id for m in log[2:5]] == ["c0", "c1", "c2"]
    assert [m.id for m in persisted(events)] == [m.id for m in log]
    names = [name for name, _ in store.calls]
    assert names == ["user", "assistant", "c0", "c1", "c2", "assistant", "flush"]  # no checkpoint was written: none cleared
    # one hop each: the user message, the calls, the three results together, the answer with the flush
    assert len({hop for _, hop in store.calls}) == 4
    assert _hop_of(store.calls, "c0") == _hop_of(store.calls, "c1") == _hop_of(store.calls, "c2")
    assert store.calls[-1] == ("flush", store.calls[-2][1])
    # the flush in the answer's hop wrote the index: a new store instance sees the whole turn
    assert RuntimeStore(store.data_dir).get_conversation(project.id, conversation.id).messageCount == 6


def test_recovery_and_the_user_message_share_one_hop(hops: None, scripted_llm: ScriptedServer, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    store, project, conversation = _recording(isolated_dirs["data"], tmp_path)
    # a dead turn left a call without its result: recovery answers it, then the user message follows
    dangling = ConversationMessage.new("assistant", None, tool_calls=[{"id": "gone", "type": "function", "function": {"name": "fs.list", "arguments": "{}"}}])
    RuntimeStore(store.data_dir).append_message(project.id, conversation.id, dangling)
    scripted_llm.script(text("ok"))

    events = turn(store, project, conversation.id, scripted_llm.config(), "again")

    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["assistant+calls", "tool", "user", "assistant"]
    assert [name for name, _ in store.calls] == ["gone", "user", "assistant", "flush"]
    assert _hop_of(store.calls, "gone") == _hop_of(store.calls, "user")
    assert [m.id for m in persisted(events)] == [m.id for m in log[1:]]


def test_a_failure_inside_the_batched_hop_announces_what_was_stored_before_it(
    hops: None, scripted_llm: ScriptedServer, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    store, project, conversation = _recording(isolated_dirs["data"], tmp_path, fail_on="c1")
    scripted_llm.script(_three_echoes())
    seen: list[Any] = []

    ctx = dataclasses.replace(make_context(project, conversation.id), audit=None)
    with pytest.raises(StoreWriteError):
        turn(store, project, conversation.id, scripted_llm.config(), "echo thrice", registry=_registry(), ctx=ctx, on_event=lambda e, s: seen.append(e))

    log = store.load_messages(project.id, conversation.id).messages
    assert shape(log) == ["user", "assistant+calls", "tool"]
    assert [e.message.id for e in seen if isinstance(e, MessagePersisted)] == [m.id for m in log]
    assert store.calls[-1] == ("flush", store.calls[-1][1])  # the end of the turn still flushed
    # the next open answers the two calls whose results never reached the log
    store.fail_on = None
    _recover(store, project, conversation.id)
    log = assert_log_valid(store, project.id, conversation.id)
    assert shape(log) == ["user", "assistant+calls", "tool", "tool", "tool"]
    assert [m.tool_call_id for m in log[2:]] == ["c0", "c1", "c2"]
    assert [bool(m.synthetic) and "TOOL_INTERRUPTED" in str(m.content) for m in log[2:]] == [False, True, True]


def test_kill_9_inside_the_batched_hop_leaves_a_prefix_that_the_next_open_repairs(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """The process dies between two appends of the results' one hop: the results before it are
    on disk (each append is durable on its own), the rest are answered as interrupted."""
    scripted_llm.script(_three_echoes())

    def child() -> None:
        dying = RecordingStore(store.data_dir, die_on="c2")
        ctx = dataclasses.replace(make_context(project, conversation.id), audit=None)
        turn(dying, project, conversation.id, scripted_llm.config(), "echo thrice", registry=_registry(), ctx=ctx)

    pid = fork(child)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL

    reopened = RuntimeStore(store.data_dir)
    log = reopened.load_messages(project.id, conversation.id).messages
    assert shape(log) == ["user", "assistant+calls", "tool", "tool"]
    assert [m.tool_call_id for m in log[2:]] == ["c0", "c1"]
    _recover(reopened, project, conversation.id)
    log = assert_log_valid(reopened, project.id, conversation.id)
    assert [m.tool_call_id for m in log[2:]] == ["c0", "c1", "c2"]
    assert [bool(m.synthetic) and "TOOL_INTERRUPTED" in str(m.content) for m in log[2:]] == [False, False, True]


def test_the_turn_lock_excludes_filelock_and_is_excluded_by_it(store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> None:
    """The turn lock is the same flock filelock takes: a process still using filelock and this one
    exclude each other (and two takings in one process do too)."""
    path = store.log_path(project.id, conversation.id).parent / TURN_LOCK_NAME
    with store.turn_lock(project.id, conversation.id):
        with pytest.raises(Timeout):
            FileLock(path, timeout=0).acquire()
        with pytest.raises(ConversationBusy):
            with store.turn_lock(project.id, conversation.id):
                pass
        assert store.is_turn_running(project.id, conversation.id)
    other = FileLock(path, timeout=0)
    other.acquire()
    try:
        with pytest.raises(ConversationBusy):
            with store.turn_lock(project.id, conversation.id):
                pass
        assert store.is_turn_running(project.id, conversation.id)
    finally:
        other.release()
    assert not store.is_turn_running(project.id, conversation.id)
    with store.turn_lock(project.id, conversation.id):
        pass


def _recover(store: RuntimeStore, project: ProjectInfo, conversation_id: str) -> None:
    async def main() -> None:
        from crewagent.core.llm import LlmAdapter, ProviderConfig

        async with LlmAdapter(ProviderConfig(provider="openai-compatible", base_url="http://127.0.0.1:9/v1", api_key="k", model="m")) as adapter:
            session = ConversationSession(store, project, conversation_id, adapter=adapter, registry=default_registry(), tool_context=make_context(project, conversation_id))
            await asyncio.to_thread(session.recover)

    asyncio.run(main())


def test_deltas_already_queued_are_relayed_as_one_event_with_the_same_text(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    words = [f"w{i} " for i in range(40)]
    scripted_llm.script(text(*words))  # one burst: the pump queues most of it before the loop runs

    events = turn(store, project, conversation.id, scripted_llm.config(), "go")

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "".join(words)
    assert deltas[0] == words[0]  # the first delta is never held back to be joined
    assert len(deltas) < len(words)
    assert assert_log_valid(store, project.id, conversation.id)[-1].content == "".join(words)


def test_a_stream_sends_the_wire_messages_made_for_its_own_request_only(scripted_llm: ScriptedServer) -> None:
    """stream() reuses the messages outgoing_messages() encoded for the pre-send check, but only
    for that same request object: any other request is encoded from its own messages."""
    from crewagent.core.llm import LlmAdapter, LlmRequest

    scripted_llm.script(text("a"), text("b"))
    first = LlmRequest(messages=[{"role": "user", "content": "first"}])
    second = LlmRequest(messages=[{"role": "user", "content": "second"}])

    async def main() -> None:
        async with LlmAdapter(scripted_llm.config()) as adapter:
            adapter.outgoing_messages(first)
            await adapter.complete(second)
            checked = adapter.outgoing_messages(first)
            await adapter.complete(first)
            assert checked == [{"role": "user", "content": "first"}]

    asyncio.run(main())
    assert [body["messages"] for body in scripted_llm.bodies] == [[{"role": "user", "content": "second"}], [{"role": "user", "content": "first"}]]
