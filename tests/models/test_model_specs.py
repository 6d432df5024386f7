"""The model-spec grammar (``ModelSpec``) and the one per-process cache of built models (``shared_model``)."""

from __future__ import annotations

import pytest

from jurybox.models import (
    DEFAULT_CONCURRENCY,
    ModelConfigError,
    ModelSpec,
    get_model,
    parse_spec,
    resolve_model,
    shared_model,
)

SERVER = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("text", "provider", "model", "base_url", "canonical"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None, "openai:gpt-4o-mini"),
        ("ollama:llama3.1:8b", "ollama", "llama3.1:8b", None, "ollama:llama3.1:8b"),
        ("  anthropic:claude-haiku-4-5\n", "anthropic", "claude-haiku-4-5", None, "anthropic:claude-haiku-4-5"),
        # An @ that does not start a URL is part of the model name (Vertex-style versions).
        ("anthropic:claude-3-5-sonnet@20240620", "anthropic", "claude-3-5-sonnet@20240620", None, None),
        ("openai:qwen2.5@http://127.0.0.1:8000/v1/", "openai", "qwen2.5", "http://127.0.0.1:8000/v1", None),
        ("ollama:llama3.1@http://127.0.0.1:11434", "ollama", "llama3.1", "http://127.0.0.1:11434", None),
        ("openai:m@https://llm.example/v1?version=2", "openai", "m", "https://llm.example/v1?version=2", None),
        ("http://127.0.0.1:8000/v1#qwen2.5", "openai", "qwen2.5", "http://127.0.0.1:8000/v1", "openai:qwen2.5@http://127.0.0.1:8000/v1"),
        ("https://llm.example/v1", "openai", "default", "https://llm.example/v1", "openai:default@https://llm.example/v1"),
        ("http://127.0.0.1:8000/v1#", "openai", "default", "http://127.0.0.1:8000/v1", "openai:default@http://127.0.0.1:8000/v1"),
    ],
)  # fmt: skip
def test_every_form_parses_and_its_canonical_form_round_trips(
    text: str, provider: str, model: str, base_url: str | None, canonical: str | None
) -> None:
    spec = ModelSpec.parse(text)

    assert (spec.provider, spec.model, spec.base_url) == (provider, model, base_url)
    assert spec.name == f"{provider}:{model}"
    assert str(spec) == (canonical or text.strip().rstrip("/"))
    assert ModelSpec.parse(str(spec)) == spec
    assert parse_spec(text) == (provider, model)


def test_spellings_of_one_model_are_one_spec() -> None:
    spellings = [
        "http://127.0.0.1:8000/v1#m",
        "openai:m@http://127.0.0.1:8000/v1",
        "openai:m@http://127.0.0.1:8000/v1/",
    ]
    assert len({ModelSpec.parse(text) for text in spellings}) == 1
    assert ModelSpec("openai", "m", "http://127.0.0.1:8000/v1/") == ModelSpec.parse(spellings[0])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpt-4o", r"model spec 'gpt-4o' must look like 'provider:model' with provider one of openai:, anthropic:"),
        ("", r"must look like 'provider:model'.*http://host:port/v1#model"),
        ("openai:", r"model spec 'openai:' must look like 'provider:model'"),
        ("openai:@http://127.0.0.1:9/v1", r"must look like 'provider:model'"),
        ("gemini:pro", r"unknown model provider 'gemini' in 'gemini:pro'; valid providers: openai:, anthropic:, "),
        ("gpt:4@http://127.0.0.1:9/v1", r"unknown model provider 'gpt'"),
        (
            "openai:m@http://",
            r"base URL 'http://' in model spec 'openai:m@http://' must look like http://host:port/path",
        ),
        ("http:///v1#m", r"model spec 'http:///v1#m' is a URL without a host"),
    ],
)
def test_a_bad_spec_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ModelConfigError, match=message):
        ModelSpec.parse(text)


def test_a_spec_built_directly_is_checked_too() -> None:
    with pytest.raises(ModelConfigError, match="unknown model provider 'nope'"):
        ModelSpec("nope", "m")
    with pytest.raises(ModelConfigError, match="base URL 'localhost:8000'"):
        ModelSpec("openai", "m", "localhost:8000")


def test_get_model_takes_the_server_from_the_spec_and_builds_a_new_model_each_time() -> None:
    model = get_model(f"openai:m@{SERVER}")
    assert (model.name, model.base_url) == ("openai:m", SERVER)
    assert get_model(f"{SERVER}#m").base_url == SERVER
    assert get_model(ModelSpec("ollama", "m", "http://127.0.0.1:9")).base_url == "http://127.0.0.1:9"
    assert get_model(f"openai:m@{SERVER}", base_url=SERVER + "/").base_url == SERVER  # the same server twice
    assert get_model(f"openai:m@{SERVER}") is not model  # options may hold the caller's objects: never shared

    with pytest.raises(ModelConfigError, match=r"the spec names a server and base_url='http://other/v1' another"):
        get_model(f"openai:m@{SERVER}", base_url="http://other/v1")


def test_one_model_per_spec_and_concurrency_in_the_process() -> None:
    model = shared_model(f"openai:shared@{SERVER}")

    assert model.concurrency == DEFAULT_CONCURRENCY
    assert shared_model(f"{SERVER}#shared") is model  # another spelling of the same model
    assert shared_model(ModelSpec("openai", "shared", SERVER), min_concurrency=4) is model  # the default covers 4
    assert resolve_model(f"openai:shared@{SERVER}/") is model

    wide = shared_model(f"openai:shared@{SERVER}", min_concurrency=64)
    assert wide is not model and wide.concurrency == 64
    assert shared_model(f"{SERVER}#shared", min_concurrency=64) is wide


def test_a_failed_build_is_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        shared_model("openai:needs-a-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert shared_model("openai:needs-a-key").name == "openai:needs-a-key"
