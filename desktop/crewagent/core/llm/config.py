"""ProviderConfig: where a model lives and how to talk to it, built from settings and the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crewagent.core import texts
from crewagent.core.context.window import DEMO_MODEL
from crewagent.core.errors import CrewAgentError
from crewagent.core.redact import redact

ProviderName = Literal["demo", "openai", "openai-compatible"]
PROVIDERS: tuple[ProviderName, ...] = ("demo", "openai", "openai-compatible")

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
#: Sent as the bearer token to providers that need none (Ollama, LM Studio): the SDK requires one.
NO_KEY = "no-key"


class LlmConfigError(CrewAgentError):
    """The provider settings are incomplete (e.g. openai-compatible without a base URL).

    The message is redacted: a refused base URL may carry ``user:secret@`` or ``?api_key=``.
    """

    def __init__(self, message: str):
        super().__init__(redact(message))


class ProviderConfig(BaseModel):
    """Everything the adapter needs to reach one provider.

    ``api_key`` never appears in ``repr`` and is excluded from ``model_dump`` (a config may be
    logged or saved; the key lives in the keyring only).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: ProviderName = "openai-compatible"
    base_url: str
    api_key: str = Field(default="", repr=False, exclude=True)
    model: str
    #: Seconds: the connect timeout and the longest silence allowed between two stream chunks.
    timeout: float = Field(default=120.0, gt=0)
    #: False: always use the non-streaming API (for providers that reject ``stream: true``).
    stream: bool = True
    #: True: ``reasoning_content`` of earlier assistant messages is sent back to the provider
    #: (DeepSeek thinking mode with tools needs it); False: it is stripped from requests
    #: (providers that reject the unknown field). It is always kept when received.
    send_reasoning: bool = False
    #: Ask for token usage in the stream (``stream_options.include_usage``).
    include_usage: bool = True
    #: Encode tool names for providers that accept only ``^[a-zA-Z0-9_-]{1,64}$`` (see toolnames).
    encode_tool_names: bool = True
    #: Retries after the first attempt for 429, 5xx, timeouts and connection errors.
    max_retries: int = Field(default=3, ge=0, le=10)
    extra_headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"the base URL must start with http:// or https://, got {value!r}")
        try:
            host = urlsplit(value).hostname
        except ValueError:  # an invalid port or IPv6 literal
            host = None
        if not host or any(char.isspace() for char in value):
            raise ValueError(f"the base URL {value!r} is not a URL (e.g. http://localhost:11434/v1)")
        return value

    def describe(self) -> str:
        """A one-line description safe to show or log (no key)."""
        return f"{self.provider} {self.model} at {self.base_url}"


def _pick(section: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in section and section[name] is not None:
            return section[name]
    return None


def config_from_env(
    settings: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    provider: str | None = None,
    api_key: str | None = None,
    demo_base_url: str | None = None,
    model: str | None = None,
) -> ProviderConfig:
    """Build the config of the active provider from the settings' LLM section and the environment.

    ``settings`` is the provider section of settings.json, camelCase or snake_case keys:
    ``provider, baseUrl, model, timeout, stream, sendReasoning, includeUsage, encodeToolNames,
    maxRetries, extraHeaders``; when it holds a ``providers`` mapping, ``providers[<provider>]``
    is merged over it. ``provider`` (e.g. ``--provider``) overrides the setting.

    For ``openai`` and ``openai-compatible``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and
    ``CREWAGENT_MODEL`` win over the settings when set; ``api_key`` (from the keyring) is used
    when ``OPENAI_API_KEY`` is not set. ``model`` (e.g. ``--model``) wins over both. ``demo``
    ignores the environment and needs ``demo_base_url`` (the running demo server's ``base_url``).
    """
    env = os.environ if env is None else env
    section: dict[str, Any] = dict(settings or {})
    name = provider or _pick(section, "provider") or "demo"
    if name not in PROVIDERS:
        raise LlmConfigError(f"Unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}.")
    providers = section.pop("providers", None)
    if isinstance(providers, Mapping) and isinstance(providers.get(name), Mapping):
        section.update(providers[name])

    options: dict[str, Any] = {}
    for key, names in {
        "timeout": ("timeout",),
        "stream": ("stream",),
        "send_reasoning": ("sendReasoning", "send_reasoning"),
        "include_usage": ("includeUsage", "include_usage"),
        "encode_tool_names": ("encodeToolNames", "encode_tool_names"),
        "max_retries": ("maxRetries", "max_retries"),
        "extra_headers": ("extraHeaders", "extra_headers", "headers"),
    }.items():
        value = _pick(section, *names)
        if value is not None:
            options[key] = value

    if name == "demo":
        if not demo_base_url:
            raise LlmConfigError("The demo provider needs its local server: start it with start_demo_server().")
        return demo_config(demo_base_url)

    base_url = env.get("OPENAI_BASE_URL") or _pick(section, "baseUrl", "base_url")
    if not base_url:
        if name == "openai-compatible":
            raise LlmConfigError(texts.CONFIG_NEEDS_URL)
        base_url = OPENAI_BASE_URL
    model = model or env.get("CREWAGENT_MODEL") or _pick(section, "model")
    if not model:
        if name == "openai-compatible":
            raise LlmConfigError(texts.CONFIG_NEEDS_MODEL)
        model = DEFAULT_OPENAI_MODEL
    key = env.get("OPENAI_API_KEY") or api_key or ""
    if name == "openai" and not key:
        # OpenAI refuses every request without one: say so before a conversation is touched.
        raise LlmConfigError(texts.CONFIG_NEEDS_KEY)
    try:
        return ProviderConfig(provider=name, base_url=base_url, api_key=key, model=model, **options)
    except ValidationError as exc:
        raise LlmConfigError(f"Invalid {name} provider settings: {_one_line(exc)}") from exc


def _one_line(exc: ValidationError) -> str:
    """The problems of a ValidationError on one line (pydantic's own text takes four per error)."""
    parts = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        where = ".".join(str(part) for part in error["loc"])
        parts.append(message if where == "base_url" else f"{where}: {message}")
    return "; ".join(parts)


def demo_config(base_url: str) -> ProviderConfig:
    """The provider config for a running demo server (no key; one quick retry, so "fail" fails fast)."""
    return ProviderConfig(provider="demo", base_url=base_url, model=DEMO_MODEL, timeout=30.0, max_retries=1)
