"""Real provider cassettes replay through the official SDKs, chunk by chunk, without touching the network."""

from __future__ import annotations

import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from vcr.errors import CannotOverwriteExistingCassetteException

from jurybox.pytest_plugin import CassetteSettings, NetworkBlockedError, use_cassette

DATA = Path(__file__).resolve().parents[1] / "data" / "cassettes" / "pytest_plugin"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
            "required": ["location"],
        },
    },
}


class ConnectAudit:
    """Counts every socket connect at the C level (a ``sys`` audit hook), below any Python patching."""

    def __init__(self) -> None:
        self.recording = False
        self.addresses: list[Any] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.recording and event == "socket.connect":
            self.addresses.append(args[1])


_AUDIT = ConnectAudit()  # audit hooks cannot be removed, so one per process, switched on per test


@pytest.fixture
def connects() -> Iterator[list[Any]]:
    """Socket connects attempted during the test (empty means the network was never touched)."""
    _AUDIT.addresses.clear()
    _AUDIT.recording = True
    try:
        yield _AUDIT.addresses
    finally:
        _AUDIT.recording = False


def copy_cassette(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copyfile(DATA / name, target)
    return target


def replay(path: Path) -> Any:
    return use_cassette(path, record_mode="none", settings=CassetteSettings())


def test_audit_hook_sees_real_connects(connects: list[Any]) -> None:
    # Control: without it, "no connects seen" would prove nothing.
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()):
        pass
    assert connects, "the audit hook must record a real connect"


def test_openai_sse_tool_call_stream_replays_chunk_by_chunk(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__test_chat_tools_streaming__sse.yaml", tmp_path)
    with replay(path) as cassette:
        client = openai.OpenAI(api_key="sk-no-key-needed", max_retries=0)
        stream = client.chat.completions.create(
            model="gpt-3.5-turbo",
            stream=True,
            messages=[{"role": "user", "content": "What's the weather like in San Francisco?"}],
            tools=[WEATHER_TOOL],  # type: ignore[list-item]
        )
        chunks: list[Any] = list(stream)
    arguments = "".join(
        call.function.arguments or ""
        for chunk in chunks
        for call in chunk.choices[0].delta.tool_calls or []
        if call.function is not None
    )
    assert len(chunks) == 8
    assert chunks[0].choices[0].delta.tool_calls[0].function.name == "get_current_weather"
    assert arguments == '{"location":"San Francisco"}'
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert cassette.play_count == 1
    assert connects == []


async def test_openai_gzip_response_replays_to_async_client(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__test_chat_tool_calls__gzip.yaml", tmp_path)
    with replay(path):
        client = openai.AsyncOpenAI(api_key="sk-no-key-needed", max_retries=0)
        completion = await client.chat.completions.create(
            model="gpt-3.5-turbo",
            messages=[
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "get_current_weather", "arguments": '{"location": "San Francisco"}'},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "1",
                    "content": "The weather in San Francisco is 70 degrees and sunny.",
                },
            ],
        )
    assert completion.choices[0].message.content
    assert "70" in completion.choices[0].message.content
    assert connects == []


@pytest.mark.filterwarnings("ignore:The model:DeprecationWarning")  # the recorded model is being retired
def test_anthropic_sse_stream_replays(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("llm-anthropic__test_prompt.yaml", tmp_path)
    with replay(path):
        client = anthropic.Anthropic(api_key="sk-ant-no-key-needed", max_retries=0)
        events = list(
            client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=8192,
                extra_body={"temperature": 1.0},  # the 2.x SDK has no temperature keyword
                stream=True,
                messages=[
                    {"role": "user", "content": [{"type": "text", "text": "Two names for a pet pelican, be brief"}]}
                ],
            )
        )
    text = "".join(
        event.delta.text for event in events if event.type == "content_block_delta" and event.delta.type == "text_delta"
    )
    assert events[0].type == "message_start"
    assert events[-1].type == "message_stop"
    assert text == "- Captain\n- Scoop"
    assert connects == []


def test_anthropic_gzip_sse_tool_use_stream_replays(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("llm-anthropic__test_stream_events_tool_calls__sse.yaml", tmp_path)
    with replay(path):
        client = anthropic.Anthropic(api_key="sk-ant-no-key-needed", max_retries=0)
        with client.messages.stream(
            model="claude-haiku-4-5-20251001",
            max_tokens=8192,
            extra_body={"temperature": 1.0},
            tools=[
                {
                    "name": "pelican_name_generator",
                    "description": "",
                    "input_schema": {"properties": {}, "type": "object"},
                }
            ],
            messages=[{"role": "user", "content": [{"type": "text", "text": "Generate one name for a pet pelican"}]}],
        ) as stream:
            message = stream.get_final_message()
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    assert [block.name for block in tool_uses] == ["pelican_name_generator"]
    assert message.stop_reason == "tool_use"
    assert connects == []


def test_ollama_ndjson_stream_replays_line_by_line_through_httpx(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__ollama_streaming_chat__ndjson.yaml", tmp_path)
    body = {
        "model": "llama3",
        "messages": [{"role": "user", "content": "Tell me a joke about OpenTelemetry"}],
        "stream": True,
        "format": "",
        "options": {},
        "keep_alive": None,
    }
    with (
        replay(path),
        httpx.Client() as client,
        client.stream("POST", "http://127.0.0.1:11434/api/chat", json=body) as response,
    ):
        raw_chunks = list(response.iter_raw())
    lines = [line for line in b"".join(raw_chunks).split(b"\n") if line.strip()]
    # One NDJSON object per network chunk, as a live Ollama server sends them.
    assert len(raw_chunks) == len(lines) > 10
    assert b'"done":true' in lines[-1]
    assert connects == []


def test_ollama_plain_chat_matches_body_regardless_of_key_order(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__ollama_chat.yaml", tmp_path)
    # Same JSON as recorded, keys in another order and compact separators.
    content = (
        b'{"keep_alive":null,"options":{},"format":"","stream":false,'
        b'"messages":[{"content":"Tell me a joke about OpenTelemetry","role":"user"}],"model":"llama3"}'
    )
    with replay(path), httpx.Client() as client:
        response = client.post("http://127.0.0.1:11434/api/chat", content=content)
    assert response.status_code == 200
    assert response.json()["message"]["role"] == "assistant"
    assert connects == []


def test_a_different_prompt_never_matches_and_never_reaches_the_network(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__ollama_chat.yaml", tmp_path)
    body = {
        "model": "llama3",
        "messages": [{"role": "user", "content": "A different prompt"}],
        "stream": False,
        "format": "",
        "options": {},
        "keep_alive": None,
    }
    with replay(path), httpx.Client() as client, pytest.raises(CannotOverwriteExistingCassetteException):
        client.post("http://127.0.0.1:11434/api/chat", json=body)
    assert connects == []


def test_guard_blocks_raw_sockets_in_mode_none(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__ollama_chat.yaml", tmp_path)
    with replay(path) as cassette, pytest.raises(NetworkBlockedError, match="record mode 'none'"):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    assert cassette.jurybox_guard.attempts == [("127.0.0.1", 9)]
    assert connects == []


def test_guard_lets_allowed_hosts_through(tmp_path: Path, connects: list[Any]) -> None:
    path = copy_cassette("openllmetry__ollama_chat.yaml", tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as server:
        host, port = server.getsockname()[:2]
        settings = CassetteSettings(allowed_hosts=(f"{host}:{port}",))
        with use_cassette(path, record_mode="none", settings=settings), socket.create_connection((host, port)):
            pass
    assert len(connects) == 1
