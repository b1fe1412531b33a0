"""Context budgets (messages, characters, optional tokens) and the usage status shown to the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from crewagent.core.context.tokens import CHARS_PER_TOKEN, TokenCounter
from crewagent.core.context.window import ContextWindow, resolve_window

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

    With a ``window``, :meth:`for_counter` turns the budget into the window minus the answer's
    reserve when the counter counts real tokens; the character budget is then not enforced
    (it is the fallback for when tokens cannot be counted).
    """

    max_messages: int = DEFAULT_MAX_MESSAGES
    max_chars: int = DEFAULT_MAX_CHARS
    max_tokens: int | None = None
    window: ContextWindow | None = None
    #: Whether ``max_chars`` is enforced (False once resolved for an exact token counter).
    count_chars: bool = True
    #: Tokens of the request outside its messages (the tool definitions): the window holds them too.
    tools_tokens: int = 0

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, window: ContextWindow | None = None) -> ContextBudget:
        """Read ``contextMaxMessages``, ``contextMaxChars``, ``contextMaxTokens`` and ``contextWindow``
        (llm settings). Without ``window`` it is resolved offline: the setting, else the table of
        known models for ``model``, else the default."""

        def positive(key: str) -> int | None:
            value = settings.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

        if window is None:
            model = settings.get("model")
            window = resolve_window(model if isinstance(model, str) else "", setting=positive("contextWindow"))
        return cls(
            max_messages=positive("contextMaxMessages") or DEFAULT_MAX_MESSAGES,
            max_chars=positive("contextMaxChars") or DEFAULT_MAX_CHARS,
            max_tokens=positive("contextMaxTokens"),
            window=window,
        )

    def for_counter(self, counter: TokenCounter) -> ContextBudget:
        """The budget a build with ``counter`` enforces: with exact token counts and a known window,
        the window minus the answer's reserve (``contextMaxTokens`` can only lower it) and no
        character limit; otherwise the character budget, as before."""
        if self.window is None or not self.count_chars or not counter.exact:
            return self
        tokens = max(1, self.window.input_tokens - self.tools_tokens)
        if self.max_tokens:
            tokens = min(tokens, self.max_tokens)
        return replace(self, max_tokens=tokens, count_chars=False)

    @property
    def source(self) -> str:
        """Which limit the size is held to, in words (for error messages and the debug output)."""
        if not self.count_chars and self.window is not None:
            text = f"{self.max_tokens} tokens: a context window of {self.window.tokens} tokens ({self.window.describe()})"
            text += f" minus {self.window.reserve} reserved for the answer"
            if self.tools_tokens:
                text += f" and {self.tools_tokens} for the tool definitions"
            if self.max_tokens is not None and self.max_tokens < self.window.input_tokens - self.tools_tokens:
                text += ", capped by contextMaxTokens"
            return text
        why = "the fallback when tokens cannot be counted" if self.window is not None else "contextMaxChars"
        text = f"{self.max_chars} characters ({why})"
        return text + (f" / {self.max_tokens} tokens" if self.max_tokens else "")

    def load(self, chars: int, tokens: int) -> float:
        """The share of the tightest size budget in use (1.0 = full)."""
        share = 0.0
        if self.count_chars:
            share = chars / self.max_chars if self.max_chars > 0 else float("inf")
        if self.max_tokens:
            share = max(share, tokens / self.max_tokens)
        return share

    def fits(self, chars: int, tokens: int) -> bool:
        return (not self.count_chars or chars <= self.max_chars) and (self.max_tokens is None or tokens <= self.max_tokens)

    def as_dict(self) -> dict[str, Any]:
        return {
            "contextMaxMessages": self.max_messages,
            "contextMaxChars": self.max_chars,
            "contextMaxTokens": self.max_tokens,
            "enforced": "tokens" if not self.count_chars else "characters",
            "source": self.source,
            "contextWindow": self.window.as_dict() if self.window is not None else None,
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
