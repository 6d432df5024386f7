"""Which judge model a run uses: ``--judge-model``, then the suite's ``judge_model:``, then the environment.

The spec grammar and the one shared model per spec live in ``jurybox.models``
(``ModelSpec``, ``shared_model``); this module only decides which spec a run uses.
"""

from __future__ import annotations

from typing import Any

from jurybox.models import (
    JudgeModel,
    ModelError,
    ModelNotConfigured,
    env_model_spec,
    resolve_model,
    shared_model,
)

HOW_TO_ENABLE = (
    "configure a judge model to run it: --judge-model ollama:llama3.1, --judge-model openai:gpt-4o-mini, "
    "--judge-model http://host:port/v1#model (any OpenAI-compatible server), or set JURYBOX_JUDGE_MODEL"
)


class JudgeModelError(ValueError):
    """A judge model was asked for but cannot be built (unknown provider, bad spec, no API key)."""


def resolve_judge_model(
    explicit: Any,
    suite_value: str | None = None,
    *,
    concurrency: int | None = None,
    timeout: float | None = None,
    retries: int | None = None,
) -> JudgeModel | None:
    """The JudgeModel the LLM judges of a run use, or None when none is configured.

    One model object is shared per spec in the process (``jurybox.models.shared_model``), so
    every LLM judge shares one client (one connection pool and concurrency limit) instead of
    opening its own.

    Args:
        explicit: A JudgeModel; a model spec (``provider:model``, ``provider:model@BASE_URL``, a
            bare OpenAI-compatible base URL ``http://host:port/v1#model``); or None.
        suite_value: The suite file's ``judge_model:``; then ``$JURYBOX_JUDGE_MODEL``, then a
            default set with ``jurybox.models.set_default_model``.
        concurrency: Cases the run keeps in flight; a model named here gets at least that many
            concurrent calls (and pooled connections), so the judge is never the bottleneck.
        timeout: Seconds per judge-model attempt for a model named here (None: the provider default).
        retries: Retries after a judge-model fault for a model named here (None: the default policy).

    Raises:
        JudgeModelError: a model was named but cannot be built.
    """
    if explicit is not None and not isinstance(explicit, str):
        if not callable(getattr(explicit, "generate", None)):
            raise JudgeModelError(f"judge model {explicit!r} has no generate() method")
        return explicit  # type: ignore[no-any-return]
    spec = (explicit or suite_value or env_model_spec() or "").strip() or None
    try:
        if spec is None:
            # A default set in code with jurybox.models.set_default_model(...), if any.
            try:
                return resolve_model(None)
            except ModelNotConfigured:
                return None
        return shared_model(spec, min_concurrency=concurrency or 0, timeout=timeout, max_retries=retries)
    except (ModelError, ValueError, TypeError) as exc:
        raise JudgeModelError(f"cannot use judge model {spec!r}: {exc}") from exc


def model_label(model: Any) -> str | None:
    """The ``provider:model`` name of a judge model, for reports and the store."""
    if model is None:
        return None
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else type(model).__name__
