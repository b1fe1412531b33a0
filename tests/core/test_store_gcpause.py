"""Loading a log holds off the cyclic collector (its cost stays linear in the log), then restores it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from crewagent.core.messages import ConversationMessage
from crewagent.core.store.gcpause import gc_paused
from crewagent.core.store import log as log_module
from crewagent.core.store.log import encode_message, load_log


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every collection that starts while the fixture is active."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    yield started
    gc.callbacks.remove(count)


def test_a_long_load_runs_no_collection_while_it_parses(
    tmp_path: Path, collections: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "messages.jsonl"
    log.write_bytes(b"".join(encode_message(ConversationMessage.new("user", f"message {n}")) for n in range(3_000)))
    during: list[int] = []  # collections that started while the log's lines were being parsed
    lines_of = log_module.iter_log

    def watched(*args: object, **kwargs: object) -> Iterator[tuple[int, bytes]]:
        for line in lines_of(*args, **kwargs):
            before = len(collections)
            yield line  # the caller parses it before asking for the next one
            during.extend(collections[before:])

    monkeypatch.setattr(log_module, "iter_log", watched)
    assert gc.isenabled()
    loaded = load_log(log)
    assert len(loaded.messages) == 3_000
    # Each message allocates several objects: without the pause the collector ran every 700
    # allocations (a dozen times here, walking everything loaded so far in the full ones).
    assert during == []
    assert gc.isenabled()


def test_pauses_nest_and_restore_the_collector_as_it_was() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a collector disabled before stays disabled
    finally:
        gc.enable()


def test_a_pause_on_another_thread_keeps_the_collector_off_until_both_end() -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with gc_paused():
        pass
    assert not gc.isenabled(), "this thread's pause ended the other thread's"
    leave.set()
    thread.join(10)
    assert gc.isenabled()
