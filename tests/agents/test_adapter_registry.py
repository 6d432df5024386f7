"""Agent adapters are plug-ins: ``agent: {KEY: settings}`` builds through the adapter registered as KEY."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from jurybox.agents import (
    ADAPTERS,
    AgentAdapter,
    AgentReply,
    TargetConfigError,
    adapter_names,
    make_target,
    register_adapter,
)
from jurybox.core import KIND_AGENT, PluginRegistry
from jurybox.suites import SuiteError, load_suite


class Parrot:
    def __init__(self, name: str, word: str) -> None:
        self.name = name
        self.word = word

    async def respond(self, message: str, session_id: str) -> AgentReply:
        return AgentReply(text=f"{self.word}: {message}")

    async def close_session(self, session_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


def parrot(settings: Mapping[str, Any], *, name: str | None, base_dir: Path | None) -> Parrot:
    """A plain build function is an adapter too."""
    word = settings.get("word")
    if not isinstance(word, str):
        raise ValueError(f"word: expected a string, got {word!r}")
    return Parrot(name or "parrot", word)


@pytest.fixture
def adapters() -> Iterator[None]:
    register_adapter("parrot", parrot, aliases=("polly",))
    register_adapter("broken_build", lambda settings, *, name, base_dir: object())
    register_adapter(
        "keyed", AgentAdapter(build=lambda settings, **_: Parrot("k", settings["word"]), keys={"mood": {}})
    )
    yield
    for name in ("parrot", "broken_build", "keyed"):
        PluginRegistry.default().unregister(KIND_AGENT, name)


def test_a_registered_adapter_builds_the_target(adapters: None) -> None:
    target = make_target({"parrot": {"word": "squawk"}, "name": "bird"})

    assert target.name == "bird"
    assert asyncio.run(target.respond("hi", "s1")).text == "squawk: hi"
    assert make_target({"polly": {"word": "hi"}}).name == "parrot"  # by its alias
    assert make_target({"keyed": {"word": "w"}, "mood": "calm"}).name == "k"  # a key it reads beside its own
    assert adapter_names()[:4] == list(ADAPTERS) == ["python", "openai", "http", "mcp"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"parrot": {"word": 3}}, "agent.parrot: word: expected a string, got 3"),
        ({"parrot": "squawk"}, "agent.parrot: expected a mapping of settings, got 'squawk'"),
        ({"parrot": {"word": "w"}, "mood": "x"}, "agent: unknown key(s) mood for a parrot agent; valid: name, parrot"),
        ({"broken_build": {}}, "agent.broken_build: the adapter returned object, not a Target"),
        ({"parot": {"word": "w"}}, "'parot': did you mean 'parrot'?"),
        ({"parrot": {"word": "w"}, "http": {"url": "http://x"}}, "(found: http, parrot)"),
    ],
)
def test_a_bad_spec_names_the_field(adapters: None, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(TargetConfigError) as caught:
        make_target(spec)
    assert message in str(caught.value)


def test_an_adapter_whose_module_cannot_load_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "zz_adapter_needs_sdk.py").write_text("import zz_adapter_sdk\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_adapter("needy", "zz_adapter_needs_sdk:ADAPTER", extra="needy")
    try:
        with pytest.raises(TargetConfigError, match=r"^agent\.needy: the needy agent adapter needs zz_adapter_sdk"):
            make_target({"needy": {}})
    finally:
        PluginRegistry.default().unregister(KIND_AGENT, "needy")


def test_a_suite_uses_a_registered_adapter_and_reports_its_errors_by_line(adapters: None, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        "name: s\nagent: {parrot: {word: hi}}\ncases: [{name: a, prompt: hi, judges: [{contains: hi}]}]\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: s\nagent:\n  parrot: {word: 5}\ncases: [{name: a, prompt: hi, judges: [{contains: hi}]}]\n",
        encoding="utf-8",
    )

    assert load_suite(good).agent == {"parrot": {"word": "hi"}}
    with pytest.raises(SuiteError) as caught:
        load_suite(bad)
    assert str(caught.value).endswith("bad.yaml:3: agent.parrot: word: expected a string, got 5")
