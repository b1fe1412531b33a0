"""Helpers for tests that drive the LLM adapter from synchronous pytest functions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from crewagent.core.llm import LlmAdapter, LlmError, LlmEvent, LlmRequest, ProviderConfig, RetryPolicy

T = TypeVar("T")


class FakeSleep:
    """An injected ``sleep`` that returns at once and records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


def no_jitter() -> RetryPolicy:
    """Backoff without randomness: 0.5, 1, 2, 4 ... seconds."""
    return RetryPolicy(random=lambda: 0.0)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def fn_tool(name: str, description: str = "a tool") -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": {}}},
    }


async def collect_async(adapter: LlmAdapter, request: LlmRequest) -> tuple[list[LlmEvent], LlmError | None]:
    events: list[LlmEvent] = []
    try:
        async for event in adapter.stream(request):
            events.append(event)
    except LlmError as error:
        return events, error
    return events, None


def collect(
    config: ProviderConfig,
    request: LlmRequest,
    *,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
    retry: RetryPolicy | None = None,
) -> tuple[list[LlmEvent], LlmError | None]:
    """Run one adapter call in a fresh event loop; returns (events, the LlmError raised or None)."""

    async def main() -> tuple[list[LlmEvent], LlmError | None]:
        async with LlmAdapter(config, sleep=sleep or FakeSleep(), retry=retry or no_jitter()) as adapter:
            return await collect_async(adapter, request)

    return asyncio.run(main())


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())
