"""The judge-model contract: one request in (``GenerateRequest``), one reply out (``ModelResponse``).

A model's one call is ``complete(request)``. ``JudgeModelBase`` gives every model the
keyword spelling of it, ``generate(messages, temperature=..., ...)``, written here once;
``as_judge_model`` lets a model written against the older ``generate``-only contract
take part unchanged.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from jurybox.core import ToolCall

ROLES = ("system", "user", "assistant")


def plain(value: Any) -> Any:
    """Mappings and sequences as dicts and lists, so they serialize the same however they were built."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _read_only(value: Mapping[str, Any]) -> Mapping[str, Any]:
    # A read-only mapping stays the very object it is: a judge's schema, frozen once and shared by
    # all its calls, is then recognised by identity (the OpenAI provider's plain copy of it).
    # A read-only copy otherwise, as jurybox.core freezes its records' mappings.
    return value if type(value) is MappingProxyType else MappingProxyType(dict(value))


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
class ToolSpec:
    """A tool the model may ask to call: its name, what it does, and the JSON schema of its arguments.

    Sent with a request (``GenerateRequest.tools``) in each provider's own tool format; the
    calls the model asks for come back in ``ModelResponse.tool_calls``.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a tool needs a name (a non-empty string), got {self.name!r}")
        if not isinstance(self.description, str):
            raise TypeError(f"tool {self.name!r}: description must be a string, got {type(self.description).__name__}")
        if not isinstance(self.parameters, Mapping):
            raise TypeError(
                f"tool {self.name!r}: parameters must be a JSON schema object, got {type(self.parameters).__name__}"
            )
        object.__setattr__(self, "parameters", _read_only(self.parameters))

    @classmethod
    def coerce(cls, value: ToolSpec | Mapping[str, Any]) -> ToolSpec:
        """A ToolSpec from itself or a mapping with ``name``, ``description`` and ``parameters``."""
        if isinstance(value, ToolSpec):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"a tool is a ToolSpec or a mapping, got {type(value).__name__}")
        unknown = set(value) - {"name", "description", "parameters"}
        if unknown:
            raise ValueError(f"unknown tool field(s) {sorted(unknown)} in {dict(value)!r}")
        return cls(
            name=value.get("name"),  # type: ignore[arg-type]  # checked in __post_init__
            description=value.get("description", ""),
            parameters=value.get("parameters", {"type": "object", "properties": {}}),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": plain(self.parameters)}


@dataclass(frozen=True)
class GenerateRequest:
    """One model call: everything that decides the reply, and so what its cache key is made of.

    Attributes:
        messages: The conversation, oldest first (ChatMessages, or ``{"role", "content"}`` dicts).
        temperature: Sampling temperature (0: the most likely reply; cached by default).
        max_tokens: Most tokens in the reply; None: the provider's default.
        json_schema: Ask for a reply following this JSON schema (structured output).
        seed: Sampling seed, for providers that take one.
        tools: Tools the model may ask to call (ToolSpecs or mappings); none by default.
    """

    messages: tuple[ChatMessage, ...]
    temperature: float = 0.0
    max_tokens: int | None = None
    json_schema: Mapping[str, Any] | None = None
    seed: int | None = None
    tools: tuple[ToolSpec, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(ChatMessage.coerce(m) for m in self.messages))
        if not self.messages:
            raise ValueError("a generate request needs at least one message")
        if self.json_schema is not None and type(self.json_schema) is not MappingProxyType:
            object.__setattr__(self, "json_schema", _read_only(self.json_schema))
        if self.tools:
            tools = tuple(ToolSpec.coerce(tool) for tool in self.tools)
            names = [tool.name for tool in tools]
            if len(set(names)) != len(names):
                raise ValueError(f"a request names a tool twice: {', '.join(names)}")
            object.__setattr__(self, "tools", tools)

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
        tool_calls: The calls of the request's ``tools`` the model asked for, in order (name,
            arguments and the provider's call id); empty when it asked for none.
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
    tool_calls: tuple[ToolCall, ...] = ()


class ModelError(Exception):
    """A judge model could not produce a reply (provider error, timeout, exhausted retries...)."""


@runtime_checkable
class JudgeModel(Protocol):
    """What a model-backed judge needs from a model: a name and ``complete(request)``.

    Implementations: the providers behind ``get_model``, ``FleetModel``, ``FakeModel`` and
    ``MeteredModel``, all ``JudgeModelBase`` subclasses (which adds ``generate``).
    """

    name: str

    async def complete(self, request: GenerateRequest) -> ModelResponse: ...


class JudgeModelBase(ABC):
    """Base of jurybox's models: a subclass writes ``complete(request)`` and gets ``generate``.

    A wrapper (cache, fleet, meter...) hands the request it was given on to the model it
    wraps, unchanged; only ``generate`` spells the request out as keywords, here, once.
    """

    name: str

    @abstractmethod
    async def complete(self, request: GenerateRequest) -> ModelResponse:
        """Ask the model; raises a ``ModelError`` subclass when no reply can be had."""

    async def generate(
        self,
        messages: Iterable[ChatMessage | Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        seed: int | None = None,
        tools: Iterable[ToolSpec | Mapping[str, Any]] = (),
    ) -> ModelResponse:
        """``complete(GenerateRequest(messages, ...))``: the request spelled with keywords (see GenerateRequest)."""
        # GenerateRequest turns the dicts into ChatMessages and ToolSpecs.
        listed: Any = tuple(messages)
        offered: Any = tuple(tools)
        return await self.complete(GenerateRequest(listed, temperature, max_tokens, json_schema, seed, offered))


class _GenerateOnly(JudgeModelBase):
    """A model with only ``generate(messages, **settings)`` (the contract before ``complete``), seen as a JudgeModel."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = str(getattr(model, "name", type(model).__name__))

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        settings: dict[str, Any] = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "json_schema": request.json_schema,
            "seed": request.seed,
        }
        if request.tools:  # only a model that knows tools is asked with them
            settings["tools"] = request.tools
        response: ModelResponse = await self.model.generate(list(request.messages), **settings)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def __repr__(self) -> str:
        return repr(self.model)


def as_judge_model(model: Any) -> JudgeModel:
    """``model`` as a JudgeModel: itself when it has ``complete``; a model with only ``generate`` adapted.

    A plain function ``(prompt: str) -> str`` (sync or async) becomes a ``FunctionModel``.

    Raises:
        TypeError: ``model`` has neither, and is no function.
    """
    if callable(getattr(model, "complete", None)):
        return model  # type: ignore[no-any-return]
    if callable(getattr(model, "generate", None)):
        return _GenerateOnly(model)
    if inspect.isfunction(model) or inspect.ismethod(model):
        # A plain ``(prompt) -> str`` function that calls an LLM.
        from jurybox.models._function import FunctionModel

        return FunctionModel(model)
    raise TypeError(f"expected a JudgeModel (with complete(request) or generate(messages)), got {type(model).__name__}")
