"""A small OpenAI-compatible chat client for agents: one completion, tool calls included.

Used by the ``openai`` target (the endpoint is the agent) and the ``mcp``
target (the model picks the MCP server's tools). It wraps the official
``openai`` SDK and turns its failures into AgentError / AgentTimeout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.agents._errors import AgentError, AgentTimeout, TargetConfigError

_SETTINGS_KEYS = frozenset(
    {"model", "base_url", "api_key_env", "temperature", "max_tokens", "timeout", "headers", "extra_body", "max_retries"}
)


@dataclass(frozen=True)
class ChatSettings:
    """How to reach an OpenAI-compatible chat endpoint."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 120.0
    max_retries: int = 2
    headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def api_key(self) -> str:
        """The API key from the environment; local servers without auth get a placeholder."""
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.base_url is not None:
            # Self-hosted OpenAI-compatible servers (vLLM, Ollama, llama.cpp) ignore the key.
            return "unused"
        raise AgentError(
            f"no API key: set {self.api_key_env} (or 'api_key_env' to the variable that holds it), "
            "or give a 'base_url' for a server that needs none"
        )


def chat_settings(options: Mapping[str, Any], *, field_prefix: str, extra_keys: Sequence[str] = ()) -> ChatSettings:
    """Validate a chat endpoint mapping; errors name ``field_prefix.<key>``."""
    unknown = sorted(str(k) for k in options if k not in _SETTINGS_KEYS and k not in extra_keys)
    if unknown:
        valid = ", ".join(sorted(_SETTINGS_KEYS | set(extra_keys)))
        raise TargetConfigError(f"{field_prefix}: unknown key(s) {', '.join(unknown)}; valid: {valid}")
    model = options.get("model")
    if not isinstance(model, str) or not model:
        raise TargetConfigError(f"{field_prefix}.model: required, the model name the endpoint serves (got {model!r})")
    base_url = options.get("base_url")
    if base_url is not None and (not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))):
        raise TargetConfigError(f"{field_prefix}.base_url: expected an http(s) URL, got {base_url!r}")
    key_env = options.get("api_key_env", "OPENAI_API_KEY")
    if not isinstance(key_env, str) or not key_env:
        raise TargetConfigError(f"{field_prefix}.api_key_env: expected an environment variable name, got {key_env!r}")
    temperature = _number(options, "temperature", field_prefix, minimum=0.0)
    timeout = _number(options, "timeout", field_prefix, minimum=0.001)
    max_tokens = options.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise TargetConfigError(f"{field_prefix}.max_tokens: expected a positive integer, got {max_tokens!r}")
    retries = options.get("max_retries", 2)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise TargetConfigError(f"{field_prefix}.max_retries: expected an integer >= 0, got {retries!r}")
    headers = options.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise TargetConfigError(f"{field_prefix}.headers: expected a mapping of header name to string")
    extra_body = options.get("extra_body") or {}
    if not isinstance(extra_body, Mapping):
        raise TargetConfigError(f"{field_prefix}.extra_body: expected a mapping")
    return ChatSettings(
        model=model,
        base_url=base_url,
        api_key_env=key_env,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout if timeout is not None else 120.0,
        max_retries=retries,
        headers={str(k): v for k, v in headers.items()},
        extra_body=dict(extra_body),
    )


def _number(options: Mapping[str, Any], key: str, prefix: str, *, minimum: float) -> float | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < minimum:
        raise TargetConfigError(f"{prefix}.{key}: expected a number >= {minimum:g}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class RequestedCall:
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str


@dataclass(frozen=True)
class ChatTurn:
    """One completion: the text, the tool calls asked for, usage, and the assistant message to replay."""

    text: str
    calls: tuple[RequestedCall, ...]
    usage: dict[str, Any]
    message: dict[str, Any]
    finish_reason: str | None


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments as a dict; text that is not a JSON object is kept under ``_raw_arguments``."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_raw_arguments": raw}
    return value if isinstance(value, dict) else {"_raw_arguments": raw}


class ChatClient:
    """An ``AsyncOpenAI`` client made on first use (inside the running loop) and reused for every call."""

    def __init__(self, settings: ChatSettings, *, agent: str) -> None:
        self.settings = settings
        self.agent = agent
        self._client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=self.settings.api_key(),
                base_url=self.settings.base_url,
                timeout=self.settings.timeout,
                max_retries=self.settings.max_retries,
                default_headers=dict(self.settings.headers) or None,
            )
        return self._client

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> ChatTurn:
        """Send the conversation and return the model's turn.

        Raises:
            AgentTimeout: the endpoint did not answer in time.
            AgentError: the endpoint failed or sent a response without a message.
        """
        import openai

        arguments: dict[str, Any] = {"model": self.settings.model, "messages": [dict(m) for m in messages]}
        if tools:
            arguments["tools"] = [dict(t) for t in tools]
        if self.settings.temperature is not None:
            arguments["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            arguments["max_tokens"] = self.settings.max_tokens
        if self.settings.extra_body:
            arguments["extra_body"] = dict(self.settings.extra_body)
        where = f"{self.settings.base_url or 'api.openai.com'} model {self.settings.model}"
        try:
            response = await self._openai().chat.completions.create(**arguments)
        except openai.APITimeoutError as exc:
            raise AgentTimeout(f"agent {self.agent}: chat endpoint {where} timed out") from exc
        except openai.APIStatusError as exc:
            body = _excerpt(exc.response.text if exc.response is not None else "")
            raise AgentError(
                f"agent {self.agent}: chat endpoint {where} answered HTTP {exc.status_code}: {body}"
            ) from exc
        except openai.APIError as exc:
            raise AgentError(f"agent {self.agent}: chat endpoint {where} failed: {type(exc).__name__}: {exc}") from exc
        return self._turn(response, where)

    def _turn(self, response: Any, where: str) -> ChatTurn:
        choices = getattr(response, "choices", None) or []
        if not choices or getattr(choices[0], "message", None) is None:
            raise AgentError(
                f"agent {self.agent}: chat endpoint {where} returned no message: {_excerpt(repr(response))}"
            )
        choice = choices[0]
        message = choice.message
        text = message.content if isinstance(message.content, str) else ""
        calls = []
        for call in message.tool_calls or ():
            function = getattr(call, "function", None)
            if function is None or not getattr(function, "name", None):
                raise AgentError(f"agent {self.agent}: chat endpoint {where} returned a tool call without a name")
            raw = function.arguments or ""
            calls.append(
                RequestedCall(id=call.id, name=function.name, arguments=parse_arguments(raw), raw_arguments=raw)
            )
        usage: dict[str, Any] = {}
        if response.usage is not None:
            usage = {
                "input_tokens": response.usage.prompt_tokens,
                "output_tokens": response.usage.completion_tokens,
                "total_tokens": response.usage.total_tokens,
            }
        replay: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            replay["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
                for c in calls
            ]
        return ChatTurn(text=text, calls=tuple(calls), usage=usage, message=replay, finish_reason=choice.finish_reason)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
