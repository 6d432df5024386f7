"""Anthropic Messages API via the official SDK: the body built from a request, the reply read back.

Structured output goes through a forced tool call; a request's own tools are sent as tools.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic
import httpx2

from jurybox.core import ToolCall
from jurybox.models._base import ProviderModel, resolve_api_key, status_error
from jurybox.models._errors import EmptyResponseError, ProviderError
from jurybox.models._probe import ProbeTarget
from jurybox.models._providers import key_variable
from jurybox.models._tool_calls import tool_call
from jurybox.models._types import GenerateRequest, ModelResponse, Usage, plain

DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; judge replies fit comfortably
STRUCTURED_TOOL = "record_answer"


class AnthropicModel(ProviderModel):
    """``anthropic:<model>``: the Messages API through ``anthropic.AsyncAnthropic``.

    Args:
        model: The model name (``claude-haiku-4-5``...).
        api_key: Default ``$ANTHROPIC_API_KEY``. With a ``base_url`` and no key, a dummy key is sent.
        base_url: Default ``$ANTHROPIC_BASE_URL`` or ``https://api.anthropic.com``.
        default_max_tokens: Sent when a request gives no ``max_tokens`` (Anthropic requires one).
        **options: See ``ProviderModel``.

    System messages go to the top-level ``system`` field. A JSON schema (an object schema)
    becomes a tool the model must call, and the tool's input is the reply text (as JSON);
    other schemas, and any schema of a request that offers tools of its own, fall back to
    plain text. The Messages API of the anthropic SDK in use
    (2.x) has no ``temperature`` or ``seed``: they are not sent (they still separate cache
    entries); for a model that accepts it, send one with ``params={"temperature": 0}``.
    """

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        **options: Any,
    ) -> None:
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        super().__init__(model, base_url=base_url, **options)
        self._api_key = resolve_api_key(
            self.provider,
            api_key,
            "ANTHROPIC_API_KEY",
            base_url=self.base_url,
            keyless="for a local or proxy server pass base_url=...",
        )
        self.default_max_tokens = default_max_tokens

    def probe_target(self) -> ProbeTarget:
        # The SDK's base URL has no /v1: its paths carry it.
        headers = {"x-api-key": self._api_key, "anthropic-version": "2023-06-01"}
        url = f"{self.effective_base_url}/v1/models"
        return ProbeTarget(self.printable_url, url, headers, key_variable(self.provider))

    def _make_client(self, connections: int) -> anthropic.AsyncAnthropic:
        limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # our retries are the only ones
            http_client=anthropic.DefaultAsyncHttpxClient(limits=limits, timeout=self.timeout),
        )

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The Messages API arguments for ``request``."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages if m.role != "system"],
            "max_tokens": request.max_tokens or self.default_max_tokens,
        }
        if system:
            body["system"] = system
        schema = request.json_schema
        if request.tools:
            body["tools"] = [
                {"name": tool.name, "description": tool.description, "input_schema": plain(tool.parameters)}
                for tool in request.tools
            ]
        elif schema is not None and self.structured_output and schema.get("type") == "object":
            body["tools"] = [
                {
                    "name": STRUCTURED_TOOL,
                    "description": "Record your answer. The input must follow the schema exactly.",
                    "input_schema": plain(schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": STRUCTURED_TOOL}
        if self.params:
            body["extra_body"] = dict(self.params)
        return body

    async def _send(self, client: anthropic.AsyncAnthropic, request: GenerateRequest) -> ModelResponse:
        body = self.request_body(request)
        if self.stream:
            async with client.messages.stream(**body) as stream:
                message = await stream.get_final_message()
        else:
            message = await client.messages.create(**body)
        return _from_message(message.model_dump(mode="json"), structured="tool_choice" in body)

    def _translate(self, error: Exception) -> ProviderError | None:
        if isinstance(error, anthropic.APITimeoutError):
            return self._timeout_error()
        if isinstance(error, anthropic.APIConnectionError):
            return self._connection_error(error.__cause__ or error)
        if isinstance(error, anthropic.APIStatusError):
            headers = dict(error.response.headers.items())
            return status_error(self.provider, error.status_code, headers, error.body)
        if isinstance(error, anthropic.AnthropicError):
            return ProviderError(f"unusable response: {error}", provider=self.provider)
        if isinstance(error, json.JSONDecodeError) and not error.doc.strip():
            # The SDK parses the body itself: an empty 200 reaches us as a JSON error.
            return EmptyResponseError("empty response body", provider=self.provider)
        return None


def _from_message(data: dict[str, Any], *, structured: bool) -> ModelResponse:
    texts: list[str] = []
    tool_input: Any = None
    calls: list[ToolCall] = []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            texts.append(block.get("text") or "")
        elif block.get("type") == "tool_use" and structured:
            # We forced our one tool, so a tool_use block is the answer whatever a proxy named it.
            tool_input = block.get("input") if tool_input is None else tool_input
        elif block.get("type") == "tool_use":  # a call of one of the request's own tools
            calls.append(tool_call(block.get("name"), block.get("input"), block.get("id"), provider="anthropic"))
    # The forced tool's input is the structured answer; without it (a refusal, max_tokens) keep the text.
    text = json.dumps(tool_input, ensure_ascii=False) if tool_input is not None else "".join(texts)
    usage = data.get("usage") or {}
    return ModelResponse(
        text=text,
        usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
        finish_reason=data.get("stop_reason"),
        raw=data,
        tool_calls=tuple(calls),
    )
