"""The Responses API adapter (``agent.openai.api: responses``) against the stub's /v1/responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybox.agents import AgentError, RoundSpec, TargetConfigError, make_target, run_conversation
from jurybox.stubs import StubReply, StubServer, StubToolCall

TOOL = {"type": "function", "function": {"name": "get_listings", "parameters": {"type": "object"}}}


def spec(url: str, **options: Any) -> dict[str, Any]:
    return {"openai": {"model": "agent-model", "base_url": url, "api": "responses", **options}}


async def test_replay_sends_the_history_as_input_items_with_the_session_and_reads_the_output() -> None:
    def script(body: dict[str, Any]) -> StubReply:
        if "listings" in body["input"][-1]["content"]:
            return StubReply(text="Checking.", tool_calls=(StubToolCall("get_listings", {"city": "SF"}, id="c7"),))
        return StubReply(text=f"{len(body['input'])} items so far.", input_tokens=30, output_tokens=5)

    with StubServer("openai", reply=script) as stub:
        target = make_target(spec(stub.base_url, system="You manage rentals.", tools=[TOOL], temperature=0))
        first, second = await run_conversation(
            target, [RoundSpec("Show my listings"), RoundSpec("And now?")], session_id="r1"
        )
        sent = [r.json for r in stub.requests]
        # Revival drops the adapter's history, as for the chat adapter.
        _, revived = await run_conversation(
            target, [RoundSpec("hello"), RoundSpec("again")], session_id="r2", revive_between_rounds=True
        )
        await target.aclose()
    assert first.context.output == "Checking."
    (call,) = first.context.tool_calls
    assert (call.name, dict(call.arguments), call.id) == ("get_listings", {"city": "SF"}, "c7")
    assert second.context.output == "3 items so far."
    assert second.context.metadata["usage"]["input_tokens"] == 30
    assert second.context.metadata["tokens"] == 35
    assert second.context.metadata["usage"]["status"] == "completed"
    assert sent[0]["instructions"] == "You manage rentals."
    assert sent[0]["user"] == "r1"  # the session id, so a stateful service can key it
    # Chat-shaped tool definitions are sent in the Responses shape.
    assert sent[0]["tools"] == [{"type": "function", "name": "get_listings", "parameters": {"type": "object"}}]
    assert sent[1]["input"] == [
        {"role": "user", "content": "Show my listings"},
        {"role": "assistant", "content": "Checking."},
        {"role": "user", "content": "And now?"},
    ]
    assert revived.context.output == "1 items so far."


async def test_previous_response_id_chains_the_session_and_revival_forgets_it() -> None:
    with StubServer("openai", reply="fine") as stub:
        target = make_target(spec(stub.base_url, history="previous_response_id", session="header"))
        await run_conversation(target, [RoundSpec("one"), RoundSpec("two")], session_id="p1")
        await run_conversation(
            target, [RoundSpec("three"), RoundSpec("four")], session_id="p2", revive_between_rounds=True
        )
        await target.aclose()
    first, second, third, fourth = (r.json for r in stub.requests)
    assert first["input"] == "one" and "previous_response_id" not in first
    assert second["input"] == "two"
    assert second["previous_response_id"].startswith("resp_stub")
    assert "previous_response_id" not in fourth  # revival: only the service can remember
    assert "user" not in first
    assert [r.headers["x-session-id"] for r in stub.requests] == ["p1", "p1", "p2", "p2"]
    assert third["input"] == "three"


async def test_tool_calls_the_service_ran_are_read_from_metadata_even_as_a_json_string() -> None:
    # The Responses API's metadata holds strings only, so a service reports its calls as JSON text.
    reported = json.dumps([{"name": "search_docs", "arguments": {"q": "pets"}, "result": "no pets"}])
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "No pets allowed.", "annotations": []}],
            },
        ],
        "metadata": {"tool_calls": reported},
        "usage": {"input_tokens": 4, "output_tokens": 3, "total_tokens": 7},
    }
    with StubServer("openai") as stub:
        stub.fail(200, body=body)
        target = make_target(spec(stub.base_url))
        reply = await target.respond("Pets?", "s")
        await target.aclose()
    assert reply.text == "No pets allowed."
    (call,) = reply.tool_calls
    assert (call.name, dict(call.arguments), call.result) == ("search_docs", {"q": "pets"}, "no pets")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"id": "r", "status": "failed", "error": {"message": "model overloaded"}}, "failed: model overloaded"),
        ({"id": "r", "status": "completed"}, "without an 'output' list"),
        (
            {"id": "r", "output": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
            r"output \(function_call items\)\[0\]\.name: expected a tool name",
        ),
        ({"id": "r", "output": [], "metadata": {"tool_calls": "{not json"}}, r"metadata\.tool_calls: a string"),
        ({"id": "r", "output": [], "metadata": {"tool_calls": [{"name": "x"}] * 300}}, "over the limit of 256"),
    ],
    ids=["failed", "no-output", "nameless-call", "metadata-not-json", "too-many-calls"],
)
async def test_a_hostile_or_failed_response_is_an_agent_error(body: dict[str, Any], message: str) -> None:
    with StubServer("openai") as stub:
        stub.fail(200, body=body)
        target = make_target(spec(stub.base_url))
        with pytest.raises(AgentError, match=message):
            await target.respond("hi", "s")
        await target.aclose()


async def test_model_arguments_that_are_not_json_are_kept_for_the_judges() -> None:
    body = {"id": "r", "output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"}]}
    with StubServer("openai") as stub:
        stub.fail(200, body=body)
        target = make_target(spec(stub.base_url))
        reply = await target.respond("hi", "s")
        await target.aclose()
    assert dict(reply.tool_calls[0].arguments) == {"_raw_arguments": "{oops"}


def test_responses_config_errors_name_the_field() -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.api: expected one of chat, responses"):
        make_target({"openai": {"model": "m", "api": "response"}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.history: expected one of replay"):
        make_target(spec("http://127.0.0.1:1/v1", history="server"))
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.tools\[0\]: .* or \{type: function, name"):
        make_target(spec("http://127.0.0.1:1/v1", tools=[{"type": "function"}]))
    hosted = make_target(spec("http://127.0.0.1:1/v1", tools=[{"type": "web_search"}]))
    assert hosted.name == "openai-responses:agent-model"
