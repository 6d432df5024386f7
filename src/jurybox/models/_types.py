"""The judge-model contract: one async ``generate`` call, and what it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class ChatMessage:
    """One message sent to a judge model."""

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"message role must be one of {', '.join(ROLES)}; got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be a string, got {type(self.content).__name__}")

    @classmethod
    def coerce(cls, value: ChatMessage | Mapping[str, Any]) -> ChatMessage:
        if isinstance(value, ChatMessage):
            return value
        return cls(role=str(value["role"]), content=value["content"])

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class GenerateRequest:
    """Everything that decides a model's reply; also what the cache key is made of."""

    messages: tuple[ChatMessage, ...]
    temperature: float = 0.0
    max_tokens: int | None = None
    json_schema: Mapping[str, Any] | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(ChatMessage.coerce(m) for m in self.messages))
        if not self.messages:
            raise ValueError("a generate request needs at least one message")
        # A read-only mapping stays the very object it is: a judge's schema, frozen once and shared
        # by all its calls, is then recognised by identity (the OpenAI provider's plain copy of it).
        # A read-only copy otherwise, as jurybox.core freezes its records' mappings.
        if self.json_schema is not None and type(self.json_schema) is not MappingProxyType:
            object.__setattr__(self, "json_schema", MappingProxyType(dict(self.json_schema)))

    @property
    def prompt(self) -> str:
        """All message contents joined, handy in tests that read the rendered prompt."""
        return "\n\n".join(m.content for m in self.messages)


@dataclass(frozen=True)
class Usage:
    """Token counts for one call; None where the provider did not say."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True)
class ModelResponse:
    """A model's reply.

    Attributes:
        text: The reply text (for structured output, the JSON text).
        model: The ``provider:model`` spec that answered.
        usage: Token counts.
        latency: Seconds from request to full reply (0 for a cache hit).
        finish_reason: ``stop``, ``length``, ``tool_use``... as the provider said.
        cost: USD for this call, or None when the price is unknown.
        cached: True when the reply came from the response cache.
        raw: The provider's response body, parsed, for debugging.
        cache_key: The response cache key the reply is stored under (served from or just
            written to), or None when the cache was not used; ``forget`` takes it out again.
        attempts: HTTP requests this reply took, the retries after faults included (a cache
            hit made none, and says so with ``cached``).
    """

    text: str
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    finish_reason: str | None = None
    cost: float | None = None
    cached: bool = False
    raw: Any = None
    cache_key: str | None = None
    attempts: int = 1


class ModelError(Exception):
    """A judge model could not produce a reply (provider error, timeout, exhausted retries...)."""


@runtime_checkable
class JudgeModel(Protocol):
    """What a model-backed judge needs from a model: a name and ``generate``.

    Implementations: the providers behind ``get_model`` and ``FakeModel``.
    """

    name: str

    async def generate(
        self,
        messages: Sequence[ChatMessage | Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> ModelResponse: ...
