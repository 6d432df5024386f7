"""The judge registry: what a factory's registration records, the decorator, tiers of judge objects."""

from __future__ import annotations

from typing import Any

import pytest

from jurybox import judge_factory as top_level_judge_factory
from jurybox.core import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_LLM_OPERATIONS,
    TIER_SIMILARITY,
    TIERS,
    JudgeFactory,
    JudgeOption,
    JudgeRegistry,
    judge_factory,
    tier_of,
)
from jurybox.core._docstrings import argument_docs


def graded(reference: str | None = None, *, threshold: float = 0.6, name: str = "graded", **settings: Any) -> Any:
    """Grade the output against a reference.

    More prose that is not the summary.

    Args:
        reference: The reference answer. None uses the case's expected
            answer, e.g. from the suite.
        threshold: Pass at this score or above (default 0.6).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, ...).

    Raises:
        ValueError: never: this line is not an option.
    """
    return lambda ctx: True


def test_tiers_run_cheapest_first() -> None:
    assert TIERS == (TIER_DETERMINISTIC, TIER_SIMILARITY, TIER_LLM_OPERATIONS, TIER_LLM)
    assert TIERS == ("deterministic", "similarity", "llm_operations", "llm_judge")  # seed 003's middle tier included


def test_describe_reads_signature_and_docstring_once() -> None:
    entry = JudgeFactory.describe("graded", graded, tier=TIER_LLM)

    assert entry.tier == TIER_LLM and entry.summary == "Grade the output against a reference."
    assert entry.threshold == 0.6 and entry.suite_threshold  # takes a threshold: the suite's applies
    assert entry.options == (
        JudgeOption("reference", "The reference answer."),
        JudgeOption("threshold", "Pass at this score or above (default 0.6)."),
        JudgeOption("name", "The judge's name in reports."),
    )
    assert entry.extra_options == JudgeOption("**settings", "Shared options (retries, samples, ...).")
    assert entry.parameters() == ["reference", "threshold", "name"]
    assert entry.accepts("reference") and entry.accepts("retries")  # **settings takes any other keyword


def test_a_factory_without_threshold_or_catch_all() -> None:
    def plain(text: str, *, name: str | None = None) -> Any:
        return lambda ctx: text in ctx.output

    entry = JudgeFactory.describe("plain", plain, tier=TIER_DETERMINISTIC)

    assert entry.threshold is None and not entry.suite_threshold
    assert [o.doc for o in entry.options] == ["", ""]  # no docstring: no docs, still the options
    assert entry.accepts("text") and not entry.accepts("retries")


def test_a_judge_can_keep_its_own_threshold_from_the_suites() -> None:
    entry = JudgeFactory.describe("graded", graded, tier=TIER_SIMILARITY, suite_threshold=False)

    assert entry.threshold == 0.6 and not entry.suite_threshold


def test_registration_mistakes_are_refused() -> None:
    with pytest.raises(ValueError, match="tier must be one of deterministic, similarity, llm_operations, llm_judge"):
        JudgeFactory.describe("x", graded, tier="llm")
    with pytest.raises(ValueError, match="takes no 'threshold' option"):
        JudgeFactory.describe("x", lambda: None, tier=TIER_LLM, suite_threshold=True)
    with pytest.raises(TypeError, match="not callable"):
        JudgeFactory.describe("x", "graded", tier=TIER_LLM)  # type: ignore[arg-type]


def test_the_decorator_registers_in_the_default_registry_and_returns_the_factory() -> None:
    @judge_factory
    def zz_registry_bare(*, name: str = "bare") -> Any:
        return lambda ctx: True

    @top_level_judge_factory("zz_registry_named", tier=TIER_LLM)
    def named(*, threshold: float = 0.4) -> Any:
        return lambda ctx: True

    default = JudgeRegistry.default()
    assert default is JudgeRegistry.default()
    bare, registered = default.get("zz_registry_bare"), default.get("zz_registry_named")
    assert bare is not None and bare.factory is zz_registry_bare and bare.tier == TIER_DETERMINISTIC
    assert registered is not None and registered.factory is named and registered.tier == TIER_LLM
    assert registered.threshold == 0.4 and registered.suite_threshold
    assert "zz_registry_named" in default.names()


def test_a_copy_changes_without_changing_the_default() -> None:
    registry = JudgeRegistry.default().copy()
    registry.register("zz_registry_private", graded, tier=TIER_LLM)

    assert "zz_registry_private" in registry and len(registry) == len(JudgeRegistry.default()) + 1
    assert "zz_registry_private" not in JudgeRegistry.default()
    assert [entry.name for entry in registry if entry.name == "zz_registry_private"] == ["zz_registry_private"]


def test_a_judge_object_names_its_tier() -> None:
    class ModelBacked:
        tier = TIER_LLM

    class Labelled:
        kind = "llm"  # a label only: the tier is what places a judge

    class Odd:
        tier = "gold"

    assert tier_of(ModelBacked()) == TIER_LLM
    assert tier_of(Labelled()) == TIER_DETERMINISTIC
    assert tier_of(Odd(), default=TIER_SIMILARITY) == TIER_SIMILARITY
    assert tier_of(lambda ctx: True) == TIER_DETERMINISTIC


def test_argument_docs_reads_google_args_sections() -> None:
    assert argument_docs(None) == {} and argument_docs("No sections.") == {}
    docs = argument_docs(
        """Summary.

        Args:
            mode (str): How it matches. ``strict``: exactly.
                ``loose``: roughly.
            weights: Name -> weight (e.g. ``{"a": 1}``), or names.
            **options: Anything else.
        Returns:
            value: not an argument.
        """
    )
    assert docs == {
        "mode": "How it matches.",
        "weights": 'Name -> weight (e.g. ``{"a": 1}``), or names.',
        "**options": "Anything else.",
    }
