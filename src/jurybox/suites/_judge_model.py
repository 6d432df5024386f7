"""Which judge model a run uses: ``--judge-model``, then the suite's ``judge_model:``, then the environment."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from jurybox.models import (
    DEFAULT_CONCURRENCY,
    JUDGE_MODEL_ENV,
    JudgeModel,
    ModelError,
    ModelNotConfigured,
    ProviderModel,
    get_model,
    resolve_model,
    resolved_models,
)
from jurybox.suites._meter import MeteredModel
from jurybox.suites._workers import split

HOW_TO_ENABLE = (
    "configure a judge model to run it: --judge-model ollama:llama3.1, --judge-model openai:gpt-4o-mini, "
    "--judge-model http://host:port/v1#model (any OpenAI-compatible server), or set JURYBOX_JUDGE_MODEL"
)
DEFAULT_URL_MODEL = "default"


class JudgeModelError(ValueError):
    """A judge model was asked for but cannot be built (unknown provider, bad spec, no API key)."""


def resolve_judge_model(
    explicit: Any, suite_value: str | None = None, *, concurrency: int | None = None
) -> JudgeModel | None:
    """The JudgeModel the LLM judges of a run use, or None when none is configured.

    One model object is built per spec, so every LLM judge shares one client
    (one connection pool and concurrency limit) instead of opening its own.

    Args:
        explicit: A JudgeModel; a ``provider:model`` name; ``provider:model@BASE_URL``; a bare
            OpenAI-compatible base URL (``http://host:port/v1``, model name after ``#``); or None.
        suite_value: The suite file's ``judge_model:``; then ``$JURYBOX_JUDGE_MODEL``, then a
            default set with ``jurybox.models.set_default_model``.
        concurrency: Cases the run keeps in flight; a model named here gets at least that many
            concurrent calls (and pooled connections), so the judge is never the bottleneck.

    Raises:
        JudgeModelError: a model was named but cannot be built.
    """
    if explicit is not None and not isinstance(explicit, str):
        if not callable(getattr(explicit, "generate", None)):
            raise JudgeModelError(f"judge model {explicit!r} has no generate() method")
        return explicit  # type: ignore[no-any-return]
    spec = (explicit or suite_value or os.environ.get(JUDGE_MODEL_ENV) or "").strip() or None
    try:
        if spec is None:
            # A default set in code with jurybox.models.set_default_model(...), if any.
            try:
                return resolve_model(None)
            except ModelNotConfigured:
                return None
        return _build(spec, max(DEFAULT_CONCURRENCY, concurrency or 0))
    except (ModelError, ValueError, TypeError) as exc:
        raise JudgeModelError(f"cannot use judge model {spec!r}: {exc}") from exc


_built: dict[tuple[str, str | None, int], JudgeModel] = {}


def _build(spec: str, concurrency: int) -> JudgeModel:
    """One model per (name, base URL, concurrency) in this process, shared by every run that asks for it."""
    if spec.startswith(("http://", "https://")):
        parts = urlsplit(spec)
        name = f"openai:{parts.fragment or DEFAULT_URL_MODEL}"
        base_url: str | None = urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
    else:
        name, at, url = spec.partition("@")
        base_url = url if at else None
    if base_url is None and concurrency <= DEFAULT_CONCURRENCY:
        return resolve_model(name)
    key = (name, base_url, concurrency)
    if key not in _built:
        options: dict[str, Any] = {"concurrency": concurrency}
        if base_url is not None:
            options["base_url"] = base_url
        _built[key] = get_model(name, **options)
    return _built[key]


def model_label(model: Any) -> str | None:
    """The ``provider:model`` name of a judge model, for reports and the store."""
    if model is None:
        return None
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else type(model).__name__


def share_connections(model: Any, index: int, count: int) -> None:
    """In worker ``index`` of ``count``: cut each judge model's limit to this worker's share of it.

    The shares add up to the limit, so the TCP connections all workers open stay
    within it, as in a one-process run; a model whose limit is below ``count`` still
    gets one connection per worker. For the run's model, the models built for a
    judge's own ``model:`` and those resolved by name; call it in the worker, on the
    worker's copies of the models.
    """
    run_model = model.model if isinstance(model, MeteredModel) else model
    models = {id(m): m for m in (run_model, *_built.values(), *resolved_models())}
    for each in models.values():
        if isinstance(each, ProviderModel):
            each.concurrency = max(1, split(each.concurrency, count)[index])
