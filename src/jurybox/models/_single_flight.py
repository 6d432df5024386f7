"""One call for every caller asking the same thing at once, its reply cached: what every model's cache path shares.

A cold cache and many cases asking the same judge the same question would otherwise pay
for every copy. The first caller makes the call; the others wait for its reply and get it
marked ``cached`` at no cost. A follower whose leader was cancelled makes the call itself.
``ResponseCaching`` is that path for a model (a provider's, a fleet's), with the counting
of each call in the active ``UsageTracker``s.
"""

from __future__ import annotations

import asyncio
import dataclasses
from abc import abstractmethod
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

from jurybox.models._cache import (
    CacheBackend,
    CacheSetting,
    cache_disabled_by_env,
    cache_key,
    cache_refreshed_by_env,
    shared_cache,
)
from jurybox.models._spend import record_failure, record_usage
from jurybox.models._types import GenerateRequest, ModelResponse

State = TypeVar("State")

Inflight = MutableMapping[str, "asyncio.Future[ModelResponse]"]


def caches_reply(setting: CacheSetting, request: GenerateRequest) -> bool:
    """Whether a model with cache ``setting`` reads and writes ``request``'s reply in the cache."""
    if cache_disabled_by_env() or setting is False:
        return False
    if request.temperature == 0:
        return True
    # A sampled reply without a seed is meant to differ each time: caching it would hand every
    # self-consistency sample the same answer and fake perfect agreement.
    return setting is True and request.seed is not None


def cache_of(setting: CacheSetting, path: Any) -> CacheBackend:
    """The cache a model with ``setting`` uses: the backend it was given, else the shared one at ``path``."""
    return setting if isinstance(setting, CacheBackend) else shared_cache(path)


async def cached_single_flight(
    cache: CacheBackend,
    material: Any,
    inflight: Inflight,
    call: Callable[[], Awaitable[ModelResponse]],
    again: Callable[[], Awaitable[ModelResponse]],
) -> ModelResponse:
    """The cached reply for ``material``, else one ``call()`` shared by every concurrent caller.

    Args:
        cache: Where replies are kept.
        material: What identifies the request (``cache_key_material``).
        inflight: The calls on their way, by key (one per event loop).
        call: Makes the request (with its retries).
        again: This whole path again, for a follower whose leader was cancelled.
    """
    key = cache_key(material)
    # Refreshing: the stored reply is what the user distrusts (the judge changed); ask, then overwrite it.
    hit = None if cache_refreshed_by_env() else cache.get(key)
    if hit is not None:
        return hit
    pending = inflight.get(key)
    if pending is not None:
        try:
            response = await asyncio.shield(pending)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this caller was cancelled
            # The leader was cancelled, not us: make the call ourselves.
            return await again()
        return dataclasses.replace(response, cached=True, cost=0.0, latency=0.0)
    future: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
    inflight[key] = future
    try:
        response = await call()
    except asyncio.CancelledError:
        future.cancel()
        raise
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # mark retrieved: there may be no followers to read it
        raise
    else:
        cache.put(key, material, response)
        response = dataclasses.replace(response, cache_key=key)
        future.set_result(response)
        return response
    finally:
        inflight.pop(key, None)


class ResponseCaching:
    """A model's response cache: which requests it keeps, the cache itself, forgetting a reply, and the cached call.

    Mixed into ``ProviderModel`` and ``FleetModel``, which set ``cache_setting`` and
    ``cache_path`` and say what a request's key is made of (``cache_key_material``).
    """

    name: str
    cache_setting: CacheSetting
    cache_path: str | Path | None

    @abstractmethod
    def cache_key_material(self, request: GenerateRequest) -> dict[str, Any]:
        """What this request's cache key is made of (``jurybox cache explain`` prints it)."""

    def cache_enabled_for(self, request: GenerateRequest) -> bool:
        """Whether this request's reply is read from and written to the cache."""
        return caches_reply(self.cache_setting, request)

    @property
    def cache(self) -> CacheBackend:
        return cache_of(self.cache_setting, self.cache_path)

    def forget(self, response: ModelResponse) -> bool:
        """Take ``response`` out of the response cache, so the same request asks the model again.

        For a reply that turned out to be unusable (a judge could not read a verdict in it):
        at temperature 0 a cached reply is otherwise replayed on every later run. True when
        an entry was removed; False for a reply that was never cached.
        """
        if response.cache_key is None:
            return False
        return self.cache.delete(response.cache_key)

    async def _answer(
        self,
        inflight: Inflight,
        request: GenerateRequest,
        send: Callable[[State, GenerateRequest], Awaitable[ModelResponse]],
        state: State,
    ) -> ModelResponse:
        """``send(state, request)``'s reply, through the cache when the request is cached; counted in the trackers."""
        try:
            if self.cache_enabled_for(request):
                response = await self._cached(inflight, request, lambda: send(state, request))
            else:
                response = await send(state, request)
        except Exception as error:
            record_failure(error, self.name)
            raise
        record_usage(response)
        return response

    async def _cached(
        self, inflight: Inflight, request: GenerateRequest, call: Callable[[], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await cached_single_flight(
            self.cache,
            self.cache_key_material(request),
            inflight,
            call,
            lambda: self._cached(inflight, request, call),
        )
