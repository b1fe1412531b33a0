"""Provider quirks over real HTTP against the scripted server (issue 17): Ollama's whole tool
calls without ids or indexes, DeepSeek's streamed reasoning, Mistral's 9-character tool-call ids."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewagent.core.llm import Completed, LlmRequest, ProviderConfig
from crewagent.core.llm.callids import Alnum9Ids
from crewagent.core.llm.config import config_from_env
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, finished, turn
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import collect, fn_tool, user
from tests.fakes.scripted_server import API_KEY, MODEL, ScriptedServer, call, text, tool_calls, whole_tool_calls

TOOLS = [fn_tool("fs.read"), fn_tool("fs.list")]


def _preset(server: ScriptedServer, name: str) -> ProviderConfig:
    """The preset's config (its quirks), pointed at the scripted server."""
    settings = {"provider": name, "baseUrl": server.base_url, "model": MODEL}
    return config_from_env(settings, env={}, api_key=API_KEY).model_copy(update={"timeout": 5.0})


def _completed(events: list) -> Completed:
    assert isinstance(events[-1], Completed), events
    return events[-1]


# Ollama


@pytest.mark.parametrize("one_chunk", [False, True], ids=["chunk per call", "all calls in one chunk"])
def test_ollama_whole_calls_without_ids_or_indexes_stay_separate_calls(scripted_llm: ScriptedServer, one_chunk: bool) -> None:
    scripted_llm.script(
        whole_tool_calls(("fs_read", '{"path": "a.txt"}'), ("fs_read", '{"path": "b.txt"}'), ("fs_list", "{}"), one_chunk=one_chunk)
    )

    events, error = collect(scripted_llm.config(), LlmRequest([user("x")], tools=TOOLS))

    assert error is None
    calls = _completed(events).tool_calls
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("fs.read", '{"path": "a.txt"}'),
        ("fs.read", '{"path": "b.txt"}'),
        ("fs.list", "{}"),
    ]
    ids = [c["id"] for c in calls]
    assert len(set(ids)) == 3 and all(ids)


def test_ollama_id_less_calls_get_ids_the_log_and_the_next_request_keep(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "a.txt").write_text("alpha", encoding="utf-8")
    (project.root / "b.txt").write_text("beta", encoding="utf-8")
    scripted_llm.script(
        whole_tool_calls(("fs_read", '{"path": "@project/a.txt"}'), ("fs_read", '{"path": "@project/b.txt"}')),
        text("alpha and beta"),
    )

    events = turn(store, project, conversation.id, _preset(scripted_llm, "ollama"), "read both")

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    ids = [c.id for c in log[1].tool_calls or []]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert [m.tool_call_id for m in log[2:4]] == ids
    assert "alpha" in (log[2].content or "") and "beta" in (log[3].content or "")
    second = assert_request_valid(scripted_llm.bodies[1])
    assert [c["id"] for c in second[-3]["tool_calls"]] == ids


# DeepSeek


def test_deepseek_reasoning_is_kept_on_the_message_and_never_sent_back(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    scripted_llm.script(
        text("Four.", reasoning=["The user asks ", "2+2; that is 4."]),
        text("Five."),
    )
    config = _preset(scripted_llm, "deepseek")

    turn(store, project, conversation.id, config, "2+2?")
    turn(store, project, conversation.id, config, "and 2+3?")

    log = assert_log_valid(store, project.id, conversation.id)
    assert log[1].reasoning_content == "The user asks 2+2; that is 4." and log[1].content == "Four."
    sent = scripted_llm.bodies[1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["user", "assistant", "user"]
    assert sent[-2]["content"] == "Four." and "reasoning_content" not in sent[-2]


# Mistral

MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


def test_mistral_sees_only_9_character_ids_and_the_log_keeps_its_own(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    (project.root / "a.txt").write_text("alpha", encoding="utf-8")
    # An earlier turn (another provider) left ids Mistral refuses.
    scripted_llm.script(
        tool_calls(call("call_0123456789abcdef", "fs_read", '{"path": "@project/a.txt"}'), call("call_x-y_z", "fs_list", "{}")),
        text("read it"),
    )
    turn(store, project, conversation.id, scripted_llm.config(), "read a")

    # Mistral's own call comes back with its own 9-character id.
    scripted_llm.script(
        tool_calls(call("AbC123xYz", "fs_read", '{"path": "@project/a.txt"}')),
        text("again: alpha"),
    )
    events = turn(store, project, conversation.id, _preset(scripted_llm, "mistral"), "read it again")

    assert finished(events).reason == "completed"
    log = assert_log_valid(store, project.id, conversation.id)
    assert [c.id for c in log[1].tool_calls or []] == ["call_0123456789abcdef", "call_x-y_z"]
    assert [c.id for c in log[6].tool_calls or []] == ["AbC123xYz"]
    for body in scripted_llm.bodies[2:]:
        messages = assert_request_valid(body)
        wire_ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        wire_ids += [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert wire_ids and all(MISTRAL_ID.match(i) for i in wire_ids), wire_ids
    last = [m for m in scripted_llm.bodies[-1]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant", "tool"]
    assert last[-1]["tool_call_id"] == "AbC123xYz" == last[-2]["tool_calls"][0]["id"]
    first_ids = [c["id"] for c in last[1]["tool_calls"]]
    assert [last[2]["tool_call_id"], last[3]["tool_call_id"]] == first_ids and len(set(first_ids)) == 2


# Ids that are already 9 alphanumerics: exactly the strings MISTRAL_ID fullmatches, drawn as text of
# that alphabet and length (st.from_regex gave the same set at about four times the CPU a string).
_ALNUM9 = st.text(string.ascii_letters + string.digits, min_size=9, max_size=9)


@given(st.lists(st.one_of(st.text(min_size=1, max_size=40), _ALNUM9), max_size=30))
def test_for_any_ids_the_wire_ids_are_9_alphanumerics_one_to_one_and_map_back(log_ids: list[str]) -> None:
    ids = Alnum9Ids(log_ids)
    wire = {log_id: ids.encode(log_id) for log_id in log_ids}
    assert all(MISTRAL_ID.match(w) for w in wire.values())
    assert len(set(wire.values())) == len(wire)
    assert all(ids.decode(w) == log_id for log_id, w in wire.items())
    assert all(wire[i] == i for i in log_ids if MISTRAL_ID.match(i))  # already valid: kept
