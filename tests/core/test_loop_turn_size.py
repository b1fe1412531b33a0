"""A turn never dies of its own size (issue 15, items 8-10).

Ordinary agent turns (three 45 KB reads, twenty parallel 20 KB reads, one 2 MB write, the same
45 KB file read eight times) used to end in CONTEXT_STILL_TOO_LARGE. Each runs here with the
default settings through the real ToolLoop and the scripted OpenAI-compatible server over HTTP,
for an unknown model (the default window) and a known one, and must end ``completed`` with
every request a valid chain under the budget.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest

from crewagent.core.context import ContextBudget, EstimateCounter, TokenCounter, default_counter
from crewagent.core.context.tokens import messages_tokens
from crewagent.core.llm.local_server import RecordedRequest, Reply
from crewagent.core.loop import TurnSettings
from crewagent.core.loop.factory import context_window, turn_settings
from crewagent.core.messages import ConversationMeta
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, finished, persisted, result_of, turn
from tests.fakes.scripted_server import ScriptedServer, Step, call, text, tool_calls

KB = 1024
WORDS = "the agent reads files writes notes and reports what it found in each folder of the project".split()
MODELS = ["scripted-model", "gpt-4o"]


@cache
def prose(size: int, seed: int) -> str:
    """About ``size`` bytes of word salad in lines: tokenizes like ordinary text (~5 chars a token).
    Cached: the tests write a text and then compare what came back with it (the 2 MB one twice)."""
    rng = random.Random(seed)
    lines: list[str] = []
    used = 0
    while used < size:
        line = " ".join(rng.choices(WORDS, k=12)) + f" {rng.randrange(10**6)}"
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)[:size]


def settings_for(server: ScriptedServer, model: str) -> tuple[Any, TurnSettings]:
    """The provider config and the turn settings the app builds from the default settings."""
    config = server.config(model=model)
    settings = Settings()
    return config, turn_settings(settings, "chat", window=context_window(settings, config))


def read(call_id: str, path: str) -> Any:
    return call(call_id, "fs_read", json.dumps({"path": path}))


def assert_requests_fit(server: ScriptedServer, budget: ContextBudget, counter: TokenCounter) -> list[list[dict[str, Any]]]:
    """Every request the server received is a valid chain and under the budget: with tokens counted,
    its messages and tool definitions together fit the window minus the answer's reserve."""
    resolved = budget.for_counter(counter)
    requests = []
    for body in server.bodies:
        messages = assert_request_valid(body)
        tokens = messages_tokens(messages, counter)
        if not resolved.count_chars:
            tokens += counter.count(json.dumps(body["tools"], ensure_ascii=False))
        chars = sum(len(m.get("content") or "") + sum(len(c["function"]["arguments"]) for c in m.get("tool_calls") or ()) for m in messages)
        assert resolved.fits(chars, tokens), (resolved.source, chars, tokens)
        requests.append(messages)
    return requests


def run_turn(
    server: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, model: str, message: str, **kwargs: Any
) -> tuple[list[Any], TurnSettings]:
    config, per_turn = settings_for(server, model)
    events = turn(store, project, conversation.id, config, message, settings=per_turn, **kwargs)
    return events, per_turn


def spilled_files(store: RuntimeStore, project: ProjectInfo, requests: list[list[dict[str, Any]]]) -> dict[str, str]:
    """The @state aliases the requests name for shortened items, and the text of each file."""
    state = store.state_dir(project.id)
    found: dict[str, str] = {}
    for messages in requests:
        for m in messages:
            texts = [m.get("content") or ""] + [c["function"]["arguments"] for c in m.get("tool_calls") or ()]
            for value in texts:
                marker = "The full output is at " if "The full output is at " in value else "the arguments in full are at "
                if marker in value:
                    alias = value.split(marker, 1)[1].split(";", 1)[0].split("]", 1)[0].split('"', 1)[0]
                    found[alias] = (state / alias.removeprefix("@state/")).read_text(encoding="utf-8")
    return found


