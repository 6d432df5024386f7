"""The OpenAI chat adapter against a stateful FastAPI chat service: sessions carried, internal tool calls visible."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request

from jurybox.agents import AgentError, RoundSpec, TargetConfigError, make_target, run_conversation
from jurybox.core import Status
from jurybox.engine import SuiteRunner
from jurybox.judges import tool_calls
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

HEADERS_SEEN: list[dict[str, str]] = []


def chat_service() -> FastAPI:
    """An OpenAI-compatible endpoint whose application keeps each session's memory itself.

    It reads only the last user message (as such services do) and keys its memory by the
    session id it is given: the ``user`` field, the ``X-Session-Id`` header or ``metadata.session``.
    The lookups it runs internally are reported in ``metadata.tool_calls``.
    """
    app = FastAPI()
    memory: dict[str, dict[str, str]] = {}

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        HEADERS_SEEN.append(dict(request.headers))
        session = (
            body.get("user")
            or request.headers.get("x-session-id")
            or (body.get("metadata") or {}).get("session")
            or f"new-{len(HEADERS_SEEN)}"  # no id: a new conversation, as such services start one
        )
        text = body["messages"][-1]["content"]
        await asyncio.sleep(0.02)  # so two conversations really interleave
        notes = memory.setdefault(session, {})
        internal: list[dict[str, Any]] = []
        if text.startswith("My name is "):
            notes["name"] = text.removeprefix("My name is ").rstrip(".")
            internal.append({"name": "remember", "arguments": {"key": "name", "value": notes["name"]}})
            reply = "Nice to meet you."
        elif text == "What is my name?":
            internal.append(
                {
                    "id": "int-1",
                    "type": "function",
                    "function": {"name": "recall", "arguments": '{"key": "name"}'},
                    "result": notes.get("name"),
                }
            )
            reply = f"Your name is {notes['name']}." if "name" in notes else "I don't know your name."
        elif text == "garbage calls":
            return _completion("ok", metadata={"tool_calls": [{"name": "a"}, {"name": "b", "arguments": "{oops"}]})
        elif text == "stop with calls":
            # A service that ran a tool itself and says so on the final message (not OpenAI's protocol).
            message_calls = [{"name": "lookup", "arguments": {"q": "x"}, "result": [1, 2]}]
            return _completion("Done.", message_calls=message_calls)
        else:
            reply = "Hello."
        return _completion(reply, metadata={"tool_calls": internal})

    return app


def _completion(
    text: str, *, metadata: dict[str, Any] | None = None, message_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if message_calls is not None:
        message["tool_calls"] = message_calls
    document: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "memory-bot",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    if metadata is not None:
        document["metadata"] = metadata
    return document


@pytest.fixture
def service() -> Iterator[str]:
    HEADERS_SEEN.clear()
    config = uvicorn.Config(chat_service(), host="127.0.0.1", port=0, log_level="critical", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the chat service did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=10)


ROUNDS = [RoundSpec("My name is Ada."), RoundSpec("What is my name?")]


@pytest.mark.parametrize(
    "session",
    [None, "header", {"send_as": "header", "header": "X-Conversation"}, "none"],
    ids=["user-default", "header", "custom-header+template", "template-only"],
)
async def test_a_stateful_service_passes_revival_only_when_the_session_is_carried(service: str, session: Any) -> None:
    options: dict[str, Any] = {"model": "memory-bot", "base_url": service}
    if session is not None:
        options["session"] = session
    if isinstance(session, dict):
        options["headers"] = {"X-Session-Id": "sess-{session_id}"}  # a header template, filled per request
    if session == "none":
        # Only where a template puts it: inside a nested extra_body value.
        options["extra_body"] = {"metadata": {"session": "{session_id}", "tags": ["t-{session_id}"]}}
    target = make_target({"openai": options})
    _, second = await run_conversation(target, ROUNDS, session_id="case-1-abc", revive_between_rounds=True)
    await target.aclose()
    assert second.context.metadata["revived"] is True
    assert second.context.output == "Your name is Ada."
    if isinstance(session, dict):
        assert HEADERS_SEEN[-1]["x-conversation"] == "case-1-abc"
        assert HEADERS_SEEN[-1]["x-session-id"] == "sess-case-1-abc"


async def test_without_the_session_id_the_revival_round_fails(service: str) -> None:
    target = make_target({"openai": {"model": "memory-bot", "base_url": service, "session": "none"}})
    _, second = await run_conversation(target, ROUNDS, session_id="case-2", revive_between_rounds=True)
    await target.aclose()
    assert second.context.output == "I don't know your name."


async def test_two_concurrent_conversations_never_collide(service: str) -> None:
    target = make_target({"openai": {"model": "memory-bot", "base_url": service}})
    people = ["Ada", "Grace", "Barbara", "Frances"]
    outcomes = await asyncio.gather(
        *(
            run_conversation(
                target,
                [RoundSpec(f"My name is {name}."), RoundSpec("What is my name?")],
                session_id=f"run-{name}",
                revive_between_rounds=True,
            )
            for name in people
        )
    )
    await target.aclose()
    assert [rounds[1].context.output for rounds in outcomes] == [f"Your name is {name}." for name in people]


async def test_internal_tool_calls_reach_the_trace_and_a_tool_call_judge(service: str) -> None:
    target = make_target({"openai": {"model": "memory-bot", "base_url": service}})
    first, second = await run_conversation(target, ROUNDS, session_id="trace-1")
    await target.aclose()
    assert [(c.name, dict(c.arguments)) for c in first.context.tool_calls] == [
        ("remember", {"key": "name", "value": "Ada"})
    ]
    (recall,) = second.context.tool_calls
    assert (recall.name, dict(recall.arguments), recall.result, recall.id) == (
        "recall",
        {"key": "name"},
        "Ada",
        "int-1",
    )
    verdict = tool_calls([{"name": "recall", "arguments": {"key": "name"}}])(second.context)
    assert verdict.status is Status.PASS
    assert tool_calls(["remember"])(second.context).status is Status.FAIL


async def test_tool_calls_on_a_stop_reply_are_read_with_their_results(service: str) -> None:
    target = make_target({"openai": {"model": "memory-bot", "base_url": service}})
    reply = await target.respond("stop with calls", "s")
    await target.aclose()
    assert [(c.name, dict(c.arguments), c.result) for c in reply.tool_calls] == [("lookup", {"q": "x"}, [1, 2])]
    assert reply.usage["finish_reason"] == "stop"


async def test_malformed_reported_tool_calls_are_an_agent_error_naming_the_field(service: str) -> None:
    target = make_target({"openai": {"model": "memory-bot", "base_url": service}})
    with pytest.raises(AgentError, match=r"metadata\.tool_calls\[1\]\.arguments: a string that is not JSON"):
        await target.respond("garbage calls", "s")
    await target.aclose()


async def test_a_custom_tool_calls_path_and_turning_it_off(service: str) -> None:
    spec = {"openai": {"model": "memory-bot", "base_url": service, "tool_calls_path": "choices.0.message.trace"}}
    target = make_target(spec)
    assert (await target.respond("What is my name?", "p")).tool_calls == ()
    await target.aclose()
    target = make_target({"openai": {"model": "memory-bot", "base_url": service, "tool_calls_path": False}})
    assert (await target.respond("garbage calls", "p")).text == "ok"  # not read, so not an error
    await target.aclose()


def test_session_and_tool_call_path_errors_name_the_field() -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.session\.send_as: expected one of user, header, none"):
        make_target({"openai": {"model": "m", "session": {"send_as": "cookie"}}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.session: unknown key\(s\) hedaer"):
        make_target({"openai": {"model": "m", "session": {"hedaer": "X"}}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.session\.header: expected a header name"):
        make_target({"openai": {"model": "m", "session": {"header": "bad header"}}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.tool_calls_path: expected a dotted path"):
        make_target({"openai": {"model": "m", "tool_calls_path": ""}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.history: only for 'api: responses'"):
        make_target({"openai": {"model": "m", "history": "replay"}})


SUITE = """\
name: memory
agent:
  openai: {{model: memory-bot, base_url: "{url}"}}
