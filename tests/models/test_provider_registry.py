"""Model providers are plug-ins: one registration says everything a spec, an error hint or the model cache needs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybox.core import KIND_PROVIDER, PluginRegistry
from jurybox.models import (
    FakeModel,
    ModelConfigError,
    ModelSpec,
    RequestRejectedError,
    get_model,
    provider_class,
    provider_info,
    provider_names,
    register_provider,
    shared_model,
)


class TinyModel(FakeModel):
    """A provider of one's own: any class built as ``cls(model, **options)``."""

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__("ok", name=f"tiny:{model}")
        self.options = options


@pytest.fixture
def tiny() -> Iterator[str]:
    """The ``tiny`` provider, registered for one test."""
    register_provider("tiny", TinyModel, key_variable="TINY_API_KEY", base_url_variable="TINY_BASE_URL")
    yield "tiny"
    PluginRegistry.default().unregister(KIND_PROVIDER, "tiny")


def test_a_registered_provider_builds_its_models_from_a_spec(tiny: str) -> None:
    model = get_model("tiny:small", timeout=3.0)

    assert isinstance(model, TinyModel) and model.name == "tiny:small"
    assert model.options["timeout"] == 3.0
    assert ModelSpec.parse("tiny:small@http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"
    assert provider_names()[:3] == ["openai", "anthropic", "ollama"] and "tiny" in provider_names()
    assert provider_info("tiny").variables == ("TINY_API_KEY", "TINY_BASE_URL")


def test_its_variables_key_the_shared_model(tiny: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINY_API_KEY", "first")
    first = shared_model("tiny:small")
    monkeypatch.setenv("TINY_API_KEY", "second")  # a new key must build a new model, not reuse the old one

    assert shared_model("tiny:small") is not first
    assert shared_model("tiny:small") is shared_model("tiny:small")


def test_its_key_variable_is_named_when_the_key_is_refused(tiny: str) -> None:
    refused = RequestRejectedError("refused", provider="tiny", status=401)
    assert refused.hint() == "check TINY_API_KEY"
    assert RequestRejectedError("refused", provider="openai", status=401).hint() == "check OPENAI_API_KEY"
    assert RequestRejectedError("refused", provider="nobody", status=403).hint() == "check the API key"


def test_a_misspelt_provider_gets_the_closest_name() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ModelSpec.parse("opnai:gpt-4o-mini")
    assert str(caught.value) == (
        "unknown model provider 'opnai' (did you mean 'openai'?) in 'opnai:gpt-4o-mini'; "
        "valid providers: openai:, anthropic:, ollama:"
    )


def test_a_provider_whose_sdk_is_missing_names_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zz_needs_provider_sdk.py").write_text("import zz_provider_sdk\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_provider("needy", "zz_needs_provider_sdk:Model", extra="needy", requires=("zz_provider_sdk",))
    try:
        assert ModelSpec.parse("needy:m").provider == "needy"  # known without importing it
        with pytest.raises(ModelConfigError, match="needs zz_provider_sdk, which is not installed"):
            get_model("needy:m")
    finally:
        PluginRegistry.default().unregister(KIND_PROVIDER, "needy")


def test_the_built_in_providers_load_only_when_named() -> None:
    registry = PluginRegistry.default()
    for name in ("openai", "anthropic", "ollama"):
        plugin = registry.get(KIND_PROVIDER, name)
        assert plugin is not None and plugin.lazy and plugin.distribution == "jurybox"
    assert provider_info("openai").key_variable == "OPENAI_API_KEY"
    assert provider_info("ollama").base_url_variable == "OLLAMA_HOST" and provider_info("ollama").key_variable is None
    from jurybox.models import OllamaModel  # the class names still import, each on demand

    assert OllamaModel is provider_class("ollama") and "jurybox.models._ollama" in sys.modules
