"""When to retry a failed model call and how long to wait: exponential backoff with jitter, Retry-After."""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timezone


@dataclass(frozen=True)
class RetryPolicy:
    """Delays between attempts. The number of retries is ``ProviderConfig.max_retries``.

    Without a Retry-After header the n-th retry (n = 1, 2, ...) waits
    ``min(max_delay, base_delay * 2**(n-1))`` scaled by a random factor in ``[1 - jitter, 1]``
    (so that many clients do not retry in lockstep). A Retry-After (or ``retry-after-ms``) header
    is honoured exactly, capped at ``retry_after_cap``.
    """

    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: float = 0.5
    retry_after_cap: float = 60.0
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_after_cap))
        backoff = min(self.max_delay, self.base_delay * 2 ** (retry_number - 1))
        return backoff * (1.0 - self.jitter * self.random())


def parse_retry_after(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date; None if absent/invalid."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _number(raw_ms)
        if seconds is not None:
            return seconds / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # HTTP dates are GMT; a zone-less one is read as UTC, not local time
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now())


def _number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return max(0.0, value) if math.isfinite(value) else None
