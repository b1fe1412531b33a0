"""Context budgets (messages, characters, optional tokens) and the usage status shown to the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from crewagent.core.context.tokens import CHARS_PER_TOKEN

UsageStatus = Literal["normal", "warning", "critical"]

DEFAULT_MAX_MESSAGES = 80
DEFAULT_MAX_CHARS = 120_000
#: Status thresholds in percent: normal < 60 <= warning <= 80 < critical.
WARNING_FROM = 60.0
CRITICAL_ABOVE = 80.0
#: Compression starts above this share of the budget and aims for the target share.
COMPRESS_ABOVE = CRITICAL_ABOVE / 100
COMPRESS_TARGET = 0.5


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Hard limits of one request.

    ``max_messages`` counts history messages taken from the log (not the system prefix nor
    the run blocks); ``max_chars`` and ``max_tokens`` count the whole request.
    """

    max_messages: int = DEFAULT_MAX_MESSAGES
    max_chars: int = DEFAULT_MAX_CHARS
    max_tokens: int | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ContextBudget:
        """Read ``contextMaxMessages``, ``contextMaxChars`` and ``contextMaxTokens`` (llm settings)."""

        def positive(key: str) -> int | None:
            value = settings.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

        return cls(
            max_messages=positive("contextMaxMessages") or DEFAULT_MAX_MESSAGES,
            max_chars=positive("contextMaxChars") or DEFAULT_MAX_CHARS,
            max_tokens=positive("contextMaxTokens"),
        )

    def load(self, chars: int, tokens: int) -> float:
        """The share of the tightest size budget in use (1.0 = full)."""
        share = chars / self.max_chars if self.max_chars > 0 else float("inf")
        if self.max_tokens:
            share = max(share, tokens / self.max_tokens)
        return share

    def fits(self, chars: int, tokens: int) -> bool:
        return chars <= self.max_chars and (self.max_tokens is None or tokens <= self.max_tokens)

    def as_dict(self) -> dict[str, int | None]:
        return {
            "contextMaxMessages": self.max_messages,
            "contextMaxChars": self.max_chars,
            "contextMaxTokens": self.max_tokens,
        }


def usage_status(percent: float) -> UsageStatus:
    """normal below 60 %, warning from 60 % to 80 % inclusive, critical above 80 %."""
    if percent < WARNING_FROM:
        return "normal"
    if percent <= CRITICAL_ABOVE:
        return "warning"
    return "critical"


def usage(chars: int, tokens: int, budget: ContextBudget) -> dict[str, Any]:
    """``{usedTokens, totalBudget, usagePercent, status}`` for the debug metadata.

    Without a token budget ``totalBudget`` is the character budget converted at 4 chars/token;
    ``usagePercent`` always reflects the tightest budget.
    """
    total = budget.max_tokens or max(1, budget.max_chars // CHARS_PER_TOKEN)
    percent = round(budget.load(chars, tokens) * 100, 1)
    return {"usedTokens": tokens, "totalBudget": total, "usagePercent": percent, "status": usage_status(percent)}
