"""Where a judge fleet's next call goes: load per endpoint, which are out of service, their probes.

One ``Routes`` belongs to one event loop (its probes are tasks of that loop); ``FleetModel``
keeps one per loop, as a ``ProviderModel`` keeps its clients.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass

from jurybox.models._base import ProviderModel
from jurybox.models._errors import (
    EmptyResponseError,
    ModelConnectionError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from jurybox.models._limiter import AdaptiveLimiter
from jurybox.models._retry import RetryPolicy

_OUT_OF_SERVICE = (ModelConnectionError, ModelTimeoutError, EmptyResponseError)


class FleetUnavailableError(ModelConnectionError):
    """Every endpoint of a fleet is out of service (not retried: the probes bring them back)."""

    default_retryable = False


@dataclass(frozen=True)
class RoutePolicy:
    """When an endpoint is taken out and how it is probed (see ``FleetModel``)."""

    probe_interval: float
    probe_max_interval: float
    server_errors_to_eject: int
    probe_timeout: float
    retry: RetryPolicy


@dataclass
class Route:
    """One endpoint as one event loop sees it: load, health and its background probe."""

    index: int
    url: str
    member: ProviderModel
    in_flight: int = 0
    out: str | None = None  # why it was taken out of service; None while it serves
    resting_until: float = 0.0  # monotonic time a 429's Retry-After ends
    server_errors: int = 0  # 5xx in a row
    probe: asyncio.Task[None] | None = None
    limiter: AdaptiveLimiter | None = None  # the endpoint's limiter on this loop, once looked up


class Routes:
    """A fleet's endpoints on one event loop.

    Args:
        name: The fleet's ``provider:model``, for the all-out error.
        members: The endpoints' models, by base URL.
        policy: Ejection and probing settings.
        headers: Sent with each probe (the API key).
    """

    def __init__(
        self, name: str, members: Mapping[str, ProviderModel], policy: RoutePolicy, headers: Mapping[str, str]
    ) -> None:
        self.name = name
        self.routes = [Route(index, url, member) for index, (url, member) in enumerate(members.items())]
        self.policy = policy
        self.headers = dict(headers)
        self._next_turn = 0

    def out_of_service(self) -> dict[str, str]:
        return {route.url: route.out for route in self.routes if route.out is not None}

    async def choose(self) -> Route:
        """The serving endpoint with the fewest calls in flight; ties go to the next in turn.

        Raises:
            FleetUnavailableError: every endpoint is out of service.
        """
        while True:
            serving = [route for route in self.routes if route.out is None]
            if not serving:
                reasons = "; ".join(f"{route.url}: {route.out}" for route in self.routes)
                raise FleetUnavailableError(
                    f"every endpoint of fleet {self.name} is out of service ({reasons}); "
                    "they are probed in the background and serve again as soon as they answer",
                    provider=self.name.partition(":")[0],
                )
            now = time.monotonic()
            ready = [route for route in serving if _rests_until(route) <= now]
            if ready:
                break
            # Every serving endpoint asked us to wait (429 + Retry-After): wait for the first.
            await asyncio.sleep(min(_rests_until(route) for route in serving) - now)
        count, start = len(self.routes), self._next_turn
        best = min(ready, key=lambda route: (route.in_flight, (route.index - start) % count))
        self._next_turn = best.index + 1
        return best

    def after_failure(self, route: Route, error: ProviderError) -> float:
        """Mark what ``error`` says about ``route``; returns the seconds to wait before retrying."""
        policy = self.policy
        if isinstance(error, _OUT_OF_SERVICE):
            self.take_out(route, _why(error))
            return 0.0
        if isinstance(error, RateLimitError):
            pause = error.retry_after if error.retry_after is not None else policy.retry.backoff(1)
            route.resting_until = max(route.resting_until, time.monotonic() + pause)
            return 0.0
        if isinstance(error, ServerError):
            route.server_errors += 1
            if route.server_errors >= policy.server_errors_to_eject:
                self.take_out(route, f"HTTP {error.status} {route.server_errors} times in a row")
                return 0.0
            others = any(other.out is None and other is not route for other in self.routes)
            return 0.0 if others else policy.retry.backoff(route.server_errors, error.retry_after)
        return 0.0

    def take_out(self, route: Route, reason: str) -> None:
        if route.out is not None:
            return  # several calls failed at once on it: one probe is enough
        route.out = reason
        route.server_errors = 0
        route.probe = asyncio.get_running_loop().create_task(self._probe(route))

    def stop_probes(self) -> None:
        for route in self.routes:
            if route.probe is not None:
                route.probe.cancel()

    async def _probe(self, route: Route) -> None:
        """Ask ``GET /models`` with doubling pauses until the endpoint answers, then put it back."""
        import httpx  # only a fleet with an endpoint out of service needs it

        policy = self.policy
        delay = policy.probe_interval
        async with httpx.AsyncClient(timeout=policy.probe_timeout, headers=self.headers) as client:
            while True:
                await asyncio.sleep(delay)
                try:
                    reply = await client.get(f"{route.url}/models")
                except httpx.HTTPError:
                    reply = None
                # Any answer short of a server error means it is up (a gateway may not list models).
                if reply is not None and reply.status_code < 500:
                    route.out, route.resting_until, route.probe = None, 0.0, None
                    return
                delay = min(delay * 2, policy.probe_max_interval)


def _rests_until(route: Route) -> float:
    """When ``route`` may take calls again: its own 429's Retry-After, or one another process reported (rate signal)."""
    limiter = route.limiter
    if limiter is None:
        # Not made here: an endpoint that never took a call on this loop has no limiter (nor clients) yet.
        limiter = route.member.loop_limiter()
        if limiter is None:
            return route.resting_until
        route.limiter = limiter
    return max(route.resting_until, limiter.paused_until)


def _why(error: ProviderError) -> str:
    """A few words on why an endpoint was taken out, for the all-out error and ``out_of_service``."""
    if isinstance(error, ModelTimeoutError):
        return "no reply in time"
    if isinstance(error, EmptyResponseError):
        return "an empty reply"
    if "refused" in str(error).lower():
        return "connection refused"
    return "connection failed or dropped"
