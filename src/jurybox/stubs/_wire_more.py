"""The OpenAI Responses API (``/v1/responses``) and Ollama's ``/api/generate``, as the real servers send them.

Shapes follow the OpenAI API reference and the ``openai`` SDK's types
(``Response``, ``ResponseOutputMessage``, ``ResponseFunctionToolCall`` and the
``response.*`` stream events), and the recorded Ollama traffic in
../shared/realdata/cassettes/ollama (``openllmetry__ollama_generate.yaml``,
``openllmetry__ollama_streaming_generate__ndjson.yaml``).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from jurybox.stubs._replies import Provider, StubReply, estimate_tokens
from jurybox.stubs._wire import WireResponse, json_response, split_text

_ids = itertools.count(1)

# Each provider's routes: the path suffix and the API it speaks there.
API_ROUTES: dict[Provider, tuple[tuple[str, str], ...]] = {
    "openai": (("/chat/completions", "chat"), ("/responses", "responses")),
    "anthropic": (("/v1/messages", "messages"),),
    "ollama": (("/api/chat", "chat"), ("/api/generate", "generate")),
}


def route(provider: Provider, method: str, path: str) -> str | None:
    """The API a request to ``path`` speaks on this provider's stub, or None when there is no such route."""
    if method != "POST":
        return None
    return next((api for suffix, api in API_ROUTES[provider] if path.endswith(suffix)), None)


def validate_more(api: str, body: Any) -> str | None:
    """The error a real server gives a malformed Responses or generate request, or None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    if api == "responses":
        given = body.get("input")
        if given is None and not body.get("previous_response_id"):
            return "Missing required parameter: 'input'."
        if given is not None and not isinstance(given, str | list):
            return "input: expected a string or a list of input items"
    elif "prompt" in body and not isinstance(body["prompt"], str):
        return "prompt: expected a string"
    return None


# ---------------------------------------------------------------- Responses API


def _message_item(ident: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = (
        [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if status == "completed" else []
    )
    return {"id": ident, "type": "message", "status": status, "role": "assistant", "content": content}


def _function_item(ident: str, call_id: str, name: str, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": ident,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def responses_response(body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    """A ``response`` object, or its ``response.*`` SSE events when the request says ``stream: true``."""
    number = next(_ids)
    usage_in = (
        reply.input_tokens
        if reply.input_tokens is not None
        else estimate_tokens([body.get("instructions"), body.get("input")])
    )
    usage_out = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
    items: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        items.append(_message_item(f"msg_stub{number}", reply.text))
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_stub{number}_{index}"
        items.append(_function_item(f"fc_stub{number}_{index}", call_id, call.name, json.dumps(dict(call.arguments))))
    truncated = reply.finish_reason == "length"
    response: dict[str, Any] = {
        "id": f"resp_stub{number}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if truncated else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": str(body["model"]),
        "output": items,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage_in,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage_out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage_in + usage_out,
        },
        "user": body.get("user"),
        "metadata": body.get("metadata") or {},
    }
    if not body.get("stream"):
        return json_response(200, response)
    return WireResponse(200, [("content-type", "text/event-stream; charset=utf-8")], _response_events(response))


def _response_events(response: dict[str, Any]) -> list[bytes]:
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    started = {**response, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for index, item in enumerate(response["output"]):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit("response.output_item.added", output_index=index, item=_message_item(item["id"], "", "in_progress"))
            empty_part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", **where, content_index=0, part=empty_part)
            for piece in split_text(text) if text else []:
                emit("response.output_text.delta", **where, content_index=0, delta=piece, logprobs=[])
            emit("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
            emit("response.content_part.done", **where, content_index=0, part=item["content"][0])
        else:
            pending = {**item, "arguments": "", "status": "in_progress"}
            emit("response.output_item.added", output_index=index, item=pending)
            for piece in split_text(item["arguments"]):
                emit("response.function_call_arguments.delta", **where, delta=piece)
            emit("response.function_call_arguments.done", **where, arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.incomplete" if response["status"] == "incomplete" else "response.completed", response=response)
    return [f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode() for e in events]


# ---------------------------------------------------------------- Ollama /api/generate


def generate_response(body: Mapping[str, Any], reply: StubReply) -> WireResponse:
    """Ollama's ``/api/generate``: NDJSON lines of ``response`` pieces, or one object with ``stream: false``."""
    model = str(body["model"])
    created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    usage_in = (
        reply.input_tokens
        if reply.input_tokens is not None
        else estimate_tokens([body.get("system"), body.get("prompt")])
    )
    usage_out = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
    final = {
        "done": True,
        "done_reason": reply.finish_reason or "stop",
        # The tokens of the exchange, which a client may send back as the next request's "context".
        "context": list(range(1, min(usage_in + usage_out, 4096) + 1)),
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": usage_in,
        "prompt_eval_duration": 200_000,
        "eval_count": usage_out,
        "eval_duration": 700_000,
    }
    # Ollama streams unless the request says "stream": false.
    if body.get("stream") is False:
        return json_response(200, {"model": model, "created_at": created, "response": reply.text, **final})
    lines: list[dict[str, Any]] = [
        {"model": model, "created_at": created, "response": piece, "done": False}
        for piece in (split_text(reply.text) if reply.text else [])
    ]
    lines.append({"model": model, "created_at": created, "response": "", **final})
    chunks = [(json.dumps(line, ensure_ascii=False) + "\n").encode() for line in lines]
    return WireResponse(200, [("content-type", "application/x-ndjson")], chunks)
