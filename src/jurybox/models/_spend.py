"""Spend: what judge-model calls took (calls, attempts, cache hits, tokens, cost), one record for every count.

A **call** is one request a caller made of a model (one ``complete`` / ``generate``): each
re-ask after an unreadable reply and each self-consistency sample is one. A call ends in one
of three ways: answered by the provider (one or more **attempts**, the HTTP requests sent,
retries after faults included), answered from the response cache (a **cache hit**: zero
attempts, no cost), or failed (a **failure**, after its attempts). The same record counts a
run, a case, one model (``UsageTracker.by_model``) and a whole program, and adds up across
processes and Ray actors with ``merge``.

``UsageTracker`` collects the calls made while it is active (every jurybox model reports to
it); ``MeteredModel`` (``_meter.py``) counts one model's calls for a run and its cases.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from jurybox.models._endpoint_calls import EndpointCalls, count_endpoint_calls, merge_endpoint_calls
from jurybox.models._types import ModelResponse

#: How ``metadata["calls"]`` (and the report's ``totals.calls``) names a judge fleet's endpoint.
ENDPOINT_CALLS_PREFIX = "judge@"

_active: ContextVar[tuple[UsageTracker, ...]] = ContextVar("jurybox_usage_trackers", default=())


@dataclass
class Spend:
    """Model calls and what they took; the one spend record (it was also ``ModelUsage``).

    Attributes:
        calls: Calls made: answered, cache hits and failures alike.
        attempts: HTTP requests sent for them, retries included; none for a cache hit, at least
            one for a failure (``ProviderError.attempts``).
        retries: Attempts after the first of each call.
        failures: Calls that raised after their retries.
        cache_hits: Calls answered from the response cache.
        input_tokens: Input tokens of the answered calls whose provider reported usage (a
            cache hit counts its original call's tokens, so the figure is the same on a warm cache).
        output_tokens: Output tokens of those calls.
        tokens: Input and output tokens together.
        unmetered_calls: Answered calls whose provider reported no usage; when not 0 the token
            figures are a lower bound (``known_tokens`` is None).
        cost: USD of the answered calls with a known price (a cache hit costs 0).
        unpriced_calls: Answered calls with no known price; when not 0 ``cost`` is a lower bound
            (``known_cost`` is None).
        endpoints: A judge fleet's requests by endpoint URL: answered (``calls``) and failed (``errors``).
    """

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    failures: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens: int = 0
    unmetered_calls: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0
    endpoints: dict[str, EndpointCalls] = field(default_factory=dict)

    def add(self, response: ModelResponse) -> None:
        """Count one answered call (from the provider or, ``response.cached``, from the cache)."""
        self.calls += 1
        if response.cached:
            self.cache_hits += 1
        else:
            self.attempts += response.attempts
            self.retries += response.attempts - 1
        usage = response.usage
        if usage.input_tokens is None and usage.output_tokens is None:
            self.unmetered_calls += 1
        else:
            self.input_tokens += usage.input_tokens or 0
            self.output_tokens += usage.output_tokens or 0
            self.tokens += (usage.input_tokens or 0) + (usage.output_tokens or 0)
        if response.cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += response.cost

    def fail(self, error: BaseException) -> None:
        """Count a call that raised: its attempts (``ProviderError.attempts``, else one) and the failure."""
        attempts = getattr(error, "attempts", None)
        attempts = attempts if isinstance(attempts, int) and attempts > 0 else 1
        self.calls += 1
        self.failures += 1
        self.attempts += attempts
        self.retries += attempts - 1

    def merge(self, other: Spend) -> None:
        """Add ``other``'s counts to these (another case's, process's or actor's)."""
        self.calls += other.calls
        self.attempts += other.attempts
        self.retries += other.retries
        self.failures += other.failures
        self.cache_hits += other.cache_hits
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.tokens += other.tokens
        self.unmetered_calls += other.unmetered_calls
        self.cost += other.cost
        self.unpriced_calls += other.unpriced_calls
        if other.endpoints:
            merge_endpoint_calls(self.endpoints, other.endpoints)

    @property
    def known_tokens(self) -> int | None:
        """The token total, 0 with no calls, or None when any call's usage is unknown (never a silent 0)."""
        return None if self.unmetered_calls else self.tokens

    @property
    def known_cost(self) -> float | None:
        """The cost, 0 with no calls, or None when any call's price is unknown."""
        return None if self.unpriced_calls else self.cost

    @property
    def cost_known(self) -> bool:
        """True when every answered call had a known price (``cost`` is then exact, not a lower bound)."""
        return self.unpriced_calls == 0

    def accounting(self) -> dict[str, int]:
        """The call counts as the case record's ``metadata["calls"]["judge"]`` keeps them."""
        return {
            "calls": self.calls,
            "attempts": self.attempts,
            "retries": self.retries,
            "failures": self.failures,
            "cache_hits": self.cache_hits,
        }

    def endpoint_accounting(self) -> dict[str, dict[str, int]]:
        """A fleet's requests per endpoint, as ``metadata["calls"]`` keeps them: ``{"judge@URL": {calls, errors}}``."""
        return {ENDPOINT_CALLS_PREFIX + url: counts.to_dict() for url, counts in self.endpoints.items()}

    def to_dict(self) -> dict[str, Any]:
        """Every count, for JSON (``cost_usd`` rounded to 8 places; ``endpoints`` only for a fleet)."""
        data: dict[str, Any] = {
            "calls": self.calls,
            "attempts": self.attempts,
            "retries": self.retries,
            "failures": self.failures,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.tokens,
            "unmetered_calls": self.unmetered_calls,
            "cost_usd": round(self.cost, 8),
            "unpriced_calls": self.unpriced_calls,
            "cost_known": self.cost_known,
        }
        if self.endpoints:
            data["endpoints"] = {url: counts.to_dict() for url, counts in self.endpoints.items()}
        return data


