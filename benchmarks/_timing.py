"""Shared by the LLM and loop benchmarks: an httpx2 transport that stamps the first body bytes."""

from __future__ import annotations

import time
from typing import Any

import httpx2


class FirstByteStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, marks: dict[str, float]) -> None:
        self._inner = inner
        self._marks = marks

    async def __aiter__(self) -> Any:
        async for data in self._inner:
            if "first_byte" not in self._marks:
                self._marks["first_byte"] = time.perf_counter()
            yield data

    async def aclose(self) -> None:
        await self._inner.aclose()


class TimingTransport(httpx2.AsyncBaseTransport):
    """Stamps the arrival of the first body bytes of each response (``marks["first_byte"]``; clear to re-arm)."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.marks: dict[str, float] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=FirstByteStream(response.stream, self.marks),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
