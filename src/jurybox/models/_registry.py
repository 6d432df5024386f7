"""From a model spec to a JudgeModel: ``get_model`` builds one, ``shared_model`` keeps one per process."""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

from jurybox.models._base import DEFAULT_CONCURRENCY, ProviderModel
from jurybox.models._errors import ModelConfigError, ModelNotConfigured
from jurybox.models._fleet import FleetModel
from jurybox.models._providers import provider_class, provider_environment
from jurybox.models._spec import ModelSpec
from jurybox.models._types import JudgeModel, as_judge_model

JUDGE_MODEL_ENV = "JURYBOX_JUDGE_MODEL"

_default: JudgeModel | str | None = None
_shared: dict[tuple[ModelSpec, int, float | None, int | None, tuple[str | None, ...]], ProviderModel | FleetModel] = {}
"""The one cache of built models: by parsed spec, concurrency, timeout, retries and the environment providers read."""
_lock = threading.Lock()

# A judge given model="provider:model" resolves it on every call: parse each text once.
_parse = functools.lru_cache(maxsize=256)(ModelSpec.parse)


def parse_spec(spec: str) -> tuple[str, str]:
    """The provider and model a spec names (any form ``ModelSpec.parse`` reads; the server is left out)."""
    parsed = ModelSpec.parse(spec)
    return parsed.provider, parsed.model


def get_model(spec: str | ModelSpec, **options: Any) -> ProviderModel | FleetModel:
    """Build a new model from a spec.

    Examples: ``get_model("openai:gpt-4o-mini")``, ``get_model("anthropic:claude-haiku-4-5")``,
    ``get_model("ollama:llama3.1")``, ``get_model("openai:qwen2.5", base_url="http://localhost:8000/v1")``,
    ``get_model("openai:qwen2.5@http://localhost:8000/v1")``, ``get_model("http://localhost:8000/v1#qwen2.5")``,
    and a judge fleet (a ``FleetModel``): ``get_model("openai:qwen2.5@http://a:8000/v1,http://b:8000/v1")``.

    Each call builds its own model (its options may hold objects of the caller's: a ResponseCache,
    a RetryPolicy, a transport); ``shared_model`` and ``resolve_model`` hand out one per spec.

    Args:
        spec: A model spec (see ``ModelSpec``): ``provider:model``, ``provider:model@BASE_URL``
            or ``http://host:port/v1#model``.
        **options: Provider options (``api_key``, ``base_url``/``host``) and the common ones
            (``concurrency``, ``timeout``, ``max_retries``/``retry``, ``cache``, ``cache_path``,
            ``stream``, ``structured_output``, ``params``); see ``ProviderModel``.

    Raises:
        ModelConfigError: unknown provider, malformed spec, missing API key, a bad option, or a
            server given both in the spec and as ``base_url=``/``host=``.
    """
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    label = spec if isinstance(spec, str) else str(spec)
    if parsed.base_url is not None:
        for option in ("base_url", "host"):
            given = options.get(option)
            if given is not None and str(given).rstrip("/") != parsed.base_url:
                raise ModelConfigError(f"get_model({label!r}): the spec names a server and {option}={given!r} another")
        options = {**options, "base_url": parsed.base_url}
    try:
        if parsed.endpoints:
            for option in ("base_url", "host"):
                if options.get(option) is not None:
                    raise ModelConfigError(f"get_model({label!r}): a fleet's servers are its endpoints, not {option}=")
            return FleetModel(parsed.model, parsed.endpoints, **options)
        return provider_class(parsed.provider)(parsed.model, **options)
    except TypeError as error:  # an unknown keyword: say which model it was for
        raise ModelConfigError(f"get_model({label!r}): {error}") from error


def shared_model(
    spec: str | ModelSpec,
    *,
    min_concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> ProviderModel | FleetModel:
    """The process's one model for ``spec``, built on first use.

    Every caller naming the same model gets the same object, so they share one connection
    pool, concurrency limit and response cache. Spellings of one model are one entry
    (``openai:m@http://h/v1`` and ``http://h/v1#m``). A caller that keeps more calls in
    flight than ``DEFAULT_CONCURRENCY`` gets a model with that higher limit, shared with
    callers asking for the same.

    Args:
        spec: A model spec (see ``ModelSpec``).
        min_concurrency: The fewest calls in flight the caller needs; the limit is the larger
            of it and ``DEFAULT_CONCURRENCY``.
        timeout: Seconds per attempt (None: the provider default); a different value is another model.
        max_retries: Retries after a fault (None: the default policy); a different value is another model.

    Raises:
        ModelConfigError: the spec is malformed or its provider cannot be built (no API key).
    """
    parsed = spec if isinstance(spec, ModelSpec) else _parse(spec)
    key = (parsed, max(DEFAULT_CONCURRENCY, min_concurrency), timeout, max_retries, _provider_environment())
    with _lock:
        cached = _shared.get(key)
    if cached is not None:
        return cached
    given = {"timeout": timeout, "max_retries": max_retries}
    # Built outside the lock (it may import an SDK); a racing build of the same key loses.
    built = get_model(parsed, concurrency=key[1], **{name: value for name, value in given.items() if value is not None})
    with _lock:
        return _shared.setdefault(key, built)


def _provider_environment() -> tuple[str | None, ...]:
    # What providers read from the environment when a spec leaves it out (each registration names
    # its variables): a change (a test's monkeypatch, a notebook's os.environ[...] = ...) must build
    # a new model, not reuse one made with the old key or server.
    return tuple(os.environ.get(name) for name in provider_environment())


def set_default_model(model: JudgeModel | str | None) -> None:
    """Set the judge model used when none is given (None clears it; the env variable then applies)."""
    global _default  # noqa: PLW0603 - one process-wide default, like logging's root level
    with _lock:
        _default = model


def env_model_spec() -> str | None:
    """The spec in ``$JURYBOX_JUDGE_MODEL``, or None when it is unset or blank."""
    return os.environ.get(JUDGE_MODEL_ENV, "").strip() or None


def resolve_model(model: JudgeModel | str | None) -> JudgeModel:
    """A JudgeModel from a model, a spec string, or None (the configured default).

    None resolves to ``set_default_model(...)``'s model, else ``$JURYBOX_JUDGE_MODEL``. A model
    with only ``generate`` (written before ``complete``) is adapted (``as_judge_model``).
    Spec strings go through ``shared_model``, so every judge naming the same spec shares
    one connection pool, concurrency limit and cache.

    Raises:
        ModelNotConfigured: None was given and no judge model is configured.
        ModelConfigError: the spec is malformed or its provider cannot be built.
    """
    if model is None:
        with _lock:
            model = _default
        if model is None:
            model = env_model_spec()
        if model is None:
            raise ModelNotConfigured(
                "no judge model configured: pass model='openai:gpt-4o-mini' (or another 'provider:model'), "
                f"set the {JUDGE_MODEL_ENV} environment variable, or call jurybox.models.set_default_model(...)"
            )
    if isinstance(model, str):
        return shared_model(model)
    try:
        return as_judge_model(model)
    except TypeError:
        raise TypeError(
            f"expected a JudgeModel, a 'provider:model' string or None, got {type(model).__name__}"
        ) from None
