"""The provider's model list (``GET /v1/models``) and Test Connection for the settings page."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import openai

from crewagent.core import texts
from crewagent.core.context.window import metadata_window
from crewagent.core.llm._client import make_client
from crewagent.core.llm.adapter import classify_error
from crewagent.core.llm.config import NO_KEY, ProviderConfig
from crewagent.core.llm.errors import LlmError

ConnectionStatus = Literal["ok", "auth_failed", "unreachable", "timeout", "not_found", "http_error", "bad_response"]


@dataclass(frozen=True)
class ConnectionResult:
    """What Test Connection found, phrased for the user in ``message``."""

    status: ConnectionStatus
    message: str
    models: tuple[str, ...] = ()
    http_status: int | None = None
    latency_ms: float | None = None
    #: Whether the configured model is in the list (None when there is no list).
    model_listed: bool | None = None
    #: Model id -> context window in tokens, for the models whose metadata gives one.
    windows: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


async def list_models(config: ProviderConfig, *, http_client: Any | None = None) -> list[str]:
    """The model ids the provider lists, sorted; raises :class:`LlmError` (no retries: a user is waiting)."""
    return (await list_models_with_windows(config, http_client=http_client))[0]


async def list_models_with_windows(
    config: ProviderConfig, *, http_client: Any | None = None
) -> tuple[list[str], dict[str, int]]:
    """The model ids the provider lists, and the context windows its metadata gives (OpenRouter's
    ``context_length``, vLLM's ``max_model_len`` ...); raises :class:`LlmError`."""
    client = make_client(
        base_url=config.base_url,
        api_key=config.api_key or NO_KEY,
        timeout=min(config.timeout, 15.0),
        headers=config.extra_headers,
        http_client=http_client,
    )
    try:
        page = await client.models.list()
        data = getattr(page, "data", None)
        if not isinstance(data, list):
            raise LlmError("LLM_BAD_RESPONSE", texts.MODELS_NOT_LISTED.format(url=config.base_url))
        ids = sorted({str(getattr(m, "id", "")) for m in data if getattr(m, "id", None)})
        windows: dict[str, int] = {}
        for entry in data:
            # The openai client keeps the fields it does not know in model_extra.
            extra = getattr(entry, "model_extra", None)
            window = metadata_window(extra) if isinstance(extra, Mapping) else None
            if window is not None and getattr(entry, "id", None):
                windows[str(entry.id)] = window
        return ids, windows
    except (openai.OpenAIError, json.JSONDecodeError) as exc:
        raise classify_error(exc, base_url=config.base_url) from exc
    finally:
        await client.close()


async def test_connection(config: ProviderConfig, *, http_client: Any | None = None) -> ConnectionResult:
    """Reach the provider with the config's key: ok (with the model list), or why not."""
    started = time.perf_counter()
    try:
        models, windows = await list_models_with_windows(config, http_client=http_client)
    except LlmError as error:
        return _failure(config, error)
    latency = (time.perf_counter() - started) * 1000
    listed = config.model in models if models else None
    message = texts.CONNECTED.format(url=config.base_url, count=len(models))
    if listed is False:
        message = texts.CONNECTED_MODEL_UNLISTED.format(url=config.base_url, count=len(models), model=config.model)
    return ConnectionResult("ok", message, tuple(models), 200, latency, listed, windows)


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test, despite its name


def _failure(config: ProviderConfig, error: LlmError) -> ConnectionResult:
    status: ConnectionStatus
    if error.code == "LLM_AUTH_FAILED":
        status, message = "auth_failed", texts.CONNECT_KEY_REFUSED.format(detail=error.message)
    elif error.code == "LLM_TIMEOUT":
        status, message = "timeout", texts.CONNECT_NO_ANSWER.format(url=config.base_url)
    elif error.code == "LLM_BAD_RESPONSE":
        status, message = "bad_response", texts.CONNECT_NOT_OPENAI.format(url=config.base_url)
    elif error.status == 404:
        status = "not_found"
        message = texts.CONNECT_NO_MODELS_PATH.format(url=config.base_url)
    elif error.status is None:
        status, message = "unreachable", texts.CONNECT_UNREACHABLE.format(url=config.base_url, detail=error.message)
    else:
        status, message = "http_error", error.message
    return ConnectionResult(status, message, http_status=error.status)
