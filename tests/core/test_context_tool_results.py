"""``llm.includeToolResultsInContext``: earlier turns' tool results in full, or as previews only.

Real turns of a ConversationSession against the scripted server over HTTP; the request bodies the
server received are what is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.loop.factory import turn_settings
from crewagent.core.messages import ConversationMeta
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, assert_request_valid, finished, turn
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls

BIG = "".join(f"line {n}: some notes worth reading\n" for n in range(200))  # ~7 KB


def _two_turns(scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, cid: str, include: bool) -> list[dict[str, Any]]:
    (Path(project.root) / "notes.md").write_text(BIG, encoding="utf-8")
    settings = Settings()
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"includeToolResultsInContext": include})})
    scripted_llm.script(
        tool_calls(call("call_read", "fs_read", json.dumps({"path": "@project/notes.md"}))),
        text("I read it."),
        text("Still here."),
    )
    for said in ("read the notes", "and now?"):
        assert finished(turn(store, project, cid, scripted_llm.config(), said, settings=turn_settings(settings, "chat"))).reason == "completed"
    assert_log_valid(store, project.id, cid)
    return [assert_request_valid(body) for body in scripted_llm.bodies]


def _tool_contents(request: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in request if m["role"] == "tool"]


@pytest.mark.parametrize("include", [True, False])
def test_the_current_turn_always_gets_its_tool_results_in_full(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, include: bool
) -> None:
    requests = _two_turns(scripted_llm, store, project, conversation.id, include)
    (result,) = _tool_contents(requests[1])  # the request right after the call, in the same turn
    assert json.loads(result)["content"] == BIG


def test_on_earlier_results_are_sent_in_full(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    requests = _two_turns(scripted_llm, store, project, conversation.id, include=True)
    (earlier,) = _tool_contents(requests[2])
    assert json.loads(earlier)["content"] == BIG


def test_off_earlier_results_are_previews_and_every_call_keeps_its_result(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    requests = _two_turns(scripted_llm, store, project, conversation.id, include=False)
    later = requests[2]
    calls = [c["id"] for m in later if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in later if m["role"] == "tool"]
    assert calls == answered and len(calls) == 1  # the chain stays valid: the call still gets its tool message
    (preview,) = _tool_contents(later)
    assert len(preview) < 1_000 and BIG not in preview and "[Preview for context" in preview
    # The full output stays readable by the model, at the path the preview names.
    alias = preview.rsplit("Full output: ", 1)[1].rstrip("]")
    assert alias.startswith("@state/")
    state = Path(store.data_dir) / "projects" / project.id / "state"
    assert json.loads((state / alias.removeprefix("@state/")).read_text(encoding="utf-8"))["content"] == BIG
