"""Model errors: configuration problems and provider failures, with what a user needs to act on them."""

from __future__ import annotations

from http import HTTPStatus

from jurybox.core import network_hint
from jurybox.models._providers import key_variable
from jurybox.models._types import ModelError

_PROVIDER_WORDS = 160  # most characters of the provider's own message a one-line reason quotes


class ModelConfigError(ModelError, ValueError):
    """A model cannot be built: unknown provider, malformed spec, missing API key, bad option."""


class ModelNotConfigured(ModelConfigError):  # noqa: N818 - the name INTERFACES.md fixes
    """No judge model was given and none is configured."""


class ProviderError(ModelError):
    """A provider call failed (after any retries).

    Attributes:
        provider: ``openai``, ``anthropic`` or ``ollama``.
        status: The HTTP status, or None for timeouts and connection errors.
        provider_message: The provider's own error message (from its error body), if any.
        code: The provider's error code or type (e.g. ``insufficient_quota``, ``rate_limit_error``).
        attempts: How many attempts were made before giving up.
        retryable: Whether this kind of failure is worth retrying.
        retry_after: Seconds the provider asked us to wait (Retry-After), if it said.
        url: The server's base URL, printable (no user:password, no query), once known.
    """

    default_retryable = False
    names_code = False  # the provider's code says more than the status only for a few failures

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        provider_message: str | None = None,
        code: str | None = None,
        attempts: int = 1,
        retryable: bool | None = None,
        retry_after: float | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.provider = provider
        self.status = status
        self.provider_message = provider_message
        self.code = code
        self.attempts = attempts
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after

    def __str__(self) -> str:
        text = super().__str__()
        details = [
            f"status {self.status}" if self.status is not None else None,
            f"code {self.code}" if self.code else None,
            f"asked to retry after {self.retry_after:g} s" if self.retry_after is not None else None,
            f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}",
        ]
        detail = ", ".join(d for d in details if d)
        message = f": {self.provider_message}" if self.provider_message and self.provider_message not in text else ""
        return f"{self.provider}: {text}{message} ({detail})"

    def one_line(self) -> str:
        """The failure as a report shows it: "HTTP 429 rate limited at URL after 3 retries".

        Never quotes the provider's message for a refused key (it may echo part of the key).
        """
        if self.status is None:
            what = super().__str__()
        else:
            what = f"HTTP {self.status} {_status_words(self.status)}"
            if self.names_code and self.code and self.code not in what:
                what += f" ({self.code})"
            said = (self.provider_message or "").strip()
            if said and self.status not in (401, 403):
                said = " ".join(said.split())
                what += f": {said[:_PROVIDER_WORDS]}{'…' if len(said) > _PROVIDER_WORDS else ''}"
        if self.url and self.url not in what:
            what += f" at {self.url}"
        retries = self.attempts - 1
        if retries > 0:
            what += f" after {retries} retr{'y' if retries == 1 else 'ies'}"
        hint = self.hint()
        return f"{what}: {hint}" if hint else what

    def hint(self) -> str | None:
        """What to check, when the failure says it."""
        if self.status in (401, 403):
            variable = key_variable(self.provider)  # the provider's registration names it
            return f"check {variable}" if variable else "check the API key"
        if self.status == 404:
            return "check the model name and the base URL"
        if self.status is None:
            return network_hint(super().__str__()).removeprefix(": ") or None
        return None


def _status_words(status: int) -> str:
    if status == 429:
        return "rate limited"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"


class RateLimitError(ProviderError):
    """HTTP 429: too many requests (retried, honouring Retry-After)."""

    default_retryable = True


class QuotaExceededError(ProviderError):
    """The account is out of quota or credit (e.g. OpenAI ``insufficient_quota``); never retried."""

    names_code = True


class ServerError(ProviderError):
    """HTTP 5xx or 408 from the provider (retried)."""

    default_retryable = True


class ModelTimeoutError(ProviderError):
    """The provider did not answer within the timeout (retried)."""

    default_retryable = True


class ModelConnectionError(ProviderError):
    """The connection failed or was dropped (retried)."""

    default_retryable = True


class EmptyResponseError(ProviderError):
    """HTTP 200 with an empty body: a proxy or server that dropped the reply (retried, like a 5xx)."""

    default_retryable = True


class RequestRejectedError(ProviderError):
    """HTTP 4xx other than 408/429: a bad request, key, model name or permission; never retried."""
