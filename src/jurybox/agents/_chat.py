"""A small OpenAI-compatible chat client for agents: one completion, tool calls included.

Used by the ``openai`` target (the endpoint is the agent; chat completions
or, through ``post("responses", ...)``, the Responses API) and the ``mcp``
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
from jurybox.agents._http import MISSING, expand_env, follow
from jurybox.agents._reported import MAX_REPORTED_CALLS, reported_tool_calls
from jurybox.core import ToolCall, error_reason, read_json, require

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


def chat_settings_schema(extra_keys: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON Schema of a chat endpoint mapping (``agent.openai``, ``agent.mcp.model``), for the suite schema."""
    keys = sorted(_SETTINGS_KEYS | set(extra_keys))
    properties: dict[str, Any] = {key: {} for key in keys}
    properties["model"] = {"type": "string", "minLength": 1, "description": "The model name the endpoint serves."}
    properties["base_url"] = {"type": "string", "pattern": "^https?://", "description": "The endpoint's base URL."}
    return {"type": "object", "properties": properties, "required": ["model"], "additionalProperties": False}


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
        headers={str(k): expand_env(v, field=f"{field_prefix}.headers.{k}") for k, v in headers.items()},
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
    """A tool call in the model's message: asked for, or (on a ``stop`` reply) already run by the service."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str
    result: Any = None


@dataclass(frozen=True)
class ChatTurn:
    """One completion: the text, the tool calls asked for, usage, and the assistant message to replay.

    ``reported`` holds the tool calls the service says it ran internally (read from
    the response field ``tool_calls_path``), in the order it gave them.
    """

    text: str
    calls: tuple[RequestedCall, ...]
    usage: dict[str, Any]
    message: dict[str, Any]
    finish_reason: str | None
    reported: tuple[ToolCall, ...] = ()


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments as a dict; text that is not a JSON object is kept under ``_raw_arguments``."""
    if not raw or not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except ValueError:
        return {"_raw_arguments": raw}
    return value if isinstance(value, dict) else {"_raw_arguments": raw}


API_RESOURCES = {"chat": "chat.completions", "responses": "responses"}


