"""The provider classes a model spec names, imported on first use."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jurybox.models._base import ProviderModel

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
