"""Turning a judge's ``model=`` argument into a JudgeModel, at call time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jurybox.models import JudgeModel, as_judge_model, resolve_model

#: What a judge factory's ``model=`` accepts: a model, a ``provider:model`` spec, a plain
#: ``(prompt) -> str`` function that calls an LLM, or None for the configured judge model.
ModelRef = JudgeModel | str | Callable[[str], Any] | None


def resolve(model: ModelRef) -> JudgeModel:
    """The JudgeModel for ``model``; specs and None go through ``jurybox.models.resolve_model``.

    Resolution happens when the judge is called, not when it is built, so a
    suite can be loaded (and its judges listed) on a machine with no model.

    Raises:
        ModelNotConfigured: None was given and no judge model is configured
            (the message says how to configure one).
        ModelConfigError: the spec is malformed or its provider cannot be built.
        TypeError: ``model`` is not a model, a spec or None.
    """
    if model is None or isinstance(model, str):
        return resolve_model(model)
    # Duck-typed on purpose: an isinstance check against the runtime Protocol costs more than the
    # rest of a cached judged call.
    if callable(getattr(model, "complete", None)):
        return model  # type: ignore[return-value]  # a JudgeModel, checked by its duck type
    try:
        return as_judge_model(model)
    except TypeError:
        raise TypeError(
            f"model must be a JudgeModel, a 'provider:model' string, a (prompt) -> str function or None, "
            f"got {type(model).__name__}"
        ) from None
