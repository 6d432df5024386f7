"""get_model's providers against stub servers speaking the real wire protocols."""

from __future__ import annotations

import asyncio
import json

import pytest

from jurybox.models import (
    AnthropicModel,
    FakeModel,
    JudgeModel,
    ModelConfigError,
    ModelNotConfigured,
    OllamaModel,
    OpenAIModel,
    get_model,
    resolve_model,
    set_default_model,
)
from jurybox.models._ollama import ollama_host
from jurybox.stubs import StubServer

PROMPT = [{"role": "system", "content": "You are a strict judge."}, {"role": "user", "content": "Grade: 2+2=4"}]
SCHEMA = {"title": "Verdict", "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
PROVIDERS = ["openai", "anthropic", "ollama"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
async def test_plain_text_reply_with_usage_latency_finish_and_raw(provider: str, stream: bool) -> None:
    with StubServer(provider, reply="The answer is correct.") as stub:  # type: ignore[arg-type]
        model = get_model(f"{provider}:judge-model", base_url=stub.base_url, stream=stream, cache=False)
        response = await model.generate(PROMPT, max_tokens=50)
    assert response.text == "The answer is correct."
    assert response.model == f"{provider}:judge-model"
    assert response.usage.input_tokens and response.usage.output_tokens
    assert response.latency > 0
    assert response.finish_reason in {"stop", "end_turn"}
    assert response.raw
    assert response.cost is None  # "judge-model" has no price: unknown, not 0
    sent = stub.requests[0].body
    assert sent["model"] == "judge-model"
    assert bool(sent.get("stream")) is stream


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_structured_output_uses_each_providers_feature(provider: str) -> None:
    with StubServer(provider, reply='{"score": 0.9}') as stub:  # type: ignore[arg-type]
        model = get_model(f"{provider}:m", base_url=stub.base_url, cache=False)
        response = await model.generate(PROMPT, json_schema=SCHEMA)
    assert json.loads(response.text) == {"score": 0.9}
    sent = stub.requests[0].body
    if provider == "openai":
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "Verdict"
        assert sent["response_format"]["json_schema"]["schema"] == SCHEMA
    elif provider == "anthropic":
        assert sent["tools"][0]["input_schema"] == SCHEMA
        assert sent["tool_choice"] == {"type": "tool", "name": sent["tools"][0]["name"]}
        assert response.finish_reason == "tool_use"
    else:
        assert sent["format"] == SCHEMA


async def test_structured_output_off_sends_plain_request() -> None:
    with StubServer("openai", reply='{"score": 1}') as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, structured_output=False)
        await model.generate(PROMPT, json_schema=SCHEMA)
    assert "response_format" not in stub.requests[0].body


async def test_openai_compatible_server_without_json_schema_falls_back_to_text() -> None:
    def reply(body: dict[str, object]) -> str:
        if "response_format" in body:
            raise ValueError("unsupported")
        return '{"score": 1}'

    with StubServer("openai", reply=reply) as stub:
        stub.fail(
            400,
            body={
                "error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}
            },
        )
        model = get_model("openai:local", base_url=stub.base_url, cache=False)
        first = await model.generate(PROMPT, json_schema=SCHEMA)
        second = await model.generate(PROMPT, json_schema=SCHEMA)
    assert first.text == second.text == '{"score": 1}'
    assert ["response_format" in r.body for r in stub.requests] == [True, False, False]


async def test_request_fields_per_provider() -> None:
    with StubServer("openai") as o, StubServer("anthropic") as a, StubServer("ollama") as local:
        await get_model("openai:m", base_url=o.base_url, cache=False).generate(PROMPT, max_tokens=7, seed=3)
        await get_model("anthropic:m", base_url=a.base_url, cache=False).generate(PROMPT, max_tokens=7)
        await get_model("ollama:m", host=local.base_url, cache=False).generate(PROMPT, max_tokens=7, seed=3)
    assert o.requests[0].body["max_tokens"] == 7 and o.requests[0].body["seed"] == 3
    assert o.requests[0].body["temperature"] == 0
    assert a.requests[0].body["system"] == "You are a strict judge."
    assert [m["role"] for m in a.requests[0].body["messages"]] == ["user"]
    assert a.requests[0].body["max_tokens"] == 7
    assert local.requests[0].body["options"] == {"temperature": 0.0, "num_predict": 7, "seed": 3}
    assert local.requests[0].body["stream"] is False


async def test_anthropic_without_max_tokens_sends_the_default() -> None:
    with StubServer("anthropic") as stub:
        await get_model("anthropic:m", base_url=stub.base_url, cache=False).generate(PROMPT)
    assert stub.requests[0].body["max_tokens"] == 4096


async def test_connections_stay_within_concurrency() -> None:
    with StubServer("openai", reply="ok", latency=0.1) as stub:
        model = get_model("openai:m", base_url=stub.base_url, concurrency=4, cache=False)
        prompts = [[{"role": "user", "content": f"case {i}"}] for i in range(40)]
        await asyncio.gather(*(model.generate(p) for p in prompts))
    assert len(stub.requests) == 40
    assert stub.max_in_flight == 4
    assert stub.connections <= 4


async def test_many_connections_are_split_over_pools_and_still_bounded() -> None:
    # A generous latency, so all 40 calls of a round overlap at the stub even on a loaded machine.
    with StubServer("openai", reply="ok", latency=0.4) as stub:
        model = get_model("openai:m", base_url=stub.base_url, concurrency=40, cache=False)
        await asyncio.gather(*(model.generate([{"role": "user", "content": f"{i}"}]) for i in range(120)))
    state = next(iter(model._states.values()))
    assert [lane.size for lane in state.lanes] == [20, 20]
    assert stub.max_in_flight == 40
    assert stub.connections <= 40


async def test_a_cancelled_call_gives_its_slot_back() -> None:
    with StubServer("openai", reply="ok") as stub:
        model = get_model("openai:m", base_url=stub.base_url, concurrency=1, cache=False)
        stub.slow(5.0)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(model.generate(PROMPT), timeout=0.2)
        state = next(iter(model._states.values()))
        assert state.limiter.in_flight == 0 and state.lanes[0].in_flight == 0
        assert (await model.generate(PROMPT)).text == "ok"


def test_a_model_works_across_event_loops() -> None:
    # evaluate() may run each call in its own asyncio.run(); the model keeps a client per loop.
    with StubServer("ollama", reply="ok") as stub:
        model = get_model("ollama:m", host=stub.base_url, cache=False)
        first = asyncio.run(model.generate(PROMPT))
        second = asyncio.run(model.generate(PROMPT))
    assert first.text == second.text == "ok"


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(ModelConfigError, match=r"unknown model provider 'gemini'.*openai:, anthropic:, ollama:"):
        get_model("gemini:pro")
    with pytest.raises(ModelConfigError, match="provider:model"):
        get_model("gpt-4o")


def test_missing_key_names_the_environment_variable() -> None:
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        get_model("openai:gpt-4o-mini")
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic:claude-haiku-4-5")


def test_keys_and_base_urls_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    openai_model = get_model("openai:gpt-4o-mini")
    assert isinstance(openai_model, OpenAIModel) and openai_model.max_tokens_param == "max_completion_tokens"
    anthropic_model = get_model("anthropic:claude-haiku-4-5")
    assert isinstance(anthropic_model, AnthropicModel) and anthropic_model.base_url == "http://127.0.0.1:9"
    ollama_model = get_model("ollama:llama3.1:8b")
    assert isinstance(ollama_model, OllamaModel)
    assert (ollama_model.model, ollama_model.base_url) == ("llama3.1:8b", "http://127.0.0.1:11500")


def test_ollama_host_forms() -> None:
    assert ollama_host("localhost") == "http://localhost:11434"
    assert ollama_host("https://ollama.example.com") == "https://ollama.example.com:443"
    assert ollama_host("http://10.0.0.5:8080/") == "http://10.0.0.5:8080"


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ModelConfigError, match="concurrency"):
        get_model("ollama:m", concurrency=0)
    with pytest.raises(ModelConfigError, match="unexpected keyword"):
        get_model("ollama:m", temprature=0)


