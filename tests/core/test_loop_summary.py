"""The rolling summary is wired to the provider: no tools, short timeout, persisted with what it covers."""

from __future__ import annotations

from crewagent.core.context import ContextBudget
from crewagent.core.loop import TurnSettings
from crewagent.core.loop.session import SUMMARIZER_TIMEOUT_S
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.protocol.chain import SUMMARY_MARKER
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.loop_helpers import assert_log_valid, finished, turn
from tests.fakes.scripted_server import ScriptedServer, text


def _long_history(store: RuntimeStore, project: ProjectInfo, conversation_id: str) -> list[ConversationMessage]:
    history = []
    for number in range(30):
        history.append(ConversationMessage.new("user", f"Question {number}: " + "please look at this " * 100))
        history.append(ConversationMessage.new("assistant", f"Answer {number}: " + "here is what I found " * 100))
    return store.append_messages(project.id, conversation_id, history)


def test_compression_asks_the_provider_for_a_summary_without_tools(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    stored = _long_history(store, project, conversation.id)
    summary_text = SUMMARY_MARKER + "\n## User goal\n- Understand the questions\n## Current status\n- Answered 30"
    scripted_llm.script(text(summary_text), text("Done, with the summary in mind."))

    settings = TurnSettings(budget=ContextBudget(max_chars=60_000))
    events = turn(store, project, conversation.id, scripted_llm.config(), "And now?", settings=settings)

    assert finished(events).ok
    summarizer_request, turn_request = scripted_llm.requests
    assert "tools" not in summarizer_request.body
    assert summarizer_request.body["messages"][0]["role"] == "system"
    # The turn's request carries the summary instead of the oldest history.
    sent = "\n".join(str(m.get("content")) for m in turn_request.body["messages"])
    assert "Answered 30" in sent
    assert "Question 0:" not in sent

    log = store.load_messages(project.id, conversation.id).messages
    summaries = [m for m in log if m.role == "system" and SUMMARY_MARKER in m.text]
    assert len(summaries) == 1
    covered = set(getattr(summaries[0], "summaryOf"))
    assert stored[0].id in covered and stored[-1].id not in covered
    assert_log_valid(store, project.id, conversation.id)
    assert SUMMARIZER_TIMEOUT_S <= 30


def test_a_failing_summarizer_falls_back_to_the_deterministic_summary(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    from tests.fakes.scripted_server import unauthorized

    _long_history(store, project, conversation.id)
    scripted_llm.script(unauthorized(), text("Answered anyway."))
    settings = TurnSettings(budget=ContextBudget(max_chars=60_000))
    events = turn(store, project, conversation.id, scripted_llm.config(), "And now?", settings=settings)

    assert finished(events).ok
    log = store.load_messages(project.id, conversation.id).messages
    summaries = [m for m in log if m.role == "system" and SUMMARY_MARKER in m.text]
    assert len(summaries) == 1 and "## User goal" in summaries[0].text
