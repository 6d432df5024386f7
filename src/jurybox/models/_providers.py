"""Model providers by name: the ``provider`` plug-ins a model spec (``provider:model``) names.

A provider is one registration, here for jurybox's own and wherever an outside
package defines one (``register_provider``, found through the ``jurybox`` entry
points): its name, the class that builds its models (by import path, so its SDK
is imported only when a spec names it) and what the rest of jurybox needs to know
before that import, in a ``ProviderInfo``: the environment variable of its key
(named when a key is refused), the one that moves its server, its public server,
and the other variables it reads (a change of any of them builds a new shared model).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurybox.core import KIND_PROVIDER, PluginError, PluginRegistry

if TYPE_CHECKING:
    from jurybox.models._base import ProviderModel

BUILT_IN = ("openai", "anthropic", "ollama")
"""jurybox's own providers, in the order messages list them (an installed package's come after)."""

#: Read by every provider when a spec leaves them out (certificates, the response cache).
COMMON_ENVIRONMENT = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "JURYBOX_CACHE", "JURYBOX_CACHE_URL", "JURYBOX_CACHE_DIR",
)  # fmt: skip


@dataclass(frozen=True)
class ProviderInfo:
    """What jurybox knows about a provider without importing it.

    Attributes:
        key_variable: The environment variable its API key comes from (None: it takes no key).
        base_url_variable: The environment variable that points it at another server.
        default_base_url: Its server when neither the spec nor that variable names one.
        environment: Other environment variables its models read.
        openai_compatible: It speaks the OpenAI Chat Completions API (a judge fleet's endpoints may be it).
    """

    key_variable: str | None = None
    base_url_variable: str | None = None
    default_base_url: str | None = None
    environment: tuple[str, ...] = ()
    openai_compatible: bool = False

    @property
    def variables(self) -> tuple[str, ...]:
        """Every environment variable its models read."""
        named = (self.key_variable, self.base_url_variable, *self.environment)
        return tuple(name for name in named if name)


def register_provider(
    name: str,
    target: Callable[..., ProviderModel] | str,
    *,
    key_variable: str | None = None,
    base_url_variable: str | None = None,
    default_base_url: str | None = None,
    environment: tuple[str, ...] = (),
    openai_compatible: bool = False,
    summary: str = "",
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    registry: PluginRegistry | None = None,
) -> None:
    """Register a model provider, so ``name:some-model`` builds its models.

    Args:
        name: The spec's prefix (``myprov`` in ``myprov:some-model``).
        target: Its model class, a ``ProviderModel`` subclass (``OpenAIModel`` for a server that
            speaks the OpenAI API), called as ``cls(model, **options)``; or ``"package.module:Class"``
            to import only when a spec names it (an SDK that is slow to import, or an optional dependency).
        key_variable: The environment variable of its API key (named when a key is refused).
        base_url_variable: The environment variable that points it at another server.
        default_base_url: Its server when none is named.
        environment: Other environment variables its models read.
        openai_compatible: It speaks the OpenAI Chat Completions API.
        summary: One line for ``jurybox plugins`` (default: the target's docstring).
        extra: The extra that installs its dependency, for the install hint.
        requires: The import names of that dependency.
        aliases: Other prefixes it answers to.
        registry: Where to register it (default: the process-wide registry).

    Example:
        >>> register_provider("myprov", "my_package.models:MyModel", key_variable="MYPROV_API_KEY")
    """
    info = ProviderInfo(key_variable, base_url_variable, default_base_url, tuple(environment), openai_compatible)
    (registry or PluginRegistry.default()).register(
        KIND_PROVIDER,
        name,
        target,
        aliases=aliases,
        summary=summary,
        extra=extra,
        requires=requires,
        details=info,
    )


def is_provider(name: str) -> bool:
    """True when ``name`` is a registered provider (the installed plug-ins are read on a miss)."""
    registry = PluginRegistry.default()
    if registry.get(KIND_PROVIDER, name) is not None:
        return True
    if registry.discovered:
        return False
    registry.discover()
    return registry.get(KIND_PROVIDER, name) is not None


def provider_info(name: str) -> ProviderInfo:
    """What is known about provider ``name`` without importing it (an empty ``ProviderInfo`` if unknown)."""
    plugin = PluginRegistry.default().get(KIND_PROVIDER, name)
    details = plugin.details if plugin is not None else None
    return details if isinstance(details, ProviderInfo) else ProviderInfo()


def provider_names() -> list[str]:
    """Every provider: jurybox's own in their usual order, then the installed plug-ins' by name."""
    names = PluginRegistry.default().names(KIND_PROVIDER)
    return [name for name in BUILT_IN if name in names] + [name for name in names if name not in BUILT_IN]


def unknown_provider(name: str) -> str:
    """``unknown model provider 'opnai' (did you mean 'openai'?)`` without the list of valid ones."""
    names = provider_names()
    close = difflib.get_close_matches(name, names, n=1)
    return f"unknown model provider {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def provider_class(provider: str) -> Callable[..., ProviderModel]:
    """The class (or factory) that builds ``provider``'s models; imports its SDK on first use.

    Raises:
        ModelConfigError: an unknown provider, or one whose module cannot be imported here
            (the message names what to install).
    """
    try:
        cls: Callable[..., ProviderModel] = PluginRegistry.default().load(KIND_PROVIDER, provider)
    except PluginError as error:
        from jurybox.models._errors import ModelConfigError  # the errors module names key variables from here

        raise ModelConfigError(str(error)) from None
    return cls


_environment: tuple[int, tuple[str, ...]] = (-1, ())
_environment_lock = threading.Lock()


def provider_environment() -> tuple[str, ...]:
    """Every environment variable a registered provider reads (kept until a provider is registered)."""
    global _environment  # noqa: PLW0603 - one cache of what the registry holds, rebuilt when it changes
    registry = PluginRegistry.default()
    generation, names = _environment
    if generation == registry.generation:
        return names
    with _environment_lock:
        generation = registry.generation
        found: dict[str, None] = {}
        for plugin in registry.plugins(KIND_PROVIDER, discover=False):
            if isinstance(plugin.details, ProviderInfo):
                found.update(dict.fromkeys(plugin.details.variables))
        found.update(dict.fromkeys(COMMON_ENVIRONMENT))
        _environment = (generation, tuple(found))
        return _environment[1]


def key_variable(provider: str) -> str | None:
    """The environment variable ``provider``'s key comes from, for "check X" hints (None: unknown or keyless)."""
    return provider_info(provider).key_variable


# jurybox's own providers: imported on first use, as the SDKs take seconds to import and a run uses one.
register_provider(
    "openai",
    "jurybox.models._openai:OpenAIModel",
    key_variable="OPENAI_API_KEY",
    base_url_variable="OPENAI_BASE_URL",
    default_base_url="https://api.openai.com/v1",
    openai_compatible=True,
    summary="OpenAI Chat Completions, and any OpenAI-compatible server (vLLM, llama.cpp, LiteLLM...)",
    # Its default (direct) path posts with aiohttp, in the base install; the SDK is the "openai" extra.
)
register_provider(
    "anthropic",
    "jurybox.models._anthropic:AnthropicModel",
    key_variable="ANTHROPIC_API_KEY",
    base_url_variable="ANTHROPIC_BASE_URL",
    default_base_url="https://api.anthropic.com",
    summary="Anthropic Messages API",
    extra="anthropic",
    requires=("anthropic", "httpx2"),
)
register_provider(
    "ollama",
    "jurybox.models._ollama:OllamaModel",
    base_url_variable="OLLAMA_HOST",
    default_base_url="http://127.0.0.1:11434",
    summary="Ollama's native chat API (/api/chat), no key",
)
