"""``get_model("provider:model")`` and ``resolve_model``: from a spec string to a JudgeModel."""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from jurybox.models._base import ProviderModel
from jurybox.models._errors import ModelConfigError, ModelNotConfigured
from jurybox.models._types import JudgeModel

# Imported on first use: the provider SDKs take seconds to import and most runs use one of them.
PROVIDER_CLASSES: dict[str, str] = {
    "openai": "jurybox.models._openai:OpenAIModel",
    "anthropic": "jurybox.models._anthropic:AnthropicModel",
    "ollama": "jurybox.models._ollama:OllamaModel",
}


def provider_class(provider: str) -> type[ProviderModel]:
    """The ProviderModel subclass for ``provider`` (imports its SDK)."""
    module_name, _, attribute = PROVIDER_CLASSES[provider].partition(":")
    cls: type[ProviderModel] = getattr(importlib.import_module(module_name), attribute)
    return cls


JUDGE_MODEL_ENV = "JURYBOX_JUDGE_MODEL"

_default: JudgeModel | str | None = None
_resolved: dict[str, JudgeModel] = {}
_lock = threading.Lock()


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model`` (the model part may contain colons: ``ollama:llama3.1:8b``)."""
    provider, sep, model = spec.strip().partition(":")
    valid = ", ".join(f"{name}:" for name in PROVIDER_CLASSES)
    if not sep or not model:
        raise ModelConfigError(f"model spec {spec!r} must look like 'provider:model' with provider one of {valid}")
    if provider not in PROVIDER_CLASSES:
        raise ModelConfigError(f"unknown model provider {provider!r} in {spec!r}; valid providers: {valid}")
    return provider, model


def get_model(spec: str, **options: Any) -> ProviderModel:
    """Build a model from ``provider:model``.

    Examples: ``get_model("openai:gpt-4o-mini")``, ``get_model("anthropic:claude-haiku-4-5")``,
    ``get_model("ollama:llama3.1")``, ``get_model("openai:qwen2.5", base_url="http://localhost:8000/v1")``.

    Args:
        spec: ``openai:<model>``, ``anthropic:<model>`` or ``ollama:<model>``.
        **options: Provider options (``api_key``, ``base_url``/``host``) and the common ones
            (``concurrency``, ``timeout``, ``max_retries``/``retry``, ``cache``, ``cache_path``,
            ``stream``, ``structured_output``, ``params``); see ``ProviderModel``.

    Raises:
        ModelConfigError: unknown provider, malformed spec, missing API key or a bad option.
    """
    provider, model = parse_spec(spec)
    try:
        return provider_class(provider)(model, **options)
    except TypeError as error:  # an unknown keyword: say which model it was for
        raise ModelConfigError(f"get_model({spec!r}): {error}") from error


def set_default_model(model: JudgeModel | str | None) -> None:
    """Set the judge model used when none is given (None clears it; the env variable then applies)."""
    global _default  # noqa: PLW0603 - one process-wide default, like logging's root level
    with _lock:
        _default = model


def resolve_model(model: JudgeModel | str | None) -> JudgeModel:
    """A JudgeModel from a model, a spec string, or None (the configured default).

    None resolves to ``set_default_model(...)``'s model, else ``$JURYBOX_JUDGE_MODEL``.
    Spec strings are built once per process and reused, so every judge naming the same
    spec shares one connection pool, concurrency limit and cache.

    Raises:
        ModelNotConfigured: None was given and no judge model is configured.
        ModelConfigError: the spec is malformed or its provider cannot be built.
    """
    if model is None:
        with _lock:
            model = _default
        if model is None:
            model = os.environ.get(JUDGE_MODEL_ENV, "").strip() or None
        if model is None:
            raise ModelNotConfigured(
                "no judge model configured: pass model='openai:gpt-4o-mini' (or another 'provider:model'), "
                f"set the {JUDGE_MODEL_ENV} environment variable, or call jurybox.models.set_default_model(...)"
            )
    if isinstance(model, str):
        with _lock:
            cached = _resolved.get(model)
        if cached is not None:
            return cached
        built = get_model(model)
        with _lock:
            return _resolved.setdefault(model, built)
    if not isinstance(model, JudgeModel):
        raise TypeError(f"expected a JudgeModel, a 'provider:model' string or None, got {type(model).__name__}")
    return model


def resolved_models() -> list[JudgeModel]:
    """The models ``resolve_model`` built from names and keeps for this process (and the default model)."""
    with _lock:
        models = list(_resolved.values())
        default = _default
    if default is not None and not isinstance(default, str):
        models.append(default)
    return models
