"""Which judge model a run uses, from the command line, the suite file or the environment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import TOY_HEADER

from jurybox.models import FakeModel
from jurybox.suites import JudgeModelError, SuiteError, load_suite, resolve_judge_model

CASES = "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: x}]\n"


@pytest.fixture(autouse=True)
def no_env_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_nothing_configured_means_no_model() -> None:
    assert resolve_judge_model(None) is None


def test_a_base_url_names_an_openai_compatible_server() -> None:
    model = resolve_judge_model("http://127.0.0.1:8000/v1#qwen2.5", concurrency=64)

    assert model is not None and model.name == "openai:qwen2.5"
    assert model.base_url == "http://127.0.0.1:8000/v1"  # type: ignore[attr-defined]
    assert model.concurrency == 64  # type: ignore[attr-defined]  # never fewer slots than cases in flight
    assert resolve_judge_model("http://127.0.0.1:8000/v1#qwen2.5", concurrency=64) is model  # one client


def test_provider_model_at_base_url_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    model = resolve_judge_model("ollama:llama3.1@http://127.0.0.1:11434")
    assert model is not None and model.name == "ollama:llama3.1"

    monkeypatch.setenv("JURYBOX_JUDGE_MODEL", "openai:gpt-4o-mini@http://127.0.0.1:9/v1")
    from_env = resolve_judge_model(None)
    assert from_env is not None and from_env.name == "openai:gpt-4o-mini"
    assert resolve_judge_model(None, "ollama:llama3.1@http://127.0.0.1:11434") is model  # the suite's wins


def test_a_model_object_is_used_as_is() -> None:
    model = FakeModel("x")
    assert resolve_judge_model(model) is model


def test_an_unusable_spec_is_a_clear_error(toy_suite: Callable[[str], Path]) -> None:
    with pytest.raises(JudgeModelError, match="unknown model provider 'gpt'"):
        resolve_judge_model("gpt:4")

    path = toy_suite(TOY_HEADER + "judge_model: nope:model\n" + CASES)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert (caught.value.line, caught.value.field) == (5, "judge_model")

    with pytest.raises(JudgeModelError, match="no API key"):  # from the caller: not the file's fault
        load_suite(toy_suite(TOY_HEADER + CASES, "b.yaml"), judge_model="openai:gpt-4o-mini")