@pytest.mark.parametrize("model", MODELS)
def test_three_45kb_reads_in_one_turn_complete(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, model: str
) -> None:
    for n in range(3):
        (project.root / f"doc{n}.txt").write_text(prose(45 * KB, n), encoding="utf-8")
    scripted_llm.script(
        tool_calls(read("r0", "@project/doc0.txt")),
        tool_calls(read("r1", "@project/doc1.txt")),
        tool_calls(read("r2", "@project/doc2.txt")),
        text("I read all three."),
    )
    events, per_turn = run_turn(scripted_llm, store, project, conversation, model, "read the three docs")

    assert finished(events).reason == "completed", finished(events)
    requests = assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    log = assert_log_valid(store, project.id, conversation.id)
    # The log keeps every result whole; the request after the last read has it whole too.
    results = [result_of(m) for m in log if m.role == "tool"]
    assert [r["content"] for r in results] == [prose(45 * KB, n) for n in range(3)]
    assert json.loads(requests[-1][-1]["content"])["content"] == prose(45 * KB, 2)
    spilled = spilled_files(store, project, requests)
    assert bool(spilled) == (model == "scripted-model")  # 3 x 45 KB fit a 128k window whole
    for alias, full in spilled.items():
        assert alias.startswith("@state/logs/tool-results/") and json.loads(full)["ok"] is True


@pytest.mark.parametrize("model", MODELS)
def test_twenty_parallel_20kb_reads_complete(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, model: str
) -> None:
    for n in range(20):
        (project.root / f"part{n:02d}.txt").write_text(prose(20 * KB, 100 + n), encoding="utf-8")
    scripted_llm.script(
        tool_calls(*(read(f"p{n}", f"@project/part{n:02d}.txt") for n in range(20))),
        text("Twenty parts read."),
    )
    events, per_turn = run_turn(scripted_llm, store, project, conversation, model, "read every part")

    assert finished(events).reason == "completed", finished(events)
    requests = assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    assert [m.get("tool_call_id") for m in requests[-1] if m["role"] == "tool"] == [f"p{n}" for n in range(20)]
    log = assert_log_valid(store, project.id, conversation.id)
    assert len([m for m in log if m.role == "tool"]) == 20
    spilled = spilled_files(store, project, requests)
    assert spilled or model != "scripted-model"
    for full in spilled.values():
        assert json.loads(full)["content"] in {prose(20 * KB, 100 + n) for n in range(20)}


@pytest.mark.parametrize("model", MODELS)
def test_a_turn_that_writes_a_2mb_file_completes(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, model: str
) -> None:
    content = prose(2 * KB * KB, 7)
    arguments = json.dumps({"path": "@project/out/big.txt", "content": content})
    scripted_llm.script(
        tool_calls(call("w1", "fs_write", *(arguments[i : i + 65536] for i in range(0, len(arguments), 65536)))),
        text("Written."),
    )
    events, per_turn = run_turn(scripted_llm, store, project, conversation, model, "write the big file")

    assert finished(events).reason == "completed", finished(events)
    assert (project.root / "out" / "big.txt").read_text(encoding="utf-8") == content
    requests = assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    log = assert_log_valid(store, project.id, conversation.id)
    stored_call = next(m for m in log if m.tool_calls).tool_calls[0]  # type: ignore[index]
    assert stored_call.function.arguments == arguments  # the log keeps the arguments whole
    sent = next(m for m in requests[-1] if m.get("tool_calls"))["tool_calls"][0]["function"]["arguments"]
    shortened = json.loads(sent)  # still a JSON object, its path readable
    assert shortened["path"] == "@project/out/big.txt" and len(sent) < 5_000
    assert list(spilled_files(store, project, requests).values()) == [arguments]


@pytest.mark.parametrize("model", MODELS)
def test_reading_a_45kb_file_eight_times_in_a_row_completes(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, model: str
) -> None:
    body = prose(45 * KB, 42)
    (project.root / "notes.txt").write_text(body, encoding="utf-8")
    scripted_llm.script(*(tool_calls(read(f"n{i}", "@project/notes.txt")) for i in range(8)), text("Same file eight times."))
    events, per_turn = run_turn(scripted_llm, store, project, conversation, model, "read notes.txt again and again")

    assert finished(events).reason == "completed", finished(events)
    requests = assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    assert len(requests) == 9
    assert json.loads(requests[-1][-1]["content"])["content"] == body  # the newest result goes whole
    log = assert_log_valid(store, project.id, conversation.id)
    assert [result_of(m)["content"] for m in log if m.role == "tool"] == [body] * 8
    assert bool(spilled_files(store, project, requests)) == (model == "scripted-model")


