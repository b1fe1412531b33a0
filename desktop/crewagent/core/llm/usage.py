"""Token usage per model call, as stored on the assistant message, and its sum over a conversation.

The assistant message's ``usage`` (optional) is what the provider reported -- ``prompt_tokens``,
``completion_tokens``, ``total_tokens`` and its own details as sent (``prompt_tokens_details``,
DeepSeek's ``prompt_cache_hit_tokens`` ...) -- plus two fields the app adds when it can:

- ``cached_tokens``: the prompt tokens the provider served from its cache, whatever it calls them;
- ``cost_usd``: what the call cost at the preset's prices (resources/providers.json), when the
  model's prices are known. Computed when the answer arrives, so a later price change does not
  rewrite history.

Streamed and non-streamed calls store the same shape. The totals are summed from the log, so they
are right after a restart and never counted twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from crewagent.core.llm.events import Usage
from crewagent.core.providers import ModelInfo, preset


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cached_tokens(usage: Mapping[str, Any]) -> int | None:
    """The cached prompt tokens in a provider's usage block, under any of the names providers use."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping) and _count(details.get("cached_tokens")) is not None:
        return _count(details.get("cached_tokens"))
    for name in ("cached_tokens", "prompt_cache_hit_tokens", "cache_read_input_tokens"):
        if _count(usage.get(name)) is not None:
            return _count(usage.get(name))
    return None


def cost_usd(prompt: int, completion: int, cached: int, info: ModelInfo) -> float | None:
    """USD for one call at ``info``'s prices (per 1M tokens); None when a price is unknown."""
    if info.inputPrice is None or info.outputPrice is None:
        return None
    cached = min(cached, prompt)
    cached_price = info.cachedInputPrice if info.cachedInputPrice is not None else info.inputPrice
    total = (prompt - cached) * info.inputPrice + cached * cached_price + completion * info.outputPrice
    return total / 1_000_000


def model_info(provider: str, *models: str | None) -> ModelInfo | None:
    """The preset's table entry for the first of ``models`` it knows."""
    spec = preset(provider)
    if spec is None:
        return None
    for model in models:
        if model:
            info = spec.model_info(model)
            if info is not None:
                return info
    return None


def usage_record(usage: Usage, *, provider: str, model: str, reported_model: str | None = None) -> dict[str, Any]:
    """The ``usage`` to store on the assistant message (see the module docstring)."""
    record = usage.to_dict()
    cached = cached_tokens(record)
    if cached is not None:
        record["cached_tokens"] = cached
    info = model_info(provider, model, reported_model)
    prompt, completion = _count(usage.prompt_tokens), _count(usage.completion_tokens)
    if info is not None and prompt is not None and completion is not None:
        cost = cost_usd(prompt, completion, cached or 0, info)
        if cost is not None:
            record["cost_usd"] = round(cost, 8)
    return record


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """The sum of the usage of a conversation's model calls (or of one turn's)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    #: None when no call had a known cost; else the sum of the known ones.
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
        }

    def describe(self) -> str:
        """``1,234 in (1,000 cached) · 56 out · $0.0012`` (the cached and cost parts when known)."""
        text = f"{self.prompt_tokens:,} in"
        if self.cached_tokens:
            text += f" ({self.cached_tokens:,} cached)"
        text += f" · {self.completion_tokens:,} out"
        if self.cost_usd is not None:
            text += f" · ${self.cost_usd:.4f}"
        return text


def sum_usage(records: Iterable[Mapping[str, Any] | None]) -> UsageTotals:
    """The totals of stored ``usage`` records (None and damaged ones are skipped)."""
    calls = prompt = completion = cached = 0
    cost: float | None = None
    for record in records:
        if not isinstance(record, Mapping):
            continue
        p, c = _count(record.get("prompt_tokens")), _count(record.get("completion_tokens"))
        if p is None and c is None:
            continue
        calls += 1
        prompt += p or 0
        completion += c or 0
        cached += cached_tokens(record) or 0
        value = record.get("cost_usd")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            cost = (cost or 0.0) + float(value)
    return UsageTotals(calls, prompt, completion, cached, cost)