def test_resolve_model(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelNotConfigured, match="JURYBOX_JUDGE_MODEL"):
        resolve_model(None)
    monkeypatch.setenv("JURYBOX_JUDGE_MODEL", "ollama:qwen3:4b")
    model = resolve_model(None)
    assert model.name == "ollama:qwen3:4b"
    assert resolve_model("ollama:qwen3:4b") is model  # one shared instance per spec
    fake = FakeModel("ok")
    assert resolve_model(fake) is fake
    set_default_model(fake)
    try:
        assert resolve_model(None) is fake
    finally:
        set_default_model(None)
    assert isinstance(model, JudgeModel)
    with pytest.raises(TypeError):
        resolve_model(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", ["direct", "httpx"])
async def test_openai_schema_copies_are_shared_for_read_only_schemas_only(transport: str) -> None:
    from types import MappingProxyType

    from jurybox.models._openai_wire import schema_format

    frozen = MappingProxyType(
        {**SCHEMA, "properties": MappingProxyType({"score": MappingProxyType({"type": "number"})})}
    )
    assert schema_format(frozen) is schema_format(frozen)  # copied into plain dicts once
    from jurybox.models import GenerateRequest

    request = GenerateRequest(messages=({"role": "user", "content": "x"},), json_schema=frozen)
    assert request.json_schema is frozen  # so every call of a judge meets the same object
    copied = GenerateRequest(messages=({"role": "user", "content": "x"},), json_schema=dict(SCHEMA)).json_schema
    assert type(copied) is MappingProxyType and copied == SCHEMA
    assert type(schema_format(frozen)["schema"]["properties"]) is dict

    mutable = json.loads(json.dumps(SCHEMA))
    with StubServer("openai", reply='{"score": 0.9}') as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, http_transport=transport)
        await model.generate(PROMPT, json_schema=frozen)
        await model.generate(PROMPT, json_schema=mutable)
        mutable["required"] = ["score", "reasoning"]  # a mutable schema is read again on every call
        await model.generate(PROMPT, json_schema=mutable)
    sent = [r.body["response_format"]["json_schema"]["schema"] for r in stub.requests]
    assert sent[0] == SCHEMA and sent[1] == SCHEMA
    assert sent[2]["required"] == ["score", "reasoning"]