def test_without_a_tokenizer_the_character_fallback_budget_holds(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    estimate = EstimateCounter()
    for n in range(3):
        (project.root / f"doc{n}.txt").write_text(prose(45 * KB, n), encoding="utf-8")
    scripted_llm.script(*(tool_calls(read(f"r{n}", f"@project/doc{n}.txt")) for n in range(3)), text("Done."))
    events, per_turn = run_turn(scripted_llm, store, project, conversation, "gpt-4o", "read them", counter=estimate)

    assert finished(events).reason == "completed", finished(events)
    assert per_turn.budget.for_counter(estimate).count_chars  # the 120,000-character fallback
    assert_requests_fit(scripted_llm, per_turn.budget, estimate)


def test_a_turn_that_cannot_shrink_enough_stops_with_a_persisted_error_and_continue_works(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    for n in range(40):
        (project.root / f"f{n:02d}.txt").write_text(prose(4 * KB, n), encoding="utf-8")
    scripted_llm.script(
        tool_calls(*(read(f"f{n}", f"@project/f{n:02d}.txt") for n in range(40))),
        text("All forty read."),
    )
    # A small window set by the user: the system prompt and the question fit, but not forty
    # results, even as notes.
    tight = Settings.model_validate({"llm": {"contextWindow": 4_800}})
    config = scripted_llm.config()
    small = turn_settings(tight, "chat", window=context_window(tight, config))
    events = turn(store, project, conversation.id, config, "read all forty", settings=small)

    end = finished(events)
    assert end.reason == "error" and end.error is not None and end.error["code"] == "CONTEXT_STILL_TOO_LARGE"
    message = end.error["message"]
    assert "context window" in message and "Continue" in message and "your setting" in message
    log = assert_log_valid(store, project.id, conversation.id)
    assert log[-1].partType == "error" and "CONTEXT_STILL_TOO_LARGE" in log[-1].text
    assert len(scripted_llm.bodies) == 1  # nothing was sent after the results came in

    # The user does what the error says (a larger window) and presses Continue.
    roomy = turn_settings(Settings(), "chat", window=context_window(Settings(), config))
    again = turn(store, project, conversation.id, config, None, settings=roomy)
    assert finished(again).reason == "completed"
    request = assert_request_valid(scripted_llm.bodies[-1])
    assert [m.get("tool_call_id") for m in request if m["role"] == "tool"] == [f"f{n}" for n in range(40)]
    assert persisted(again)[-1].text == "All forty read."
    assert_log_valid(store, project.id, conversation.id)


def test_when_the_full_outputs_cannot_be_saved_the_turn_stops_with_a_persisted_error_and_continue_works(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    for n in range(3):
        (project.root / f"doc{n}.txt").write_text(prose(45 * KB, n), encoding="utf-8")
    scripted_llm.script(tool_calls(*(read(f"r{n}", f"@project/doc{n}.txt") for n in range(3))), text("Read."))
    # The folder of the conversation's full outputs cannot be created (a file is in the way).
    blocker = store.state_dir(project.id) / "logs" / "tool-results" / conversation.id
    blocker.parent.mkdir(parents=True)
    blocker.write_text("in the way", encoding="utf-8")
    events, per_turn = run_turn(scripted_llm, store, project, conversation, "scripted-model", "read the docs")

    end = finished(events)
    assert end.reason == "error" and end.error is not None and end.error["code"] == "CONTEXT_SPILL_FAILED"
    assert "Continue" in end.error["message"]
    log = assert_log_valid(store, project.id, conversation.id)
    assert log[-1].partType == "error" and len(scripted_llm.bodies) == 1

    blocker.unlink()
    config, _ = settings_for(scripted_llm, "scripted-model")
    again = turn(store, project, conversation.id, config, None, settings=per_turn)
    assert finished(again).reason == "completed"
    assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    assert spilled_files(store, project, [assert_request_valid(scripted_llm.bodies[-1])])


def test_the_model_reads_a_shortened_result_back_through_its_alias(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    for n in range(3):
        (project.root / f"doc{n}.txt").write_text(prose(45 * KB, n), encoding="utf-8")

    def read_the_alias(request: RecordedRequest) -> Reply:
        notes = [m["content"] for m in request.body["messages"] if m["role"] == "tool" and "The full output is at " in m["content"]]
        alias = notes[0].split("The full output is at ", 1)[1].split(";", 1)[0]
        return tool_calls(read("back", alias)).reply  # type: ignore[return-value]

    scripted_llm.script(
        tool_calls(*(read(f"r{n}", f"@project/doc{n}.txt") for n in range(3))),
        Step("read the alias", read_the_alias),
        text("Got it back."),
    )
    events, per_turn = run_turn(scripted_llm, store, project, conversation, "scripted-model", "read the docs")

    assert finished(events).reason == "completed", finished(events)
    assert_requests_fit(scripted_llm, per_turn.budget, default_counter())
    log = assert_log_valid(store, project.id, conversation.id)
    back = result_of(next(m for m in log if m.tool_call_id == "back"))
    assert back["ok"] is True and json.loads(back["content"])["content"] == prose(45 * KB, 0)
