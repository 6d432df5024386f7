"""Stub LLM provider servers on 127.0.0.1 speaking the real OpenAI, Anthropic and Ollama wire protocols.

OpenAI: chat completions and the Responses API; Anthropic: messages; Ollama: /api/chat and /api/generate.

For tests and benchmarks without a network: fixed, scripted or computed replies,
latency, injected faults (HTTP errors with Retry-After, dropped connections, slow
replies), a request log, a count of accepted TCP connections, and byte-for-byte
replay of recorded vcrpy cassettes.
"""

from jurybox.stubs._cassettes import RecordedResponse, load_cassette
from jurybox.stubs._replies import PROVIDERS, Fault, Provider, StubReply, StubRequest, StubToolCall
from jurybox.stubs._script import Script, ScriptError, load_script
from jurybox.stubs._server import StubServer

__all__ = [
    "PROVIDERS",
    "Fault",
    "Provider",
    "RecordedResponse",
    "Script",
    "ScriptError",
    "StubReply",
    "StubRequest",
    "StubServer",
    "StubToolCall",
    "load_cassette",
    "load_script",
]
