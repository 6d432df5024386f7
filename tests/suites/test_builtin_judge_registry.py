"""Every built-in judge is registered by its own decorator, with the tier its judges say they run in."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from jurybox.suites import TIER_DETERMINISTIC, TIER_LLM, TIER_SIMILARITY, JudgeFactory, JudgeRegistry, tier_of

BUILT_IN = {
    TIER_DETERMINISTIC: {
        "command",
        "contains",
        "equals",
        "file_contains",
        "file_exists",
        "json_schema",
        "matches",
        "max_cost",
        "max_latency",
        "same_python",
        "similar",
        "starts_with",
        "tool_calls",
        "valid_json",
    },
    TIER_SIMILARITY: {"similarity"},
    TIER_LLM: {
        "clarification",
        "correctness",
        "coverage",
        "faithfulness",
        "pairwise",
        "ranking",
        "relevance",
        "rubric",
    },
}
# The fewest arguments that build each judge.
ARGUMENTS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "command": ([[sys.executable, "-c", "pass"]], {}),
    "contains": (["x"], {}),
    "file_contains": (["a.txt"], {"text": "x"}),
    "file_exists": (["a.txt"], {}),
    "json_schema": ([{"type": "object"}], {}),
    "matches": (["x"], {}),
    "max_cost": ([1.0], {}),
    "max_latency": ([1.0], {}),
    "starts_with": (["x"], {}),
    "tool_calls": ([["get_listings"]], {}),
    "coverage": ([["price"]], {}),
    "rubric": ([["clear"]], {}),
}


def built_ins() -> dict[str, JudgeFactory]:
    entries = {entry.name: entry for entry in JudgeRegistry.default()}
    return {name: entries[name] for names in BUILT_IN.values() for name in names}


def test_every_built_in_is_registered_in_its_tier() -> None:
    registry = JudgeRegistry.default()

    for tier, names in BUILT_IN.items():
        for name in names:
            entry = registry.get(name)
            assert entry is not None, f"{name} is not registered"
            assert entry.tier == tier, name
            assert entry.factory.__module__.startswith(("jurybox.judges.", "jurybox.llm.")), name


@pytest.mark.parametrize("name", sorted(name for names in BUILT_IN.values() for name in names))
def test_a_built_judge_runs_in_its_registered_tier(name: str) -> None:
    entry = built_ins()[name]
    args, kwargs = ARGUMENTS.get(name, ([], {}))

    judge = entry.factory(*args, **kwargs)

    assert tier_of(judge) == entry.tier
    assert entry.threshold is None or judge.threshold == entry.threshold  # the registry's default is the factory's


def test_every_built_in_option_is_documented() -> None:
    for entry in built_ins().values():
        assert entry.summary, entry.name
        undocumented = [o.name for o in (*entry.options, *filter(None, [entry.extra_options])) if not o.doc]
        assert undocumented == [], f"{entry.name}: document {undocumented} in its docstring's Args"


def test_the_suite_threshold_applies_to_the_llm_judges_only() -> None:
    takes = {entry.name for entry in built_ins().values() if entry.suite_threshold}

    assert takes == BUILT_IN[TIER_LLM]
    assert built_ins()["relevance"].threshold == 0.5 and built_ins()["coverage"].threshold == 1.0
    assert built_ins()["similar"].threshold == 0.85 and built_ins()["similarity"].threshold == 0.8