class ChatClient:
    """An ``AsyncOpenAI`` client made on first use (inside the running loop) and reused for every call.

    Responses are read as the JSON the endpoint sent, not through the SDK's
    models, so fields a service adds (``metadata.tool_calls``, ``result`` on a
    tool call) reach the trace and a malformed one is a clear AgentError.
    """

    def __init__(
        self, settings: ChatSettings, *, agent: str, tool_calls_path: Sequence[str | int] | None = None
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.tool_calls_path = tuple(tool_calls_path) if tool_calls_path else None
        self._client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            try:
                openai = require("openai", extra="openai", feature=f"agent {self.agent} (an OpenAI endpoint)")
            except ImportError as error:
                raise AgentError(str(error)) from None
            self._client = openai.AsyncOpenAI(
                api_key=self.settings.api_key(),
                base_url=self.settings.base_url,
                timeout=self.settings.timeout,
                max_retries=self.settings.max_retries,
                default_headers=dict(self.settings.headers) or None,
            )
        return self._client

    @property
    def where(self) -> str:
        return f"{self.settings.base_url or 'api.openai.com'} model {self.settings.model}"

    async def post(
        self, api: str, arguments: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one request to ``api`` (``chat`` or ``responses``) and return the JSON object it answered.

        Raises:
            AgentTimeout: the endpoint did not answer in time.
            AgentError: the endpoint failed or answered something that is not a JSON object.
        """
        resource: Any = self._openai()
        import openai  # installed: _openai() said so

        for part in API_RESOURCES[api].split("."):
            resource = getattr(resource, part)
        request = dict(arguments)
        if headers:
            request["extra_headers"] = dict(headers)
        where = self.where
        try:
            raw = await resource.with_raw_response.create(**request)
        except openai.APITimeoutError as exc:
            raise AgentTimeout(f"agent {self.agent}: endpoint {where} timed out") from exc
        except openai.APIStatusError as exc:
            body = _excerpt(exc.response.text if exc.response is not None else "")
            raise AgentError(f"agent {self.agent}: endpoint {where} answered HTTP {exc.status_code}: {body}") from exc
        except openai.APIError as exc:
            raise AgentError(f"agent {self.agent}: endpoint {where}: {error_reason(exc)}") from exc
        try:
            document = read_json(raw.http_response.content)
        except ValueError as exc:
            text = raw.http_response.content.decode("utf-8", "replace")
            raise AgentError(
                f"agent {self.agent}: endpoint {where} answered what is not JSON: {_excerpt(text)}"
            ) from exc
        if not isinstance(document, dict):
            raise AgentError(
                f"agent {self.agent}: endpoint {where} answered {type(document).__name__}, not a JSON object"
            )
        return document

    def reported_calls(self, document: Mapping[str, Any]) -> tuple[ToolCall, ...]:
        """The tool calls the service reports at ``tool_calls_path`` (none when the field is absent)."""
        if self.tool_calls_path is None:
            return ()
        value, _ = follow(document, self.tool_calls_path)
        field = ".".join(map(str, self.tool_calls_path))
        try:
            return reported_tool_calls(None if value is MISSING else value, field=field)
        except ValueError as exc:
            raise AgentError(f"agent {self.agent}: endpoint {self.where} reported malformed tool calls: {exc}") from exc

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ChatTurn:
        """Send the conversation and return the model's turn.

        Args:
            messages: The chat messages, in order.
            tools: OpenAI tool definitions offered to the model.
            extra_body: Body fields for this request (default: the settings' ``extra_body``).
            headers: Headers for this request, over the settings' own.

        Raises:
            AgentTimeout: the endpoint did not answer in time.
            AgentError: the endpoint failed or sent a response without a message.
        """
        arguments: dict[str, Any] = {"model": self.settings.model, "messages": [dict(m) for m in messages]}
        if tools:
            arguments["tools"] = [dict(t) for t in tools]
        if self.settings.temperature is not None:
            arguments["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            arguments["max_tokens"] = self.settings.max_tokens
        body = self.settings.extra_body if extra_body is None else extra_body
        if body:
            arguments["extra_body"] = dict(body)
        document = await self.post("chat", arguments, headers=headers)
        return self._turn(document)

    def _turn(self, document: Mapping[str, Any]) -> ChatTurn:
        choices = document.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(choice, Mapping) or not isinstance(message, Mapping):
            raise AgentError(
                f"agent {self.agent}: chat endpoint {self.where} returned no message: "
                f"{_excerpt(json.dumps(document, default=str))}"
            )
        text = content_text(message.get("content"))
        calls = self._message_calls(message.get("tool_calls"))
        usage: dict[str, Any] = {}
        counts = document.get("usage")
        if isinstance(counts, Mapping):
            for ours, theirs in (
                ("input_tokens", "prompt_tokens"),
                ("output_tokens", "completion_tokens"),
                ("total_tokens", "total_tokens"),
            ):
                value = counts.get(theirs)
                if isinstance(value, int) and not isinstance(value, bool):
                    usage[ours] = value
        replay: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            replay["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
                for c in calls
            ]
        finish = choice.get("finish_reason")
        return ChatTurn(
            text=text,
            calls=calls,
            usage=usage,
            message=replay,
            finish_reason=finish if isinstance(finish, str) else None,
            reported=self.reported_calls(document),
        )

    def _message_calls(self, items: Any) -> tuple[RequestedCall, ...]:
        """``message.tool_calls`` in OpenAI's shape or the plain ``{name, arguments, result?}`` some services send."""
        if items is None:
            return ()
        where = "choices[0].message.tool_calls"
        if not isinstance(items, list) or len(items) > MAX_REPORTED_CALLS:
            raise AgentError(
                f"agent {self.agent}: chat endpoint {self.where}: {where}: expected a list of at most "
                f"{MAX_REPORTED_CALLS} tool calls, got {_excerpt(json.dumps(items, default=str), 80)}"
            )
        calls = []
        for index, item in enumerate(items):
            function = item.get("function") if isinstance(item, Mapping) else None
            source = function if isinstance(function, Mapping) else item
            name = source.get("name") if isinstance(source, Mapping) else None
            if not isinstance(name, str) or not name:
                raise AgentError(
                    f"agent {self.agent}: chat endpoint {self.where}: {where}[{index}] has no tool name: "
                    f"{_excerpt(json.dumps(item, default=str), 120)}"
                )
            assert isinstance(item, Mapping) and isinstance(source, Mapping)
            raw = source.get("arguments", source.get("args"))
            if isinstance(raw, Mapping):
                arguments, raw_text = {str(k): v for k, v in raw.items()}, json.dumps(raw, default=str)
            else:
                raw_text = raw if isinstance(raw, str) else ""
                arguments = parse_arguments(raw_text)
            call_id = item.get("id")
            calls.append(
                RequestedCall(
                    id=str(call_id) if call_id is not None else f"call_{index}",
                    name=name,
                    arguments=arguments,
                    raw_arguments=raw_text,
                    result=item.get("result", item.get("output")),
                )
            )
        return tuple(calls)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


def content_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
