"""Which judge model a run uses: ``--judge-model``, then the suite's ``judge_model:``, then the environment.

The spec grammar and the one shared model per spec live in ``jurybox.models``
(``ModelSpec``, ``shared_model``); this module only decides which spec a run uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.models import (
    JudgeModel,
    ModelConfigError,
    ModelError,
    ModelNotConfigured,
    ModelSpec,
    as_judge_model,
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


def judge_model_text(value: Any) -> Any:
    """A suite's ``judge_model:`` as a spec string: a fleet mapping becomes ``openai:M@URL1,URL2``.

    ``{model: my-judge, endpoints: [http://a:8000/v1, http://b:8000/v1]}`` (optional ``provider:
    openai``) names one model served by several endpoints; any other value is returned as is.

    Raises:
        ValueError: a mapping that is not a valid fleet (the message names the field).
    """
    if not isinstance(value, Mapping):
        return value
    try:
        return str(ModelSpec.from_mapping(value))
    except ModelConfigError as error:
        raise ValueError(str(error)) from error


def judge_model_with_endpoints(model: str | None, endpoints: Sequence[str] | None) -> str | None:
    """``--judge-model NAME`` plus repeated ``--judge-endpoint URL``: the fleet's spec string.

    Without endpoints the model is returned unchanged.

    Raises:
        JudgeModelError: endpoints without a model name, or a model that names its own server.
    """
    if not endpoints:
        return model
    if model is None or not model.strip():
        raise JudgeModelError("--judge-endpoint needs --judge-model NAME: the model every endpoint serves")
    try:
        return str(ModelSpec.fleet(model, endpoints))
    except ModelConfigError as error:
        raise JudgeModelError(str(error)) from error


def resolve_judge_model(
    explicit: Any,
    suite_value: str | Mapping[str, Any] | None = None,
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
        suite_value: The suite file's ``judge_model:`` (a spec, or a fleet mapping: see
            ``judge_model_text``); then ``$JURYBOX_JUDGE_MODEL``, then a default set with
            ``jurybox.models.set_default_model``.
        concurrency: Cases the run keeps in flight; a model named here gets at least that many
            concurrent calls (and pooled connections), so the judge is never the bottleneck.
        timeout: Seconds per judge-model attempt for a model named here (None: the provider default).
        retries: Retries after a judge-model fault for a model named here (None: the default policy).

    Raises:
        JudgeModelError: a model was named but cannot be built.
    """
    if explicit is not None and not isinstance(explicit, str):
        try:
            return as_judge_model(explicit)
        except TypeError:
            raise JudgeModelError(f"judge model {explicit!r} has no complete() or generate() method") from None
    try:
        suite_spec = judge_model_text(suite_value)
    except ValueError as exc:
        raise JudgeModelError(f"cannot use judge model {suite_value!r}: {exc}") from exc
    spec = (explicit or suite_spec or env_model_spec() or "").strip() or None
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
