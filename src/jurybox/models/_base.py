"""ProviderModel: what every real provider shares (cache, single-flight, concurrency, retries, cost, usage)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
import weakref
from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from jurybox.core import error_reason, network_cause
from jurybox.models._cache import CacheBackend, CacheSetting, cache_key_material
from jurybox.models._errors import (
    ModelConfigError,
    ModelConnectionError,
    ModelTimeoutError,
    ProviderError,
    QuotaExceededError,
    RateLimitError,
    RequestRejectedError,
    ServerError,
)
from jurybox.models._limiter import AdaptiveLimiter
from jurybox.models._prices import PriceMemo
from jurybox.models._probe import EndpointCheck
from jurybox.models._rate_signal import rate_key
from jurybox.models._retry import RetryPolicy, parse_retry_after
from jurybox.models._shares import connection_share, split_evenly
from jurybox.models._single_flight import ResponseCaching
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelResponse

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT = 60.0
LOCAL_API_KEY = "jurybox-local"  # local servers (base_url) accept any key; the SDKs insist on one
_QUOTA_CODES = {"insufficient_quota", "billing_hard_limit_reached", "quota_exceeded", "billing_error"}
_NOT_RETRIED_5XX = {501, 505}


#: Most connections in one HTTP client pool. httpcore matches queued requests to connections in
#: O(requests x connections) on every event, so one pool of 256 costs ~5 ms CPU per call against
#: ~2 ms for 8 pools of 32 (benchmarks/models_stub_load.py).
LANE_SIZE = 32


@dataclass
class _Lane:
    """One pooled HTTP client and how many calls it is carrying now."""

    client: Any
    size: int
    in_flight: int = 0


@dataclass
class _LoopState:
    """Per event loop: the client lanes, the limiter, in-flight cacheable requests and the price."""

    lanes: list[_Lane]
    limiter: AdaptiveLimiter
    inflight: dict[str, asyncio.Future[ModelResponse]] = field(default_factory=dict)
    closer: AsyncGenerator[None, None] | None = None
    price: PriceMemo = field(default_factory=PriceMemo)

    def take_lane(self) -> _Lane:
        # The limiter keeps calls <= the sum of lane sizes, so some lane always has room.
        lane = min(self.lanes, key=lambda candidate: candidate.in_flight / candidate.size)
        lane.in_flight += 1
        return lane


class ProviderModel(ResponseCaching, EndpointCheck, JudgeModelBase):
    """Base of the models ``get_model`` builds.

    A subclass says how to build its client, send one request and translate its
    SDK's exceptions; this class adds the response cache (with single-flight), the
    concurrency limit, bounded retries, cost and usage recording.

    Args:
        model: The provider's model name (``gpt-4o-mini``).
        base_url: Server URL; None -> the provider's default.
        concurrency: Most calls in flight at once, and most TCP connections open. In the worker
            processes of a run this is the limit of them all together: each uses its share
            (``process_concurrency``, see ``use_connection_share``).
        adaptive_concurrency: Halve the limit on a 429 and grow it back on success.
        timeout: Seconds per attempt.
        retry: Retry policy (default ``RetryPolicy()``); ``max_retries`` is a shortcut.
        cache: ``"auto"`` (cache replies to temperature-0 requests), True (always), False
            (never), or a cache to use (a ResponseCache, or ``open_cache(URL)``).
        cache_path: The cache for ``"auto"``/True: a file or ``redis://``/``postgresql://`` URL (``open_cache``).
        stream: Use the provider's streaming API and assemble the reply.
        structured_output: Send the JSON schema to the provider's structured-output feature.
        params: Extra request fields sent as-is (e.g. ``{"top_p": 0.9}``); part of the cache key.
    """

    provider: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        adaptive_concurrency: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        cache: CacheSetting = "auto",
        cache_path: str | Path | None = None,
        stream: bool = False,
        structured_output: bool = True,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if not model:
            raise ModelConfigError(f"{self.provider}: the model name is empty (expected '{self.provider}:<model>')")
        if concurrency < 1:
            raise ModelConfigError(f"{self.provider}: concurrency must be at least 1, got {concurrency}")
        if timeout <= 0:
            raise ModelConfigError(f"{self.provider}: timeout must be > 0 seconds, got {timeout}")
        if cache not in ("auto", True, False) and not isinstance(cache, CacheBackend):
            raise ModelConfigError(f"{self.provider}: cache must be 'auto', True, False or a ResponseCache")
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.base_url = base_url.rstrip("/") if base_url else None
        self.concurrency = concurrency
        self.adaptive_concurrency = adaptive_concurrency
        self.timeout = timeout
        policy = retry or RetryPolicy()
        self.retry = dataclasses.replace(policy, max_retries=max_retries) if max_retries is not None else policy
        self.cache_setting: CacheSetting = cache
        self.cache_path = cache_path
        self.stream = stream
        self.structured_output = structured_output
        self.params: dict[str, Any] = dict(params or {})
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()

    # -------------------------------------------------------------- provider hooks

    @abstractmethod
    def _make_client(self, connections: int) -> Any:
        """A pooled client for the running event loop holding at most ``connections`` connections."""

    @abstractmethod
    async def _send(self, client: Any, request: GenerateRequest) -> ModelResponse:
        """One attempt; returns text, usage, finish reason and raw. Raises SDK or ProviderError exceptions."""

    @abstractmethod
    def _translate(self, error: Exception) -> ProviderError | None:
        """The ProviderError for an SDK/transport exception, or None when it is not a provider failure."""

    async def _close_client(self, client: Any) -> None:
        await client.close()

    # -------------------------------------------------------------- for providers

    def _timeout_error(self) -> ModelTimeoutError:
        """What a provider raises for a call that got no reply within ``timeout``."""
        return ModelTimeoutError(f"timed out after {self.timeout:g}s", provider=self.provider, url=self.printable_url)

    def _connection_error(self, cause: BaseException) -> ModelConnectionError:
        """What a provider raises for a call whose connection failed (refused, reset, dropped).

        Worded for a person ("connection refused at URL: is the server running?"); the
        transport's own exception stays the ``__cause__``.
        """
        named = network_cause(cause)
        url = self.printable_url
        message = f"{named} at {url}" if named else f"connection to {url} failed: {error_reason(cause)}"
        return ModelConnectionError(message, provider=self.provider, url=url)

    # -------------------------------------------------------------- public

    @property
    def effective_base_url(self) -> str:
        return self.base_url or self.default_base_url

    @property
    def process_concurrency(self) -> int:
        """Most calls in flight (and TCP connections) in this process.

        ``concurrency``, or in a worker process its share of it (``use_connection_share``).
        Read when an event loop makes its first call through this model.
        """
        return connection_share(self.concurrency)

    def cache_key_material(self, request: GenerateRequest) -> dict[str, Any]:
        """What this request's cache key is made of (``jurybox cache explain`` prints it)."""
        return cache_key_material(
            provider=self.provider,
            model=self.model,
            base_url=self.effective_base_url,
            request=request,
            options={**self.params, **({"structured_output": False} if not self.structured_output else {})},
        )

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        """Ask the model; see the JudgeModel protocol. Raises ProviderError subclasses on failure."""
        state = self._state()
        if state.closer is None:
            await self._close_with_the_loop(state)
        return await self._answer(state.inflight, request, self._call_with_retries, state)

    async def send_uncached(self, request: GenerateRequest) -> ModelResponse:
        """One call through this model's limiter, pool and retries: no cache, not counted.

        What a judge fleet asks of each of its endpoints; the fleet caches and counts the call.
        """
        state = self._state()
        if state.closer is None:
            await self._close_with_the_loop(state)
        return await self._call_with_retries(state, request)

    def loop_limiter(self) -> AdaptiveLimiter | None:
        """The concurrency limiter of the running event loop; None before this loop's first call."""
        state = self._states.get(asyncio.get_running_loop())
        return None if state is None else state.limiter

    async def aclose(self) -> None:
        """Close the HTTP clients of the running event loop.

        Optional: they are also closed when the loop shuts down (``asyncio.run`` closes the
        loop's async generators, one of which is this model's closer).
        """
        state = self._states.pop(asyncio.get_running_loop(), None)
        if state is None:
            return
        if state.closer is not None:
            await state.closer.aclose()
        else:
            await self._close_lanes(state)

    async def _close_with_the_loop(self, state: _LoopState) -> None:
        # An async generator the loop knows about: asyncio.run() (and pytest-asyncio) close
        # it at loop shutdown, which closes this loop's HTTP clients instead of leaking them.
        state.closer = self._close_at_loop_end(state)
        await anext(state.closer)

    async def _close_at_loop_end(self, state: _LoopState) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self._close_lanes(state)

    async def _close_lanes(self, state: _LoopState) -> None:
        lanes, state.lanes = state.lanes, []
        for lane in lanes:
            try:
                await self._close_client(lane.client)
            except Exception:  # closing is best effort: the calls already finished
                continue

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}({self.model!r}{where})"

    # -------------------------------------------------------------- machinery

    def _state(self) -> _LoopState:
        # Clients and asyncio primitives belong to one event loop; evaluate() may run each call in a new one.
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            limit = self.process_concurrency
            key = rate_key(self.provider, self.effective_base_url, self.model)
            limiter = AdaptiveLimiter(limit, adaptive=self.adaptive_concurrency, key=key)
            # Sizes add up to exactly the limit, so the TCP connections opened never exceed it.
            lanes = [_Lane(self._make_client(size), size) for size in split_evenly(limit, -(-limit // LANE_SIZE))]
            state = self._states[loop] = _LoopState(lanes, limiter)
        return state

    async def _call_with_retries(self, state: _LoopState, request: GenerateRequest) -> ModelResponse:
        policy = self.retry
        attempt = 0
        while True:
            attempt += 1
            response, raw_error, error, started = None, None, None, 0.0
            generation = await state.limiter.acquire()
            lane = state.take_lane()
            try:
                started = time.perf_counter()
                response = await self._send(lane.client, request)
            except Exception as caught:
                raw_error = caught
                error = caught if isinstance(caught, ProviderError) else self._translate(caught)
            finally:
                # Also on cancellation (a judge timeout), so a cancelled call never leaks its slot.
                lane.in_flight -= 1
                state.limiter.release(
                    generation, rate_limited=isinstance(error, RateLimitError), succeeded=response is not None
                )
            if response is not None:
                latency = time.perf_counter() - started
                cost = state.price.cost(self.provider, self.model, response.usage)
                return dataclasses.replace(response, model=self.name, latency=latency, cost=cost, attempts=attempt)
            assert raw_error is not None
            if error is None:
                raise raw_error
            error.attempts = attempt
            error.url = error.url or self.printable_url
            too_long = error.retry_after is not None and error.retry_after > policy.max_retry_after
            wait = policy.backoff(attempt, error.retry_after)
            if isinstance(error, RateLimitError):  # with a rate signal, every process pauses (not for too long)
                state.limiter.rate_limited(generation, 0.0 if too_long else wait)
            if not error.retryable or attempt > policy.max_retries or too_long:
                if error is raw_error:
                    raise error
                raise error from raw_error
            await policy.sleep(wait)


def resolve_api_key(provider: str, api_key: str | None, env: str, *, base_url: str | None, keyless: str) -> str:
    """``api_key``, else ``$env``; a server given by ``base_url`` may go without one.

    Args:
        provider: The provider's name, for the error message.
        api_key: The key the caller passed, if any.
        env: The environment variable that holds the provider's key.
        base_url: The server the model talks to; None for the provider's own API.
        keyless: How to use a server that needs no key, for the error message.

    Returns:
        The key, or a placeholder for a ``base_url`` server when there is none.

    Raises:
        ModelConfigError: No key and no ``base_url``: the provider's own API needs one.
    """
    key = api_key or os.environ.get(env)
    if key:
        return key
    if base_url is None:
        raise ModelConfigError(f"{provider}: no API key. Set {env} (or pass api_key=...); {keyless}")
    return LOCAL_API_KEY


def status_error(provider: str, status: int, headers: Mapping[str, str] | None, body: Any) -> ProviderError:
    """The ProviderError for an HTTP error reply, from its status, headers and (parsed) body."""
    message, code = error_fields(body)
    retry_after = parse_retry_after(headers)
    common: dict[str, Any] = {"provider": provider, "status": status, "provider_message": message, "code": code}
    if status == 402 or (code in _QUOTA_CODES):
        return QuotaExceededError("quota or credit exhausted; not retried", **common)
    if status == 429:
        return RateLimitError("rate limited", retry_after=retry_after, **common)
    if status == 408 or (status >= 500 and status not in _NOT_RETRIED_5XX):
        return ServerError(f"server error HTTP {status}", retry_after=retry_after, **common)
    return RequestRejectedError(f"request rejected with HTTP {status}; not retried", **common)


def error_fields(body: Any) -> tuple[str | None, str | None]:
    """(message, code) from OpenAI ``{"error": {...}}``, Anthropic ``{"type": "error", "error": {...}}``,
    Ollama ``{"error": "..."}`` or an SDK's unwrapped error object."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message")
            code = inner.get("code") or inner.get("type")
            return (str(message) if message is not None else None), (str(code) if code is not None else None)
        if isinstance(inner, str):
            return inner, None
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        return body.strip()[:500], None
    return None, None
