"""The model-spec grammar: ``provider:model``, ``provider:model@BASE_URL`` and ``http://host/v1#model``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from jurybox.models._errors import ModelConfigError
from jurybox.models._providers import PROVIDER_CLASSES

#: The model a bare OpenAI-compatible URL names when it has no ``#model``: a server that
#: serves one model (llama.cpp, a single-model vLLM) answers whatever name is sent.
DEFAULT_URL_MODEL = "default"

_URL = re.compile(r"https?://", re.IGNORECASE)
# Only an @ that starts a URL ends the model name: Vertex-style names hold one
# (``claude-3-5-sonnet@20240620``).
_AT_URL = re.compile(r"@(?=https?://)", re.IGNORECASE)


@dataclass(frozen=True)
class ModelSpec:
    """Which provider, model and server a model spec names.

    ``ModelSpec.parse`` reads three forms:

    * ``provider:model``: ``openai:gpt-4o-mini``, ``ollama:llama3.1:8b`` (the model may hold colons).
    * ``provider:model@BASE_URL``: the same model at another server. BASE_URL starts with
      ``http://`` or ``https://``; an ``@`` followed by anything else is part of the model name.
    * ``http(s)://host:port/v1#model``: an OpenAI-compatible server at that base URL; without
      ``#model`` the model is ``default``.

    ``str(spec)`` is the canonical form, ``provider:model`` or ``provider:model@BASE_URL``, and
    parses back to an equal spec; two spellings of one model are one spec (and one cached model).

    Attributes:
        provider: ``openai``, ``anthropic`` or ``ollama``.
        model: The provider's model name.
        base_url: The server's base URL without a trailing slash; None for the provider's default
            (its environment variable or public endpoint).

    Raises:
        ModelConfigError: an unknown provider, an empty model name or a base URL that is not
            ``http(s)://host...``.
    """

    provider: str
    model: str
    base_url: str | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise _shape_error(str(self))
        if self.provider not in PROVIDER_CLASSES:
            raise ModelConfigError(
                f"unknown model provider {self.provider!r} in {str(self)!r}; valid providers: {_valid_providers()}"
            )
        if self.base_url is not None:
            if not _URL.match(self.base_url) or not urlsplit(self.base_url).netloc:
                raise ModelConfigError(
                    f"base URL {self.base_url!r} in model spec {str(self)!r} must look like http://host:port/path"
                )
            # One server, one spelling: 'http://h/v1/' and 'http://h/v1' share a cache entry.
            object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

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
        return cls(provider, model, url[0] if url else None)

    @property
    def name(self) -> str:
        """``provider:model``, the name the built model reports (``ProviderModel.name``)."""
        return f"{self.provider}:{self.model}"

    def __str__(self) -> str:
        return f"{self.name}@{self.base_url}" if self.base_url else self.name


def _valid_providers() -> str:
    return ", ".join(f"{name}:" for name in PROVIDER_CLASSES)


def _shape_error(text: str) -> ModelConfigError:
    return ModelConfigError(
        f"model spec {text!r} must look like 'provider:model' with provider one of {_valid_providers()}, "
        "or be an OpenAI-compatible server's URL 'http://host:port/v1#model'"
    )
