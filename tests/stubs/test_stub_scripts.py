"""Scripted stub replies from YAML: a tool call, then an answer that uses the tool's result."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from jurybox.agents import RoundSpec, make_target, run_conversation
from jurybox.stubs import ScriptError, StubServer, load_script

RULES = """\
# The agent asks the time, the stub's model calls the tool, then answers from its result.
rules:
  - when: {after_tool: true}
    reply: "In Paris it is {tool_result}."
  - when: {user_contains: [time, clock]}
    reply:
      tool_call: {name: get_current_time, arguments: {timezone: Europe/Paris, asked: "{user_message}"}}
  - when: {user_matches: "^(hi|hello)\\\\b"}
    reply: {text: "Hello!", finish_reason: stop, output_tokens: 2}
  - reply: "I can only tell the time."
"""


def write(tmp_path: Path, text: str, name: str = "replies.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def stub_process(tmp_path: Path) -> Iterator[str]:
    """``python -m jurybox.stubs openai --script replies.yaml`` in its own process; yields its base URL."""
    script = write(tmp_path, RULES)
    process = subprocess.Popen(
        [sys.executable, "-m", "jurybox.stubs", "openai", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else url
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_chat_completions_tool_call_then_an_answer_from_its_result(stub_process: str) -> None:
    client = openai.OpenAI(base_url=stub_process, api_key="test", max_retries=0)
    question = {"role": "user", "content": "What time is it?"}
    first = client.chat.completions.create(model="m", messages=[question])
    (call,) = first.choices[0].message.tool_calls or []
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_current_time"  # type: ignore[union-attr]
    arguments = json.loads(call.function.arguments)  # type: ignore[union-attr]
    assert arguments == {"timezone": "Europe/Paris", "asked": "What time is it?"}
    tool_message = {"role": "tool", "tool_call_id": call.id, "content": "14:05"}
    assistant = first.choices[0].message.model_dump(exclude_none=True)
    second = client.chat.completions.create(model="m", messages=[question, assistant, tool_message])
    assert second.choices[0].message.content == "In Paris it is 14:05."
    hello = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi there"}])
    assert hello.choices[0].message.content == "Hello!"
    assert hello.usage is not None and hello.usage.completion_tokens == 2
    client.close()


def test_the_responses_api_runs_the_same_script(stub_process: str) -> None:
    client = openai.OpenAI(base_url=stub_process, api_key="test", max_retries=0)
    first = client.responses.create(model="m", input="Got the time?")
    (call,) = first.output
    assert call.type == "function_call"
    second = client.responses.create(
        model="m",
        input=[
            {"role": "user", "content": "Got the time?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "09:30"},
        ],
    )
    assert second.output_text == "In Paris it is 09:30."
    assert client.responses.create(model="m", input="weather?").output_text == "I can only tell the time."
    client.close()


async def test_the_responses_adapter_records_the_scripted_call_then_the_answer(tmp_path: Path) -> None:
    script = load_script(
        write(tmp_path, 'replies:\n  - tool_call: {name: get_current_time, arguments: {timezone: UTC}}\n  - "Noon."\n')
    )
    with StubServer("openai", reply=script) as stub:
        target = make_target({"openai": {"model": "m", "base_url": stub.base_url, "api": "responses"}})
        first, second = await run_conversation(target, [RoundSpec("Time?"), RoundSpec("And now?")], session_id="s")
        await target.aclose()
        with pytest.raises(openai.InternalServerError, match="all 2 replies used"):
            openai.OpenAI(base_url=stub.base_url, api_key="t", max_retries=0).responses.create(model="m", input="x")
    assert [(c.name, dict(c.arguments)) for c in first.context.tool_calls] == [
        ("get_current_time", {"timezone": "UTC"})
    ]
    assert second.context.output == "Noon."


def test_anthropic_tool_results_fill_the_template_too(tmp_path: Path) -> None:
    with StubServer("anthropic", reply=load_script(write(tmp_path, RULES))) as stub:
        client = anthropic.Anthropic(base_url=stub.base_url, api_key="test", max_retries=0)
        messages: list[dict[str, object]] = [
            {"role": "user", "content": "time please"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "get_current_time", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "23:59"}]},
        ]
        answer = client.messages.create(model="claude", max_tokens=50, messages=messages)  # type: ignore[arg-type]
        client.close()
    assert answer.content[0].text == "In Paris it is 23:59."  # type: ignore[union-attr]


def test_replies_in_order_repeat_when_asked(tmp_path: Path) -> None:
    script = load_script(write(tmp_path, "replies: [one, two]\nrepeat: true\n"))
    assert [script({"messages": [{"role": "user", "content": "x"}]}).text for _ in range(5)] == [
        "one",
        "two",
        "one",
        "two",
        "one",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("replies: []\n", r"replies.yaml:1: replies: expected a non-empty list"),
        ("replies: [ok]\nrules: []\n", r"replies.yaml:1: \(top\): give exactly one of 'replies'"),
        ("replies:\n  - ok\n  - {txt: hi}\n", r"replies.yaml:3: replies\[1\]\.txt: unknown key; valid: finish_reason"),
        (
            "replies:\n  - tool_calls:\n      - {name: t, arguments: [1]}\n",
            r"replies.yaml:3: replies\[0\]\.tool_calls\[0\]\.arguments: expected a mapping, got list",
        ),
        (
            "rules:\n  - when: {user_matches: '('}\n    reply: x\n",
            r"replies.yaml:2: rules\[0\]\.when\.user_matches: not a",
        ),
        (
            "rules:\n  - when: {after_tool: yes please}\n    reply: x\n",
            r":2: rules\[0\]\.when\.after_tool: expected true",
        ),
        ("rules:\n  - when: {user_said: x}\n    reply: x\n", r":2: rules\[0\]\.when\.user_said: unknown condition"),
        ("rules:\n  - when: {}\n", r"replies.yaml:2: rules\[0\]: expected \{when: \{\.\.\.\}, reply: \.\.\.\}"),
        ("replies:\n  - {finish_reason: stop}\n", r"replies.yaml:2: replies\[0\]: a reply needs text or a tool call"),
        ("replies: [ok\n", r"replies.yaml:2: invalid YAML"),
        ("replies: " + "[" * 300 + "]" * 300 + "\n", r"replies.yaml:1: refused: .*deeper"),
    ],
)
def test_script_errors_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        load_script(write(tmp_path, text))


def test_a_bad_script_stops_the_command_with_the_error_on_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "replies:\n  - tool_call: {arguments: {}}\n")
    done = subprocess.run(
        [sys.executable, "-m", "jurybox.stubs", "openai", "--script", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "replies.yaml:2: replies[0].tool_call: expected {name, arguments} with a tool name" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unmatched_request_is_a_500_naming_the_script(tmp_path: Path) -> None:
    script = load_script(write(tmp_path, "rules:\n  - when: {user_contains: time}\n    reply: noon\n"))
    with StubServer("openai", reply=script) as stub:
        answer = httpx.post(
            f"{stub.base_url}/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
    assert answer.status_code == 500
    assert "no rule matches 'hi'" in answer.json()["error"]["message"]
