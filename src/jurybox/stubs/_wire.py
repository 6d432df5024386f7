"""Each provider's wire format: the JSON, SSE and NDJSON bodies a real server sends.

The shapes follow the providers' API references and the recorded traffic in
tests/data/cassettes (OpenAI chat.completion / chat.completion.chunk, Anthropic
message and its stream events, Ollama /api/chat objects).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jurybox.core import read_json
from jurybox.stubs._replies import Provider, StubReply, StubToolCall, estimate_tokens

_ids = itertools.count(1)
_PIECES = re.compile(r"\S+\s*|\s+")


@dataclass
class WireResponse:
    """A response ready to send: status, headers and the body in the chunks it is streamed in."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def json_response(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> WireResponse:
    data = json.dumps(payload, ensure_ascii=False).encode()
    extra = list((headers or {}).items())
    return WireResponse(status, [("content-type", "application/json"), *extra], [data])


def split_text(text: str) -> list[str]:
    """Split text into the word-sized pieces a streaming server sends (never loses a character)."""
    return _PIECES.findall(text) or [""]


# ---------------------------------------------------------------- errors


_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(provider: Provider, status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The provider's error envelope for ``status``."""
    if provider == "openai":
        kind = code if code == "insufficient_quota" else _OPENAI_ERROR_TYPES.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    if provider == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": code or kind, "message": message}}
    return {"error": message}


# ---------------------------------------------------------------- request checks


def validate_request(provider: Provider, body: Any) -> str | None:
    """Return the error a real server would give for a malformed request, or None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "messages: field required (a non-empty list)"
    if provider == "anthropic":
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if any(m.get("role") == "system" for m in body["messages"] if isinstance(m, dict)):
            return 'messages: Unexpected role "system". Use the top-level `system` parameter instead.'
    return None


def prompt_tokens(body: Mapping[str, Any]) -> int:
    return estimate_tokens([body.get("system"), body.get("messages")])


# ---------------------------------------------------------------- OpenAI


def _openai_tool_call(call: StubToolCall) -> dict[str, Any]:
    return {
        "id": call.id or f"call_stub_{next(_ids)}",
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
    }


def openai_response(body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    model = str(body["model"])
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    usage_in = reply.input_tokens if reply.input_tokens is not None else prompt_tokens(body)
    usage_out = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
    usage = {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out}
    ident, created = f"chatcmpl-stub{next(_ids)}", int(time.time())
    calls = [_openai_tool_call(c) for c in reply.tool_calls]
    if not body.get("stream"):
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text if reply.text or not calls else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        return json_response(
            200,
            {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage,
                "system_fingerprint": "fp_jurybox_stub",
            },
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_jurybox_stub",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if reply.text:
        events += [chunk({"content": piece}) for piece in split_text(reply.text)]
    for index, call in enumerate(calls):
        function = call["function"]
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": function["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in split_text(function["arguments"])
        ]
    events.append(chunk({}, finish))
    options = body.get("stream_options") or {}
    if isinstance(options, dict) and options.get("include_usage"):
        events.append(
            {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
    chunks = [f"data: {json.dumps(e, ensure_ascii=False)}\n\n".encode() for e in events]
    chunks.append(b"data: [DONE]\n\n")
    return WireResponse(200, [("content-type", "text/event-stream; charset=utf-8")], chunks)


# ---------------------------------------------------------------- Anthropic


def _forced_tool(body: Mapping[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        name = choice.get("name")
        return name if isinstance(name, str) else None
    return None


def _anthropic_blocks(body: Mapping[str, Any], reply: StubReply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    calls = list(reply.tool_calls)
    forced = _forced_tool(body)
    text = reply.text
    if forced and not calls and text:
        # A forced tool is how Anthropic does structured output: the JSON reply becomes the tool input.
        try:
            arguments = read_json(text)
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):
            calls, text = [StubToolCall(forced, arguments)], ""
    if text:
        blocks.append({"type": "text", "text": text})
    blocks += [
        {"type": "tool_use", "id": c.id or f"toolu_stub{next(_ids)}", "name": c.name, "input": dict(c.arguments)}
        for c in calls
    ]
    return blocks


def anthropic_response(body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    model = str(body["model"])
    blocks = _anthropic_blocks(body, reply)
    has_tool = any(b["type"] == "tool_use" for b in blocks)
    stop = reply.finish_reason or ("tool_use" if has_tool else "end_turn")
    usage_in = reply.input_tokens if reply.input_tokens is not None else prompt_tokens(body)
    usage_out = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(blocks)
    ident = f"msg_stub{next(_ids)}"
    if not body.get("stream"):
        return json_response(
            200,
            {
                "id": ident,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage_in,
                    "output_tokens": usage_out,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
        )
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": ident,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": usage_in, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
            )
            events += [
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                )
                for piece in split_text(block["text"])
            ]
        else:
            start = {**block, "input": {}}
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            )
            events += [
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
                for piece in split_text(json.dumps(block["input"]))
            ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage_out},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    chunks = [f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode() for name, data in events]
    return WireResponse(200, [("content-type", "text/event-stream; charset=utf-8")], chunks)


# ---------------------------------------------------------------- Ollama


def ollama_response(body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    model = str(body["model"])
    created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    usage_in = reply.input_tokens if reply.input_tokens is not None else prompt_tokens(body)
    usage_out = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
    finish = reply.finish_reason or "stop"
    calls = [{"function": {"name": c.name, "arguments": dict(c.arguments)}} for c in reply.tool_calls]
    final = {
        "done": True,
        "done_reason": finish,
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": usage_in,
        "prompt_eval_duration": 200_000,
        "eval_count": usage_out,
        "eval_duration": 700_000,
    }
    # Ollama streams unless the request says "stream": false.
    if body.get("stream") is False:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if calls:
            message["tool_calls"] = calls
        return json_response(200, {"model": model, "created_at": created, "message": message, **final})
    lines: list[dict[str, Any]] = [
        {"model": model, "created_at": created, "message": {"role": "assistant", "content": piece}, "done": False}
        for piece in (split_text(reply.text) if reply.text else [])
    ]
    if calls:
        lines.append(
            {
                "model": model,
                "created_at": created,
                "message": {"role": "assistant", "content": "", "tool_calls": calls},
                "done": False,
            }
        )
    lines.append({"model": model, "created_at": created, "message": {"role": "assistant", "content": ""}, **final})
    chunks = [(json.dumps(line, ensure_ascii=False) + "\n").encode() for line in lines]
    return WireResponse(200, [("content-type", "application/x-ndjson")], chunks)


RENDERERS = {"openai": openai_response, "anthropic": anthropic_response, "ollama": ollama_response}


def render(provider: Provider, body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    """Render ``reply`` as ``provider`` would answer ``body`` (streaming when the request asks)."""
    return RENDERERS[provider](body, reply)
