"""Per-endpoint call counts of a judge fleet, for whoever is counting (a run, a case, a test).

A fleet records every request it sends (answered or failed) in the tallies active in the
current context, as ``record_usage`` does for calls. A ContextVar follows the asyncio task,
so a case's tally sees only its own calls, even with hundreds of cases in flight.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class EndpointCalls:
    """Requests one endpoint answered (``calls``) and the ones that failed there (``errors``)."""

    calls: int = 0
    errors: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "errors": self.errors}


EndpointTally = dict[str, EndpointCalls]
"""Counts by endpoint base URL."""

_active: ContextVar[tuple[EndpointTally, ...]] = ContextVar("jurybox_endpoint_tallies", default=())


@contextmanager
def count_endpoint_calls(into: EndpointTally | None = None) -> Iterator[EndpointTally]:
    """Count, by endpoint, the fleet requests made in this context until the block ends (into ``into`` if given)."""
    tally: EndpointTally = {} if into is None else into
    token = _active.set((*_active.get(), tally))
    try:
        yield tally
    finally:
        _active.reset(token)


def record_endpoint_call(endpoint: str, *, ok: bool) -> None:
    """Add one request to ``endpoint`` to every active tally (fleets call this once per request)."""
    for tally in _active.get():
        counts = tally.setdefault(endpoint, EndpointCalls())
        if ok:
            counts.calls += 1
        else:
            counts.errors += 1


def merge_endpoint_calls(into: EndpointTally, other: Mapping[str, EndpointCalls]) -> None:
    """Add ``other``'s counts to ``into``."""
    for endpoint, counts in other.items():
        target = into.setdefault(endpoint, EndpointCalls())
        target.calls += counts.calls
        target.errors += counts.errors