@dataclass
class UsageTracker:
    """Sums every model call made while it is active (``with tracker:``), per model and in total.

    Trackers follow asyncio tasks (a ContextVar), so a tracker activated around a run
    sees every call its judges make; nested trackers all record. A judge fleet's requests
    are counted by endpoint in ``total.endpoints``.

    Example:
        >>> tracker = UsageTracker()
        >>> with tracker:  # doctest: +SKIP
        ...     await judge_everything()
        >>> tracker.total.cost, tracker.total.unpriced_calls  # doctest: +SKIP
    """

    total: Spend = field(default_factory=Spend)
    by_model: dict[str, Spend] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _entered: list[AbstractContextManager[UsageTracker]] = field(default_factory=list, repr=False, compare=False)

    def record(self, response: ModelResponse) -> None:
        """Add one answered call (thread-safe)."""
        with self._lock:
            self.total.add(response)
            self.by_model.setdefault(response.model or "unknown", Spend()).add(response)

    def record_failure(self, error: BaseException, model: str) -> None:
        """Add one call to ``model`` that raised (thread-safe)."""
        with self._lock:
            self.total.fail(error)
            self.by_model.setdefault(model or "unknown", Spend()).fail(error)

    @contextmanager
    def activate(self) -> Iterator[UsageTracker]:
        """Make this tracker record every call in the current context."""
        token = _active.set((*_active.get(), self))
        try:
            with count_endpoint_calls(self.total.endpoints):
                yield self
        finally:
            _active.reset(token)

    def __enter__(self) -> UsageTracker:
        entered = self.activate()
        entered.__enter__()
        self._entered.append(entered)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._entered.pop().__exit__(*exc)

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total.to_dict(), "by_model": {k: v.to_dict() for k, v in self.by_model.items()}}


def record_usage(response: ModelResponse) -> None:
    """Record an answered call in every active tracker (jurybox's models call this once per call)."""
    for tracker in _active.get():
        tracker.record(response)


def record_failure(error: BaseException, model: str) -> None:
    """Record a call to ``model`` that raised in every active tracker (once per failed call)."""
    for tracker in _active.get():
        tracker.record_failure(error, model)
