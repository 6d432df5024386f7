"""The model-spec grammar: ``provider:model``, ``provider:model@BASE_URL`` and ``http://host/v1#model``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from jurybox.models._errors import ModelConfigError
from jurybox.models._providers import is_provider, provider_names, unknown_provider

#: The model a bare OpenAI-compatible URL names when it has no ``#model``: a server that
#: serves one model (llama.cpp, a single-model vLLM) answers whatever name is sent.
DEFAULT_URL_MODEL = "default"

_URL = re.compile(r"https?://", re.IGNORECASE)
# Only an @ that starts a URL ends the model name: Vertex-style names hold one
# (``claude-3-5-sonnet@20240620``).
_AT_URL = re.compile(r"@(?=https?://)", re.IGNORECASE)
# A judge fleet lists its endpoints after the @, comma-separated.
_NEXT_URL = re.compile(r",\s*(?=https?://)", re.IGNORECASE)
_FLEET_FIELDS = {"model", "endpoints", "provider"}


@dataclass(frozen=True)
class ModelSpec:
    """Which provider, model and server a model spec names.

    ``ModelSpec.parse`` reads three forms:

    * ``provider:model``: ``openai:gpt-4o-mini``, ``ollama:llama3.1:8b`` (the model may hold colons).
    * ``provider:model@BASE_URL``: the same model at another server. BASE_URL starts with
      ``http://`` or ``https://``; an ``@`` followed by anything else is part of the model name.
    * ``http(s)://host:port/v1#model``: an OpenAI-compatible server at that base URL; without
      ``#model`` the model is ``default``.
    * ``openai:model@URL1,URL2,...``: a judge fleet, one model served by several OpenAI-compatible
      endpoints (``FleetModel``); ``ModelSpec.fleet`` and ``ModelSpec.from_mapping`` build one.

    ``str(spec)`` is the canonical form, ``provider:model`` or ``provider:model@BASE_URL``, and
    parses back to an equal spec; two spellings of one model are one spec (and one cached model).

    Attributes:
        provider: ``openai``, ``anthropic``, ``ollama``, or one an installed plug-in registers.
        model: The provider's model name.
        base_url: The server's base URL without a trailing slash; None for the provider's default
            (its environment variable or public endpoint).
        endpoints: A fleet's base URLs (two or more; one is kept as ``base_url``), else empty.

    Raises:
        ModelConfigError: an unknown provider, an empty model name or a base URL that is not
            ``http(s)://host...``.
    """

    provider: str
    model: str
    base_url: str | None = None
    endpoints: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.model:
            raise _shape_error(str(self))
        if not is_provider(self.provider):
            # "unknown model provider 'opnai' (did you mean 'openai'?) in 'opnai:m'; valid providers: openai:, ..."
            unknown = unknown_provider(self.provider)
            raise ModelConfigError(f"{unknown} in {str(self)!r}; valid providers: {_valid_providers()}")
        if self.endpoints:
            if self.base_url is not None:
                raise ModelConfigError(f"model spec {str(self)!r} names both a base URL and fleet endpoints")
            if self.provider != "openai":
                raise ModelConfigError(
                    f"a judge fleet's endpoints are OpenAI-compatible servers: provider openai, not {self.provider!r}"
                )
            urls = tuple(self._checked_url(url) for url in self.endpoints)
            if len(set(urls)) != len(urls):
                raise ModelConfigError(f"judge fleet {str(self)!r} lists an endpoint twice")
            # A fleet of one is that one server: one spelling, one cache entry, one model.
            object.__setattr__(self, "endpoints", urls if len(urls) > 1 else ())
            object.__setattr__(self, "base_url", urls[0] if len(urls) == 1 else None)
        elif self.base_url is not None:
            object.__setattr__(self, "base_url", self._checked_url(self.base_url))

    def _checked_url(self, url: str) -> str:
        if not isinstance(url, str) or not _URL.match(url) or not urlsplit(url).netloc:
            raise ModelConfigError(f"base URL {url!r} in model spec {str(self)!r} must look like http://host:port/path")
        # One server, one spelling: 'http://h/v1/' and 'http://h/v1' share a cache entry.
        return url.rstrip("/")

    @classmethod
    def fleet(cls, model: str, endpoints: Sequence[str]) -> ModelSpec:
        """A judge fleet: ``model`` (``my-judge`` or ``openai:my-judge``) served at each of ``endpoints``.

        Raises:
            ModelConfigError: no endpoint, a malformed URL, or a model that names a server or
                another provider.
        """
        if not endpoints:
            raise ModelConfigError(f"judge fleet {model!r} needs at least one endpoint URL")
        name = model.strip()
        if _URL.match(name) or _AT_URL.search(name):
            raise ModelConfigError(f"judge fleet model {model!r} must be a model name; its servers are the endpoints")
        provider, sep, rest = name.partition(":")
        if sep and is_provider(provider):
            return cls(provider, rest, endpoints=tuple(endpoints))
        return cls("openai", name, endpoints=tuple(endpoints))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ModelSpec:
        """A judge fleet from a suite's ``judge_model: {model: my-judge, endpoints: [URL, ...]}``.

        ``provider`` is optional and must be ``openai`` (every endpoint speaks the OpenAI API).

        Raises:
            ModelConfigError: an unknown field, a missing model or endpoint list, a bad URL.
        """
        unknown = sorted(set(map(str, data)) - _FLEET_FIELDS)
        if unknown:
            raise ModelConfigError(f"unknown field {unknown[0]!r} in judge_model (fields: model, endpoints, provider)")
        model, endpoints, provider = data.get("model"), data.get("endpoints"), data.get("provider", "openai")
        if not isinstance(model, str) or not model.strip():
            raise ModelConfigError("judge_model needs 'model': the model name every endpoint serves")
        if not isinstance(endpoints, list) or not all(isinstance(url, str) for url in endpoints):
            raise ModelConfigError("judge_model 'endpoints' must be a list of base URLs (http://host:port/v1)")
        if not isinstance(provider, str):
            raise ModelConfigError("judge_model 'provider' must be a string")
        return cls.fleet(f"{provider}:{model.strip()}", endpoints)

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        """Read a spec in any of the three forms (surrounding whitespace is ignored).

        Raises:
            ModelConfigError: the text is none of the forms, or names an unknown provider.
        """
        spec = text.strip()
        if _URL.match(spec):
            parts = urlsplit(spec)
            if not parts.netloc:
                raise ModelConfigError(
                    f"model spec {text!r} is a URL without a host; expected http://host:port/v1#model"
                )
            base_url = urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
            return cls("openai", parts.fragment or DEFAULT_URL_MODEL, base_url)
        provider, sep, rest = spec.partition(":")
        if not sep or not rest:
            raise _shape_error(text)
        model, *url = _AT_URL.split(rest, maxsplit=1)
        urls = _NEXT_URL.split(url[0]) if url else []
        if len(urls) > 1:
            return cls(provider, model, endpoints=tuple(urls))
        return cls(provider, model, urls[0] if urls else None)

    @property
    def name(self) -> str:
        """``provider:model``, the name the built model reports (``ProviderModel.name``)."""
        return f"{self.provider}:{self.model}"

    def __str__(self) -> str:
        if self.endpoints:
            return f"{self.name}@{','.join(self.endpoints)}"
        return f"{self.name}@{self.base_url}" if self.base_url else self.name


def _valid_providers() -> str:
    return ", ".join(f"{name}:" for name in provider_names())


def _shape_error(text: str) -> ModelConfigError:
    return ModelConfigError(
        f"model spec {text!r} must look like 'provider:model' with provider one of {_valid_providers()}, "
        "or be an OpenAI-compatible server's URL 'http://host:port/v1#model'"
    )
