"""Local model servers found automatically: Ollama and LM Studio on their usual ports.

Each target is asked for its model list (``GET /v1/models``) with a short timeout, all at once;
what answers is offered with its models, what does not is left out silently (nothing running is
the normal case, not an error). Runs off the GUI thread (the worker's background pool).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crewagent.core.llm.config import ProviderConfig
from crewagent.core.llm.errors import LlmError
from crewagent.core.providers import local_presets, preset

#: Overrides the servers looked for (tests point it at a scripted server; "" looks for none).
TARGETS_ENV = "CREWAGENT_LOCAL_SERVERS"
#: Seconds a local server has to answer: a running one answers in milliseconds.
PROBE_TIMEOUT = 1.0


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A local server that answered: its preset, where, and the models it lists."""

    provider: str
    base_url: str
    models: tuple[str, ...]


def local_targets(env: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """``(preset id, base URL)`` to probe: every local preset (Ollama, LM Studio) on its usual port,
    unless ``CREWAGENT_LOCAL_SERVERS`` lists others (``ollama=http://gpu-box:11434/v1,...``; empty:
    look for none). Entries that name no preset or no http(s) URL are skipped."""
    env = os.environ if env is None else env
    listed = env.get(TARGETS_ENV)
    if listed is None:
        return tuple((spec.id, spec.baseUrl) for spec in local_presets())
    targets = []
    for entry in listed.split(","):
        name, _, url = entry.strip().partition("=")
        if preset(name.strip()) is not None and url.strip().startswith(("http://", "https://")):
            targets.append((name.strip(), url.strip()))
    return tuple(targets)


async def probe_local_servers(
    targets: Sequence[tuple[str, str]] | None = None, *, timeout: float | None = None
) -> list[FoundServer]:
    """The targets that answer with a model list within ``timeout`` (PROBE_TIMEOUT), in the targets' order."""
    timeout = PROBE_TIMEOUT if timeout is None else timeout
    pairs = list(local_targets() if targets is None else targets)
    found = await asyncio.gather(*(_probe(provider, url, timeout) for provider, url in pairs))
    return [server for server in found if server is not None]


async def _probe(provider: str, base_url: str, timeout: float) -> FoundServer | None:
    from crewagent.core.llm.models import list_models  # imports openai: not at start-up

    config = ProviderConfig(provider=provider, base_url=base_url, model="(none)", timeout=timeout, max_retries=0)
    try:
        models = await asyncio.wait_for(list_models(config), timeout * 2)
    except (LlmError, TimeoutError):
        return None
    return FoundServer(provider, config.base_url, tuple(models))
