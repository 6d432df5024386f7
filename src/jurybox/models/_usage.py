"""UsageTracker: calls, cache hits, tokens and cost summed over a run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from jurybox.models._types import ModelResponse

_active: ContextVar[tuple[UsageTracker, ...]] = ContextVar("jurybox_usage_trackers", default=())


@dataclass
class ModelUsage:
    """Totals for one model (or for the whole run).

    Attributes:
        calls: Calls answered by the provider (cache hits not included).
        cache_hits: Calls answered from the response cache (no tokens spent, no cost).
        input_tokens: Input tokens spent (provider calls only).
        output_tokens: Output tokens spent (provider calls only).
        cost: Sum of the known costs in USD.
        unknown_cost_calls: Provider calls whose price (or token count) is unknown; when this
            is not 0, ``cost`` is a lower bound and reports must say so.
    """

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    unknown_cost_calls: int = 0

    @property
    def cost_known(self) -> bool:
        """True when every provider call had a known cost."""
        return self.unknown_cost_calls == 0

    def add(self, response: ModelResponse) -> None:
        if response.cached:
            self.cache_hits += 1
            return
        self.calls += 1
        self.input_tokens += response.usage.input_tokens or 0
        self.output_tokens += response.usage.output_tokens or 0
        if response.cost is None:
            self.unknown_cost_calls += 1
        else:
            self.cost += response.cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost, 8),
            "unknown_cost_calls": self.unknown_cost_calls,
            "cost_known": self.cost_known,
        }


@dataclass
class UsageTracker:
    """Sums every model call made while it is active (``with tracker:``), per model and in total.

    Trackers follow asyncio tasks (a ContextVar), so a tracker activated around a run
    sees every call its judges make; nested trackers all record.

    Example:
        >>> tracker = UsageTracker()
        >>> with tracker:  # doctest: +SKIP
        ...     await judge_everything()
        >>> tracker.total.cost, tracker.total.unknown_cost_calls  # doctest: +SKIP
    """

    total: ModelUsage = field(default_factory=ModelUsage)
    by_model: dict[str, ModelUsage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _tokens: list[Any] = field(default_factory=list, repr=False, compare=False)

    def record(self, response: ModelResponse) -> None:
        """Add one response (thread-safe)."""
        with self._lock:
            self.total.add(response)
            self.by_model.setdefault(response.model or "unknown", ModelUsage()).add(response)

    @contextmanager
    def activate(self) -> Iterator[UsageTracker]:
        """Make this tracker record every call in the current context."""
        token = _active.set((*_active.get(), self))
        try:
            yield self
        finally:
            _active.reset(token)

    def __enter__(self) -> UsageTracker:
        self._tokens.append(_active.set((*_active.get(), self)))
        return self

    def __exit__(self, *exc: object) -> None:
        _active.reset(self._tokens.pop())

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total.to_dict(), "by_model": {k: v.to_dict() for k, v in self.by_model.items()}}


def record_usage(response: ModelResponse) -> None:
    """Record ``response`` in every active tracker (models call this once per generate)."""
    for tracker in _active.get():
        tracker.record(response)
