"""Model errors: configuration problems and provider failures, with what a user needs to act on them."""

from __future__ import annotations

from jurybox.models._types import ModelError


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
    """

    default_retryable = False

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
    ) -> None:
        super().__init__(message)
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


class RateLimitError(ProviderError):
    """HTTP 429: too many requests (retried, honouring Retry-After)."""

    default_retryable = True


class QuotaExceededError(ProviderError):
    """The account is out of quota or credit (e.g. OpenAI ``insufficient_quota``); never retried."""


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
