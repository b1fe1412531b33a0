"""The window's open reads a long log once (issue 14, item 3): what it shows and the context meter
it measures on that one load are, for any conversation, what a second load would give."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import ProviderConfig
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol.branches import current_branch
from crewagent.core.settings import SettingsStore
from crewagent.core.tools.policy import AutoApprover
from crewagent.core.turn_host import Opened, TurnHost
from tests.core.test_context_properties import build_log, scripts
from tests.examples import examples

# Each example writes a log of up to 80 operations (tool groups with unanswered calls, orphans,
# duplicates, hidden and system messages, and an edit), so recovery, branches and trimming all
# decide something; 25 keep the property under a few seconds on the shared 2-core machine.
PROPERTY = settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def _presented(message: ConversationMessage) -> dict[str, Any]:
    return message.to_log_dict()


def _no_provider(settings: Any, demo_url: str | None) -> ProviderConfig:
    # The meter then takes the window from the settings alone (as with a provider that cannot start).
    raise CrewAgentError("no provider in this test")


@pytest.mark.slow  # ~5 s of CPU: every example writes, recovers and loads a log
@PROPERTY
@given(script=st.one_of(scripts(0, 20), scripts(20, 80)), edit=st.none() | st.integers(min_value=0))
def test_for_any_conversation_the_open_shows_and_measures_what_a_second_load_gives(
    store: Any, project: Any, script: list[Any], edit: int | None
) -> None:
    messages = [m for m in build_log(script) if isinstance(m, ConversationMessage)]
    if edit is not None and messages:
        messages.append(ConversationMessage.new("user", "edited", replaces=messages[edit % len(messages)].id))
    if SettingsStore().load().llm.provider == "demo":
        SettingsStore().update(llm={"provider": "openai-compatible", "model": "gpt-4o"})  # no demo server to start
    conversation = store.create_conversation(project.id, title="property")
    pid, cid = project.id, conversation.id
    if messages:
        store.append_messages(pid, cid, messages)
    host: TurnHost[dict[str, Any]] = TurnHost(
        lambda: store, _presented, approver=AutoApprover(), ask_user=lambda c: None, on_subagent=lambda e: None,  # type: ignore[arg-type,return-value]
        provider_factory=_no_provider,
    )
    host.add_project(project)

    async def opened_then_measured() -> tuple[list[Opened[dict[str, Any]]], dict[str, Any]]:
        pages = [page async for page in host.open(pid, cid)]
        return pages, await host.context_usage(pid, cid)  # the way the meter was measured before: a load of its own

    try:
        pages, measured = asyncio.run(opened_then_measured())
    finally:
        host.close()
    whole = pages[-1]
    assert whole.complete and whole.usage is not None
    # The log as it is after the open (recovery may have answered unanswered calls).
    assert list(whole.messages) == [_presented(m) for m in current_branch(store.load_messages(pid, cid).messages)]
    assert whole.usage == measured
