"""Latency of the loop's event path: the first token reaches the consumer at once."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any

from crewagent.core.llm import LlmAdapter
from crewagent.core.llm.local_server import Raw
from crewagent.core.loop import ConversationSession, TextDelta, TurnSettings
from crewagent.core.messages import ConversationMeta
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import default_registry
from tests.core.loop_helpers import make_context
from tests.fakes.scripted_server import ScriptedServer, chunk, raw_stream, sse_line


def test_the_first_text_delta_is_not_held_back_by_a_burst(
    scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    """A provider that sends a whole answer at once: the first delta reaches the consumer before the rest is parsed."""
    burst = b"".join(sse_line(chunk({"content": f"w{n} "})) for n in range(300)) + sse_line(chunk({}, "stop"))
    scripted_llm.script(raw_stream(chunk({"role": "assistant", "content": ""}), Raw(burst)))
    produced: list[int] = []

    class CountingAdapter(LlmAdapter):
        async def stream(self, request: Any) -> Any:  # type: ignore[override]
            async for event in super().stream(request):
                produced.append(1)
                yield event

    async def main() -> tuple[int, str]:
        async with CountingAdapter(scripted_llm.config()) as adapter:
            session = ConversationSession(
                store, project, conversation.id, adapter=adapter, registry=default_registry(), tool_context=make_context(project, conversation.id)
            )
            at_first = -1
            text = []
            async with aclosing(session.send("go", TurnSettings())) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        if at_first < 0:
                            at_first = len(produced)
                        text.append(event.text)
            return at_first, "".join(text)

    at_first, streamed = asyncio.run(main())

    assert streamed == "".join(f"w{n} " for n in range(300))
    assert at_first <= 5, f"the adapter had already parsed {at_first} events when the first delta was delivered"
