"""The AsyncOpenAI client the adapter uses, with one fix to the SDK's SSE decoding.

The SDK's SSE decoder dispatches an event only on the blank line that ends it, so a provider
whose last event is not followed by ``\\n\\n`` (and sends no ``[DONE]``) loses that event -- often
the one carrying ``finish_reason`` and the last piece of text. We feed the decoder a blank line
after a body that ended cleanly: with a well-formed stream it is a no-op, with a truncated one it
dispatches the pending event. (A body cut by a network error raises instead and is not touched.)

This relies on ``BaseClient._make_sse_decoder`` and ``openai._streaming.SSEDecoder``, which are
private SDK names; if a future SDK drops them we fall back to the stock decoder (and lose only
this repair), which the test for a final event without a delimiter will report.
"""

from __future__ import annotations

import importlib
import ssl
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI

try:  # the HTTP library the SDK is built on (httpx2 in SDK 3.x, httpx before)
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]

try:
    from openai._streaming import SSEDecoder as _SSEDecoder
except ImportError:  # pragma: no cover - a future SDK without it
    _SSEDecoder = None  # type: ignore[assignment,misc]


async def _terminated(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield chunk
    yield b"\n\n"


def _terminated_sync(chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield from chunks
    yield b"\n\n"


if _SSEDecoder is not None:

    class _TerminatingSSEDecoder(_SSEDecoder):
        def iter_bytes(self, iterator: Iterator[bytes]) -> Any:
            return super().iter_bytes(_terminated_sync(iterator))

        def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> Any:
            return super().aiter_bytes(_terminated(iterator))


class CrewAgentOpenAI(AsyncOpenAI):
    """AsyncOpenAI whose streams also deliver a final event that lacks its blank line."""

    def _make_sse_decoder(self) -> Any:
        if _SSEDecoder is None:  # pragma: no cover
            return super()._make_sse_decoder()
        return _TerminatingSSEDecoder()


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def _shared_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for the process: loading the CA store costs ~100 ms per client."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = _httpx.create_ssl_context()
        return _ssl_context


#: What a client's first request imports beyond the SDK (the HTTP library loads its transport only
#: then): the connection pool for asyncio, its anyio backend and anyio's asyncio back end, HTTP/1.1.
_TRANSPORT_MODULES = ("_async", "_backends.anyio")
_FIRST_REQUEST_MODULES = ("anyio._backends._asyncio", "h11")


def warm_up() -> None:
    """Do now what a client's first request would do on the turn's thread (blocking; cheap when repeated).

    Measured at the first send of a session (bench_ui section 2a): ~70 imports (the HTTP core's
    transport, anyio's back end, h11; ~27 ms of CPU, mostly holding the GIL), the CA store (~20 ms)
    and the SDK's platform headers (``platform.platform()`` runs ``uname -p`` as a process), all
    while the GUI thread lays out the user's message: it waited 50-100 ms for the GIL.
    """
    core = "httpcore2" if _httpx.__name__ == "httpx2" else "httpcore"
    for name in (*(f"{core}.{module}" for module in _TRANSPORT_MODULES), *_FIRST_REQUEST_MODULES):
        try:
            importlib.import_module(name)
        except ImportError:  # pragma: no cover - another HTTP stack: its first request imports it
            pass
    _shared_ssl_context()
    try:
        from openai._base_client import get_platform, platform_headers
        from openai._version import __version__ as openai_version
    except ImportError:  # pragma: no cover - a future SDK without them
        return
    platform_headers(openai_version, platform=get_platform())  # cached per process by the SDK


def _http_client(base_url: str) -> Any:
    # A proxy from HTTP(S)_PROXY must not capture 127.0.0.1 (the demo, a local Ollama).
    loopback = (urlsplit(base_url).hostname or "") in _LOOPBACK
    return openai.DefaultAsyncHttpxClient(verify=_shared_ssl_context(), trust_env=not loopback)


def make_client(
    *,
    base_url: str,
    api_key: str,
    timeout: float,
    headers: Mapping[str, str],
    http_client: Any | None = None,
    auth: str = "bearer",
    query: Mapping[str, str] | None = None,
) -> CrewAgentOpenAI:
    """A client that never retries by itself (the adapter does, knowing what was streamed).

    Without ``http_client`` it gets its own, sharing the process's SSL context. Either way the
    HTTP client is closed when the returned client is. ``auth="api-key"`` sends the key in an
    ``api-key`` header, and each request must carry :func:`request_headers` (which drops the
    ``Authorization`` the SDK would add); ``query`` is added to every request URL.
    """
    default_headers: dict[str, Any] = dict(headers)
    if auth == "api-key":
        default_headers["api-key"] = api_key
    return CrewAgentOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        max_retries=0,
        default_headers=default_headers,
        default_query=dict(query) if query else None,
        http_client=http_client if http_client is not None else _http_client(base_url),
    )


def request_headers(auth: str) -> dict[str, Any]:
    """Per-request headers for ``auth``: with ``api-key``, no bearer token (the SDK accepts an
    ``Omit`` for Authorization only on the request, not in the client's default headers)."""
    return {"Authorization": openai.Omit()} if auth == "api-key" else {}
