"""FleetModel: one judge model served by several OpenAI-compatible endpoints (vLLM, SGLang, Ollama...).

Each request goes to the endpoint with the fewest requests in flight (ties take turns). An
endpoint that fails (connection refused or dropped, timeout, repeated 5xx) is taken out of
service and probed in the background (``GET /models``) with growing pauses; it is put back as
soon as it answers. A 429 rests only the endpoint that sent it, for its Retry-After. While every
endpoint is out, requests fail at once with ``FleetUnavailableError`` instead of waiting.

Every endpoint is an ``OpenAIModel`` of its own (its connection pool and adaptive concurrency
limit); the fleet keeps one response cache whose key names the model, not the endpoint, so a
reply is cached once whichever server gave it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import weakref
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.models._base import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, ProviderModel, resolve_api_key
from jurybox.models._cache import CacheBackend, CacheSetting
from jurybox.models._endpoint_calls import EndpointCalls, record_endpoint_call
from jurybox.models._errors import ModelConfigError, ProviderError
from jurybox.models._fleet_routes import RoutePolicy, Routes
from jurybox.models._providers import provider_class
from jurybox.models._retry import RetryPolicy
from jurybox.models._single_flight import ResponseCaching
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelResponse

#: What a fleet's cache key says in place of a server: the reply depends on the model, not on
#: which of the fleet's endpoints served it.
FLEET_BASE_URL = "fleet"


@dataclass
class _FleetLoop:
    routes: Routes
    inflight: dict[str, asyncio.Future[ModelResponse]] = field(default_factory=dict)
    closer: AsyncGenerator[None, None] | None = None


class FleetModel(ResponseCaching, JudgeModelBase):
    """``openai:<model>`` served by several OpenAI-compatible endpoints.

    Built by ``get_model("openai:my-judge@http://a:8000/v1,http://b:8000/v1")`` (or a suite's
    ``judge_model: {model: my-judge, endpoints: [...]}``, or repeated ``--judge-endpoint``).

    Args:
        model: The model name every endpoint serves.
        endpoints: The endpoints' base URLs (``http://host:port/v1``), at least one.
        api_key: Sent to every endpoint (default ``$OPENAI_API_KEY``, else a placeholder).
        concurrency: Most calls in flight per endpoint (each has its own limit and pool).
        timeout: Seconds per attempt; an endpoint that does not answer in time is taken out.
        retry: Retry policy; ``max_retries`` is a shortcut. A request moved to another endpoint
            because its first one was taken out does not wait, and does not use up a retry.
        cache: ``"auto"``, True, False or a cache, as for ``ProviderModel``.
        cache_path: The cache's file or URL, as for ``ProviderModel``.
        probe_interval: Seconds before the first probe of an endpoint taken out; doubled after
            each failed probe up to ``probe_max_interval``.
        server_errors_to_eject: 5xx replies in a row that take an endpoint out.
        **options: Passed to each endpoint's ``OpenAIModel`` (``params``, ``structured_output``...).
    """

    reports_endpoint_calls = True
    """It records each request by endpoint (``count_endpoint_calls``), so meters tally them."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        endpoints: Sequence[str],
        *,
        api_key: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        cache: CacheSetting = "auto",
        cache_path: str | Path | None = None,
        probe_interval: float = 0.5,
        probe_max_interval: float = 30.0,
        server_errors_to_eject: int = 3,
        **options: Any,
    ) -> None:
        urls = [str(url).rstrip("/") for url in endpoints]
        if not urls:
            raise ModelConfigError(f"openai:{model}: a fleet needs at least one endpoint")
        if len(set(urls)) != len(urls):
            raise ModelConfigError(f"openai:{model}: a fleet lists an endpoint twice: {', '.join(urls)}")
        if probe_interval <= 0 or probe_max_interval < probe_interval or server_errors_to_eject < 1:
            raise ModelConfigError(
                f"openai:{model}: need 0 < probe_interval <= probe_max_interval and server_errors_to_eject >= 1"
            )
        if cache not in ("auto", True, False) and not isinstance(cache, CacheBackend):
            raise ModelConfigError(f"openai:{model}: cache must be 'auto', True, False or a ResponseCache")
        openai_model: Any = provider_class("openai")
        # Each endpoint makes one attempt per request: the fleet decides where a retry goes.
        self.members: list[ProviderModel] = [
            openai_model(
                model,
                base_url=url,
                api_key=api_key,
                concurrency=concurrency,
                timeout=timeout,
                max_retries=0,
                cache=False,
                **options,
            )
            for url in urls
        ]
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.endpoints = tuple(member.effective_base_url for member in self.members)
        self.concurrency = concurrency
        self.timeout = timeout
        policy = retry or RetryPolicy()
        self.retry = dataclasses.replace(policy, max_retries=max_retries) if max_retries is not None else policy
        self.cache_setting: CacheSetting = cache
        self.cache_path = cache_path
        self.route_policy = RoutePolicy(
            probe_interval, probe_max_interval, server_errors_to_eject, min(timeout, 5.0), self.retry
        )
        key = resolve_api_key("openai", api_key, "OPENAI_API_KEY", base_url=urls[0], keyless="")
        self._auth = {"Authorization": f"Bearer {key}"}
        self._stats = {url: EndpointCalls() for url in self.endpoints}
        self._stats_lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _FleetLoop] = weakref.WeakKeyDictionary()

    # -------------------------------------------------------------- public

    def endpoint_calls(self) -> dict[str, EndpointCalls]:
        """Requests each endpoint answered and failed, in this process since the model was built."""
        with self._stats_lock:
            return {url: dataclasses.replace(counts) for url, counts in self._stats.items()}

    def out_of_service(self) -> dict[str, str]:
        """The endpoints out of service on the running event loop, with the reason each was taken out."""
        state = self._loops.get(asyncio.get_running_loop())
        return {} if state is None else state.routes.out_of_service()

    def cache_key_material(self, request: GenerateRequest) -> dict[str, Any]:
        """What this request's cache key is made of: an endpoint's, with the fleet in place of the server."""
        return {**self.members[0].cache_key_material(request), "base_url": FLEET_BASE_URL}

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        """Ask the model on the least busy endpoint; see the JudgeModel protocol."""
        state = await self._loop_state()
        return await self._answer(state.inflight, request, self._dispatch, state)

    async def aclose(self) -> None:
        """Stop this loop's probes and close every endpoint's HTTP clients."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None and state.closer is not None:
            await state.closer.aclose()
        for member in self.members:
            await member.aclose()

    def __repr__(self) -> str:
        return f"FleetModel({self.model!r}, endpoints={list(self.endpoints)!r})"

    # -------------------------------------------------------------- machinery

    async def _loop_state(self) -> _FleetLoop:
        # Probes and asyncio futures belong to one event loop, like a ProviderModel's clients.
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            members = dict(zip(self.endpoints, self.members, strict=True))
            routes = Routes(self.name, members, self.route_policy, self._auth)
            state = self._loops[loop] = _FleetLoop(routes)
            # An async generator the loop closes at shutdown: it stops the probes.
            state.closer = self._close_at_loop_end(state)
            await anext(state.closer)
        return state

    @staticmethod
    async def _close_at_loop_end(state: _FleetLoop) -> AsyncGenerator[None, None]:
        # The endpoints' own closers shut their clients at loop end; this one stops the probes.
        try:
            yield
        finally:
            state.routes.stop_probes()

    async def _dispatch(self, state: _FleetLoop, request: GenerateRequest) -> ModelResponse:
        policy = self.retry
        attempt = moves = 0
        while True:
            try:
                route = await state.routes.choose()
            except ProviderError as error:  # every endpoint out: say how many requests this call made
                error.attempts = max(attempt, error.attempts)
                raise
            attempt += 1
            route.in_flight += 1
            try:
                response = await route.member.send_uncached(request)
            except ProviderError as error:
                self._count(route.url, ok=False)
                error.attempts = attempt
                was_serving = route.out is None
                wait = state.routes.after_failure(route, error)
                # Moving off an endpoint just taken out is not a retry of a sick one; a flapping
                # endpoint gets this grace once per endpoint, so the attempts stay bounded.
                moves += was_serving and route.out is not None
                free_moves = min(moves, len(self.members))
                too_long = error.retry_after is not None and error.retry_after > policy.max_retry_after
                if not error.retryable or too_long or attempt - free_moves > policy.max_retries:
                    raise
                if wait:
                    await policy.sleep(wait)
                continue
            finally:
                route.in_flight -= 1
            route.server_errors = 0
            self._count(route.url, ok=True)
            return dataclasses.replace(response, attempts=attempt)

    def _count(self, url: str, *, ok: bool) -> None:
        record_endpoint_call(url, ok=ok)
        with self._stats_lock:
            counts = self._stats[url]
            if ok:
                counts.calls += 1
            else:
                counts.errors += 1
