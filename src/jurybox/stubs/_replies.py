"""What a stub server answers: replies, recorded requests and injected faults."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Provider = Literal["openai", "anthropic", "ollama"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "ollama")


@dataclass(frozen=True)
class StubToolCall:
    """A tool call the stub model makes (OpenAI ``tool_calls``, Anthropic ``tool_use``, Ollama ``tool_calls``)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class StubReply:
    """A full stub reply: text and/or tool calls, with optional finish reason and token counts.

    Token counts left as None are estimated from the request and reply (4 characters a token).
    """

    text: str = ""
    tool_calls: tuple[StubToolCall, ...] = ()
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


ReplyValue = str | StubReply
ReplyFunction = Callable[[dict[str, Any]], ReplyValue]
ReplySource = ReplyValue | Sequence[ReplyValue] | ReplyFunction


@dataclass(frozen=True)
class StubRequest:
    """One request the stub received, for assertions."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes
    received: float = field(default_factory=time.monotonic)
    """When it arrived (``time.monotonic`` of the stub's process), for tests of pacing."""

    @property
    def json(self) -> Any:
        """The parsed JSON body (None when the body was not JSON)."""
        return self.body


@dataclass(frozen=True)
class Fault:
    """A failure served instead of a reply.

    Attributes:
        kind: ``status`` (an HTTP error), ``drop`` (close the socket without a reply),
            ``drop_mid_body`` (send headers and part of the body, then close) or ``slow``
            (reply after ``delay`` seconds).
        status: HTTP status for ``status`` faults.
        body: Response body (a mapping is sent as JSON); None -> the provider's own error shape.
        headers: Extra response headers.
        retry_after: Value of the Retry-After header (seconds or an HTTP-date), if any.
        delay: Seconds to wait for ``slow`` faults.
    """

    kind: Literal["status", "drop", "drop_mid_body", "slow"]
    status: int = 500
    body: Mapping[str, Any] | str | bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_after: float | str | None = None
    delay: float = 0.0


def coerce_reply(value: Any) -> StubReply:
    """Turn a reply value (a string or StubReply) into a StubReply, or fail naming the type."""
    if isinstance(value, StubReply):
        return value
    if isinstance(value, str):
        return StubReply(text=value)
    raise TypeError(f"a stub reply must be a str or StubReply, got {type(value).__name__}")


def estimate_tokens(value: Any) -> int:
    """A rough token count (4 characters a token, at least 1) so usage fields are never empty."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4)
