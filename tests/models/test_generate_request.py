"""One request per model call: ``complete(GenerateRequest)``, the keyword ``generate`` built on it once,
wrappers that hand the request on unchanged, cache keys that did not move, and tools on the wire."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.llm import correctness
from jurybox.models import (
    ChatMessage,
    FakeModel,
    GenerateRequest,
    JudgeModel,
    JudgeModelBase,
    MeteredModel,
    ModelResponse,
    ProviderError,
    ResponseCache,
    ToolSpec,
    as_judge_model,
    cache_key,
    get_model,
    resolve_model,
)
from jurybox.stubs import Provider, StubReply, StubServer, StubToolCall

SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["PASS", "FAIL"]}}, "required": ["verdict"]}
WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)

# Keys written by jurybox before the request carried tools (computed on commit abacad0): a cache
# filled then must still be hit, so these must never change.
KNOWN_KEYS = [
    (
        "openai:gpt-4o-mini",
        {"api_key": "k"},
        GenerateRequest(
            (ChatMessage("system", "You grade answers."), ChatMessage("user", "Is 2+2=4? Answer PASS or FAIL."))
        ),
        "819de74cd06b6558c37dac3ea14bc15a40980f503f563fe6c1c018941c67326f",
    ),
    (
        "openai:m@http://127.0.0.1:8000/v1",
        {"params": {"top_p": 0.9}},
        GenerateRequest(({"role": "user", "content": "Grade: café ✓"},), 0.7, 64, SCHEMA, 3),  # type: ignore[arg-type]
        "20adeed263d76eb815e030105b3ce7682cd08ceba03df155d58238b2d071a140",
    ),
    (
        "anthropic:claude-haiku-4-5",
        {"api_key": "k", "structured_output": False},
        GenerateRequest((ChatMessage("user", "hi"),), max_tokens=10),
        "a3b6006f5a6ec8c7559a813d7ff8300ff57ef9d1d9a21a23e972612bfadb4e24",
    ),
    (
        "ollama:llama3.1",
        {},
        GenerateRequest((ChatMessage("user", "hi"),), seed=1),
        "bcbd837f20f235e9be8febae103ca7522d4321c0bb1693d123548fdac69c4187",
    ),
    (
        "openai:judge@http://127.0.0.1:8001/v1,http://127.0.0.1:8002/v1",
        {},
        GenerateRequest((ChatMessage("user", "hi"),)),
        "3a294593e2bd204fd25a68ca3d978e5696564e6752f0ad74607e4374883cf0d9",
    ),
]


@pytest.mark.parametrize(("spec", "options", "request_", "key"), KNOWN_KEYS, ids=[k[0] for k in KNOWN_KEYS])
def test_cache_keys_are_the_ones_written_before(
    spec: str, options: dict[str, Any], request_: GenerateRequest, key: str
) -> None:
    model = get_model(spec, cache=False, **options)
    material = model.cache_key_material(request_)
    assert "tools" not in material
    assert cache_key(material) == key


messages = st.lists(
    st.builds(ChatMessage, st.sampled_from(["system", "user", "assistant"]), st.text(max_size=40)),
    min_size=1,
    max_size=4,
)
schemas = st.none() | st.dictionaries(st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=5), max_size=3)
temperatures = st.floats(min_value=0, max_value=2, allow_nan=False)
optional_ints = st.none() | st.integers(min_value=0, max_value=10_000)


@settings(max_examples=60, deadline=None)
@given(messages, temperatures, optional_ints, schemas, optional_ints, st.booleans())
def test_generate_is_complete_with_the_request_spelled_as_keywords(
    listed: list[ChatMessage],
    temperature: float,
    max_tokens: int | None,
    schema: dict[str, Any] | None,
    seed: int | None,
    as_dicts: bool,
) -> None:
    fake = FakeModel("ok")
    sent = [m.to_dict() for m in listed] if as_dicts else listed
    asyncio.run(fake.generate(sent, temperature=temperature, max_tokens=max_tokens, json_schema=schema, seed=seed))
    explicit = GenerateRequest(tuple(listed), temperature, max_tokens, schema, seed)
    (received,) = fake.requests
    assert received == explicit
    model = get_model("openai:m@http://127.0.0.1:9/v1", cache=False)
    assert cache_key(model.cache_key_material(received)) == cache_key(model.cache_key_material(explicit))


async def test_wrappers_hand_the_request_on_unchanged() -> None:
    fake = FakeModel("ok")
    metered = MeteredModel(MeteredModel(fake))
    request = GenerateRequest((ChatMessage("user", "hi"),), 0.3, 12, SCHEMA, 5, (WEATHER,))
    await metered.complete(request)
    assert fake.requests == [request] and fake.requests[0] is request


async def test_a_fleet_and_its_endpoints_send_the_request_they_were_given() -> None:
    with StubServer("openai", reply="PASS") as one, StubServer("openai", reply="PASS") as two:
        fleet = get_model(f"openai:judge@{one.base_url},{two.base_url}", cache=False)
        request = GenerateRequest((ChatMessage("user", "grade"),), 0.0, 7, None, 11, (WEATHER,))
        await asyncio.gather(fleet.complete(request), fleet.complete(request))
        await fleet.aclose()
    bodies = [r.body for r in (*one.requests, *two.requests)]
    assert len(bodies) == 2
    for body in bodies:
        assert body["messages"] == [{"role": "user", "content": "grade"}]
        assert (body["max_tokens"], body["seed"]) == (7, 11)
        assert body["tools"] == [{"type": "function", "function": WEATHER.to_dict()}]


class OldStyleModel:
    """A model written before ``complete``: only ``generate`` with the four keywords."""

    name = "old:style"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> ModelResponse:
        self.seen.append({"messages": messages, "temperature": temperature, "schema": json_schema, "seed": seed})
        return ModelResponse('{"verdict": "PASS", "reasoning": "fine"}', model=self.name)


async def test_a_model_with_only_generate_still_judges_and_is_metered() -> None:
    from jurybox import Context
    from jurybox.models import start_case_spend

    old = OldStyleModel()
    assert not isinstance(old, JudgeModel) and isinstance(as_judge_model(old), JudgeModel)
    assert resolve_model(old).name == "old:style"  # type: ignore[arg-type]
    judgment = await correctness(model=old)(Context(input="2+2?", output="4", expected="4"))  # type: ignore[arg-type]
    assert judgment.error is None and old.seen and isinstance(old.seen[0]["messages"][0], ChatMessage)
    metered = MeteredModel(old)
    case = start_case_spend()
    await metered.generate([{"role": "user", "content": "hi"}], seed=3)
    assert old.seen[-1]["seed"] == 3 and (metered.total.calls, case.calls) == (1, 1)
    assert repr(metered) == f"MeteredModel({old!r})"


def test_something_that_is_no_model_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="got int"):
        as_judge_model(3)
    with pytest.raises(TypeError, match="got object"):
        resolve_model(object())  # type: ignore[arg-type]


def test_every_jurybox_model_is_one_base_with_one_generate() -> None:
    from jurybox.models import FleetModel, ProviderModel

    for cls in (FakeModel, MeteredModel, ProviderModel, FleetModel):
        assert issubclass(cls, JudgeModelBase)
        assert "generate" not in vars(cls)  # the keyword spelling is written once, in JudgeModelBase


# ---------------------------------------------------------------- tools


def test_tools_are_checked_and_frozen() -> None:
    assert ToolSpec.coerce({"name": "f"}).parameters == {"type": "object", "properties": {}}
    with pytest.raises(ValueError, match="needs a name"):
        ToolSpec("")
    with pytest.raises(ValueError, match="unknown tool field"):
        ToolSpec.coerce({"name": "f", "args": {}})
    with pytest.raises(TypeError, match="JSON schema object"):
        ToolSpec("f", parameters=[])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names a tool twice"):
        GenerateRequest((ChatMessage("user", "x"),), tools=(WEATHER, {"name": "get_weather"}))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        WEATHER.parameters["type"] = "array"  # type: ignore[index]


def test_tools_change_the_key_and_a_request_without_them_does_not() -> None:
    model = get_model("openai:m@http://127.0.0.1:9/v1", cache=False)
    plain = GenerateRequest((ChatMessage("user", "x"),))
    with_tools = GenerateRequest((ChatMessage("user", "x"),), tools=(WEATHER,))
    assert model.cache_key_material(with_tools)["tools"] == [WEATHER.to_dict()]
    assert cache_key(model.cache_key_material(plain)) != cache_key(model.cache_key_material(with_tools))


CALL = StubToolCall("get_weather", {"city": "Paris"}, id="call_1")


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
async def test_tools_go_out_in_each_provider_s_format_and_the_calls_come_back(provider: Provider, stream: bool) -> None:
    with StubServer(provider, reply=StubReply("", tool_calls=(CALL,))) as stub:
        key = {} if provider == "ollama" else {"api_key": "k"}
        model = get_model(f"{provider}:m", base_url=stub.base_url, cache=False, stream=stream, **key)
        response = await model.generate([{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER])
        await model.aclose()
    body = stub.requests[-1].body
    if provider == "anthropic":
        assert body["tools"] == [
            {"name": "get_weather", "description": "The weather in a city.", "input_schema": dict(WEATHER.parameters)}
        ]
        assert "tool_choice" not in body
    else:
        assert body["tools"] == [{"type": "function", "function": WEATHER.to_dict()}]
    (call,) = response.tool_calls
    assert (call.name, dict(call.arguments)) == ("get_weather", {"city": "Paris"})
    if provider != "ollama":  # Ollama's tool calls carry no id
        assert call.id == "call_1"


async def test_a_request_with_tools_and_a_schema_on_anthropic_forces_no_tool() -> None:
    with StubServer("anthropic", reply='{"verdict": "PASS"}') as stub:
        model = get_model("anthropic:m", base_url=stub.base_url, api_key="k", cache=False)
        response = await model.generate([{"role": "user", "content": "x"}], json_schema=SCHEMA, tools=[WEATHER])
        await model.aclose()
    body = stub.requests[-1].body
    assert [t["name"] for t in body["tools"]] == ["get_weather"] and "tool_choice" not in body
    assert response.text == '{"verdict": "PASS"}' and response.tool_calls == ()


async def test_a_cached_reply_keeps_its_tool_calls(tmp_path: Any) -> None:
    with StubServer("openai", reply=StubReply("", tool_calls=(CALL,))) as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        first = await model.generate([{"role": "user", "content": "x"}], tools=[WEATHER])
        again = await model.generate([{"role": "user", "content": "x"}], tools=[WEATHER])
        await model.aclose()
    assert len(stub.requests) == 1 and again.cached
    assert again.tool_calls == first.tool_calls
    cache = ResponseCache(tmp_path / "c.sqlite3")
    assert first.cache_key is not None
    assert (cache.material(first.cache_key) or {})["tools"] == [WEATHER.to_dict()]


# "" is left out: OpenAI sends empty arguments for a tool that takes none, read as {}.
not_objects = st.one_of(
    st.integers(),
    st.text(min_size=1, max_size=10),
    st.lists(st.integers(), max_size=3),
    st.booleans(),
    st.floats(allow_nan=False),
)


@settings(max_examples=40, deadline=None)
@given(not_objects, st.booleans())
def test_tool_call_arguments_that_are_not_a_json_object_are_an_unusable_reply(value: Any, as_text: bool) -> None:
    from jurybox.models._openai_wire import from_completion

    arguments: Any = json.dumps(value) if as_text else value
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": arguments}}],
    }
    with pytest.raises(ProviderError, match="unusable response"):
        from_completion({"choices": [{"message": message, "finish_reason": "tool_calls"}]})


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4), st.integers(1, 5))
def test_streamed_tool_call_arguments_are_put_back_together(arguments: dict[str, Any], pieces: int) -> None:
    from jurybox.models._openai_wire import from_chunks

    text = json.dumps(arguments)
    size = -(-len(text) // pieces)
    deltas = [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": ""}}]
    deltas += [{"index": 0, "function": {"arguments": text[i : i + size]}} for i in range(0, len(text), size)]
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [d]}}]} for d in deltas]
    (call,) = from_chunks(chunks).tool_calls
    assert (call.name, dict(call.arguments), call.id) == ("f", arguments, "c1")


@pytest.mark.parametrize(
    "calls",
    [
        "not a list",
        [{"function": {"arguments": {}}}],  # no name
        [{"function": "f"}],
        [["f", {}]],
    ],
)
def test_malformed_tool_calls_from_ollama_and_anthropic_are_unusable_replies(calls: Any) -> None:
    from jurybox.models._anthropic import _from_message
    from jurybox.models._ollama import _from_lines

    line = {"message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": True}
    with pytest.raises(ProviderError, match="unusable response"):
        _from_lines([line])
    block = {"type": "tool_use", "id": "t", "name": None, "input": calls}
    with pytest.raises(ProviderError, match="unusable response"):
        _from_message({"content": [block]}, structured=False)
