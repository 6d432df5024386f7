"""Prices, costs and the per-run UsageTracker: unknown prices stay unknown, never 0."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurybox.models import (
    DEFAULT_PRICES,
    FakeModel,
    ModelResponse,
    Price,
    Usage,
    UsageTracker,
    _prices,
    cost_of,
    get_model,
    get_price,
    load_prices,
    set_price,
)
from jurybox.stubs import StubReply, StubServer


@pytest.fixture(autouse=True)
def _fresh_prices(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_prices, "_state", _prices._PriceState())
    monkeypatch.chdir(tmp_path)  # no project pyproject.toml in sight unless a test writes one


def test_known_models_and_their_dated_snapshots() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_of("openai", "gpt-4o-mini", usage) == pytest.approx(0.15 + 0.60)
    assert cost_of("openai", "gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.75)
    assert cost_of("anthropic", "claude-sonnet-4-5-20250929", usage) == pytest.approx(18.0)
    assert get_price("openai", "gpt-4o") == Price(2.5, 10.0)
    # A different model that merely starts like a known one is not priced like it.
    assert get_price("openai", "gpt-4o-audio-preview") is None
    assert all(spec.split(":")[0] in {"openai", "anthropic"} for spec in DEFAULT_PRICES)


def test_unknown_price_or_missing_tokens_is_none_not_zero() -> None:
    assert cost_of("openai", "my-finetune", Usage(10, 10)) is None
    assert cost_of("ollama", "llama3.1", Usage(10, 10)) is None
    assert cost_of("openai", "gpt-4o-mini", Usage(None, 10)) is None


def test_users_extend_and_override_prices() -> None:
    set_price("ollama:*", input=0, output=0)
    set_price("openai:gpt-4o-mini", input=1, output=2)
    assert cost_of("ollama", "llama3.1:8b", Usage(500, 500)) == 0.0
    assert cost_of("openai", "gpt-4o-mini", Usage(1_000_000, 1_000_000)) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="provider:model"):
        set_price("gpt-4o", input=1, output=1)
    with pytest.raises(ValueError, match=">= 0"):
        set_price("openai:x", input=-1, output=1)


def test_prices_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jurybox.prices]\n"openai:house-model" = { input = 2.0, output = 4.0 }\n'
        '"ollama:*" = { input = 0, output = 0 }\n',
        encoding="utf-8",
    )
    set_price("ollama:qwen3", input=1, output=1)  # set in code before the file is read: code wins
    assert get_price("openai", "house-model") == Price(2.0, 4.0)  # found in the working folder
    assert cost_of("ollama", "llama3.1", Usage(1, 1)) == 0.0
    assert get_price("ollama", "qwen3") == Price(1.0, 1.0)


def test_project_prices_are_read_once_per_folder_and_code_still_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jurybox.prices]\n"openai:house-model" = { input = 2.0, output = 4.0 }\n', encoding="utf-8"
    )
    reads: list[Path] = []
    real_read = _prices._read_prices
    monkeypatch.setattr(_prices, "_read_prices", lambda path: reads.append(path) or real_read(path))
    sub = tmp_path / "sub" / "deeper"
    sub.mkdir(parents=True)
    for _ in range(3):
        assert get_price("openai", "house-model") == Price(2.0, 4.0)
    monkeypatch.chdir(sub)  # another working folder, same nearest pyproject.toml: not read again
    assert get_price("openai", "house-model") == Price(2.0, 4.0)
    assert reads == [tmp_path / "pyproject.toml"]
    # A price set in code after the lookups is seen at once (remembered answers are dropped).
    set_price("openai:house-model", input=1.0, output=1.0)
    assert get_price("openai", "house-model") == Price(1.0, 1.0)
    assert get_price("openai", "house-model-2024-07-18") == Price(1.0, 1.0)


def test_project_prices_follow_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.jurybox.prices]\n"openai:house-model" = { input = 2.0, output = 4.0 }\n', encoding="utf-8"
    )
    monkeypatch.chdir(project)
    assert get_price("openai", "house-model") == Price(2.0, 4.0)
    monkeypatch.chdir(elsewhere)  # no pyproject.toml up the tree from here (tmp_path has none)
    assert get_price("openai", "house-model") is None


def test_bad_pyproject_price_names_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[tool.jurybox.prices]\n"openai:x" = { input = "cheap", output = 1 }\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.toml: \[tool.jurybox.prices\] 'openai:x': input and output"):
        load_prices(path)
    path.write_text('[tool.jurybox.prices]\n"openai:x" = { in = 1 }\n', encoding="utf-8")
    with pytest.raises(ValueError, match="'openai:x': expected"):
        load_prices(path)


async def test_tracker_sums_calls_hits_tokens_known_cost_and_unknown_calls(tmp_path: Path) -> None:
    tracker = UsageTracker()
    reply = StubReply("ok", input_tokens=1000, output_tokens=100)
    with StubServer("openai", reply=reply) as stub:
        priced = get_model("openai:gpt-4o-mini", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        unpriced = get_model("openai:house-model", base_url=stub.base_url, cache=False)
        with tracker:
            await priced.generate([{"role": "user", "content": "a"}])
            await priced.generate([{"role": "user", "content": "a"}])  # cache hit
            await asyncio.gather(*(unpriced.generate([{"role": "user", "content": "b"}]) for _ in range(2)))
        await unpriced.generate([{"role": "user", "content": "outside"}])  # tracker not active
    total = tracker.total
    # Every call counts, the cache hit too (with its original call's tokens, at no cost).
    assert (total.calls, total.attempts, total.cache_hits) == (4, 3, 1)
    assert (total.input_tokens, total.output_tokens) == (4000, 400)
    assert total.cost == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    assert total.unpriced_calls == 2 and not total.cost_known
    assert tracker.by_model["openai:house-model"].unpriced_calls == 2
    assert tracker.to_dict()["total"]["cost_known"] is False


async def test_nested_trackers_and_fake_models_are_counted() -> None:
    outer, inner = UsageTracker(), UsageTracker()
    fake = FakeModel([ModelResponse("x", model="fake:model", usage=Usage(3, 4), cost=0.5), "y"])
    with outer:
        await fake.generate([{"role": "user", "content": "one"}])
        with inner.activate():
            await fake.generate([{"role": "user", "content": "two"}])
    assert (outer.total.calls, inner.total.calls) == (2, 1)
    assert outer.total.cost == 0.5 and outer.total.unpriced_calls == 1


async def test_a_loops_calls_share_one_price_lookup_until_prices_are_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lookups: list[tuple[str, str]] = []
    looking_up = _prices.get_price

    def counted(provider: str, model: str) -> Price | None:
        lookups.append((provider, model))
        return looking_up(provider, model)

    monkeypatch.setattr(_prices, "get_price", counted)
    reply = StubReply("ok", input_tokens=1000, output_tokens=0)
    with StubServer("openai", reply=reply) as stub:
        model = get_model("openai:house-model", base_url=stub.base_url, cache=False)
        asked = [{"role": "user", "content": "a"}]
        first = await asyncio.gather(*(model.generate(asked) for _ in range(5)))
        assert [r.cost for r in first] == [None] * 5  # no price known: unknown, not 0
        assert lookups == [("openai", "house-model")]  # five calls, one lookup
        set_price("openai:house-model", input=2.0, output=0.0)
        after = await model.generate(asked)
        assert after.cost == pytest.approx(1000 * 2.0 / 1e6)  # set while the loop runs: seen at once
        load_prices(_write_prices(tmp_path, 3.0))
        assert (await model.generate(asked)).cost == pytest.approx(1000 * 3.0 / 1e6)
        monkeypatch.setattr(_prices, "_state", _prices._PriceState())  # the tables replaced whole
        assert (await model.generate(asked)).cost is None
    assert len(lookups) == 4


def _write_prices(folder: Path, input_price: float) -> Path:
    path = folder / "prices.toml"
    path.write_text(
        f'[tool.jurybox.prices]\n"openai:house-model" = {{ input = {input_price}, output = 0 }}\n', encoding="utf-8"
    )
    return path


def test_each_event_loop_looks_the_price_up_from_its_own_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.jurybox.prices]\n"openai:house-model" = { input = 2.0, output = 0 }\n', encoding="utf-8"
    )
    reply = StubReply("ok", input_tokens=1000, output_tokens=0)
    asked = [{"role": "user", "content": "a"}]
    with StubServer("openai", reply=reply) as stub:
        model = get_model("openai:house-model", base_url=stub.base_url, cache=False)
        monkeypatch.chdir(project)
        assert asyncio.run(model.generate(asked)).cost == pytest.approx(1000 * 2.0 / 1e6)
        monkeypatch.chdir(tmp_path)  # a new loop (a new evaluate() or run) sees the new folder
        assert asyncio.run(model.generate(asked)).cost is None


_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, 5000), st.integers(0, 5000)),
        st.tuples(
            st.just("set"), st.sampled_from(["openai:house-model", "openai:house-*", "openai:other"]), st.floats(0, 50)
        ),
        st.tuples(st.just("load"), st.floats(0, 50), st.just(0)),
        st.tuples(st.just("swap"), st.just(0), st.just(0)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS)
def test_a_price_memo_never_prices_a_call_otherwise_than_a_fresh_lookup(
    steps: list[tuple[str, Any, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever prices are set, loaded or replaced between calls, the memo's cost is cost_of's.
    monkeypatch.setattr(_prices, "_state", _prices._PriceState())
    memo = _prices.PriceMemo()
    for kind, first, second in steps:
        if kind == "call":
            usage = Usage(first, second)
            assert memo.cost("openai", "house-model", usage) == cost_of("openai", "house-model", usage)
        elif kind == "set":
            set_price(first, input=second, output=second / 2)
        elif kind == "load":
            load_prices(_write_prices(tmp_path, first))
        else:
            monkeypatch.setattr(_prices, "_state", _prices._PriceState())
