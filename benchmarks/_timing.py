"""Shared by the LLM and loop benchmarks: a first-byte timing transport and a sample series."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
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


MS = 1000.0


@dataclass
class Series:
    """Timings (seconds) of one configuration, summarised in milliseconds."""

    name: str
    samples: list[float] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        data = sorted(self.samples)
        n = len(data)
        return {
            "name": self.name,
            "n": n,
            "p50_ms": statistics.median(data) * MS,
            "p95_ms": data[min(n - 1, int(n * 0.95))] * MS,
            "mean_ms": statistics.fmean(data) * MS,
        }