defaults: {{timeout: 10, retries: 0, revive_between_rounds: true}}
cases:
{cases}
"""
CASE = """\
  - name: {name}
    rounds:
      - prompt: "My name is {name}."
      - prompt: "What is my name?"
        expect_tools: [recall]
        judges: [{{contains: "Your name is {name}."}}]
"""


async def test_a_suite_gives_each_case_its_own_session(service: str, tmp_path: Path) -> None:
    people = ["Ada", "Grace", "Barbara"]
    path = tmp_path / "memory.yaml"
    path.write_text(SUITE.format(url=service, cases="".join(CASE.format(name=n) for n in people)), encoding="utf-8")
    result = await SuiteRunner(load_suite(path)).run()
    assert [r.status for r in result.records] == [Status.PASS] * len(people)
    sessions = {r.rounds[1].context.metadata["session_id"] for r in result.records}
    assert len(sessions) == len(people)


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ([{"id": "c1", "type": "function", "function": {"arguments": "{}"}}], r"tool_calls\[0\] has no tool name"),
        ("lookup", r"choices\[0\]\.message\.tool_calls: expected a list of at most 256"),
        ([{"name": "f"}] * 257, "expected a list of at most 256"),
    ],
    ids=["nameless", "not-a-list", "too-many"],
)
async def test_hostile_message_tool_calls_are_an_agent_error(calls: Any, message: str) -> None:
    with StubServer("openai") as stub:
        stub.fail(200, body=_completion("x", message_calls=calls))
        target = make_target({"openai": {"model": "m", "base_url": stub.base_url}})
        with pytest.raises(AgentError, match=message):
            await target.respond("hi", "s")
        await target.aclose()
