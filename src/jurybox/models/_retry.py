"""Bounded retries: which failures to retry, how long to wait, and Retry-After parsing."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How a model retries a failed call.

    Retried: HTTP 429 (not quota exhaustion), 408, 5xx, timeouts and connection errors.
    Never retried: other 4xx and exhausted quota. The wait before retry ``n`` (1-based)
    is ``min(max_delay, base_delay * 2 ** (n - 1))`` with jitter (a random value between
    half and all of it), or the provider's Retry-After when that is longer.
    Defaults: 4 retries (5 attempts), 0.5 s, 1 s, 2 s, 4 s (halved at random), at most 30 s
    each; a Retry-After of up to 120 s is honoured.

    Attributes:
        max_retries: Retries after the first attempt (attempts = max_retries + 1).
        base_delay: Seconds before the first retry, before jitter.
        max_delay: Upper bound on the computed backoff.
        max_retry_after: Longest Retry-After we will honour; asked to wait longer, we give up
            at once instead of hanging a run.
        sleep: The sleep function (tests pass one that records the waits).
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    sleep: Sleep = field(default=asyncio.sleep, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("retry delays must be >= 0")

    def backoff(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        computed = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        jittered = random.uniform(computed / 2, computed)  # jitter spreads a burst of retries apart
        # Never sooner than the provider asked; never sooner than our own backoff either.
        return jittered if retry_after is None else max(retry_after, jittered)


def parse_retry_after(headers: Mapping[str, str] | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP-date).

    Returns None when there is no usable header; a date in the past gives 0.
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
