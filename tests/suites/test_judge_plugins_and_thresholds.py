"""A suite's own judges by name (``plugins:``), and whose pass mark each judge of a suite is built with."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER

from jurybox._cli.run_messages import print_plan
from jurybox.core import Status
from jurybox.engine import SuiteRunner
from jurybox.suites import TIER_DETERMINISTIC, TIER_LLM, SuiteError, load_suite, plan_run

PLUGIN = '''
from jurybox import Context, judge, judge_factory


@judge_factory(tier="deterministic")
def plugin_mentions(word: str, *, name: str | None = None):
    """Pass when the output mentions ``word``.

    Args:
        word: The word to look for.
        name: The judge's name in reports.
    """

    @judge(name=name or f"mentions({word})")
    def check(ctx: Context) -> bool:
        return word in ctx.output

    return check
'''

JUDGES = """\
cases:
  - name: a
    prompt: "What are my listings?"
    judges:
      - relevance
      - coverage: {topics: [price]}
      - faithfulness
      - similarity
      - similar: {reference: x}
      - correctness: {threshold: 0.9}
      - valid_json
"""


def with_defaults(threshold: float) -> str:
    header = TOY_HEADER.replace("retries: 0}", f"retries: 0, threshold: {threshold}}}")
    assert header != TOY_HEADER
    return header


def pass_marks(path: Path) -> dict[str, float | None]:
    return {j.label: j.threshold for j in load_suite(path).cases[0].judges}


async def test_a_plugin_judge_is_usable_by_name(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    (tmp_path / "word_judges.py").write_text(PLUGIN, encoding="utf-8")
    text = (
        TOY_HEADER
        + """\
plugins: [word_judges]
cases:
  - name: mentions
    prompt: "What are my listings?"
    judges:
      - plugin_mentions: {word: Beach House}
      - plugin_mentions: Cabin
"""
    )

    suite = load_suite(toy_suite(text))

    case = suite.cases[0]
    assert [(j.label, j.key, j.tier) for j in case.judges] == [
        ("plugin_mentions", "mentions(Beach House)", TIER_DETERMINISTIC),
        ("plugin_mentions", "mentions(Cabin)", TIER_DETERMINISTIC),
    ]
    result = await SuiteRunner(suite).run()
    assert result.records[0].status is Status.PASS

    misspelt = toy_suite(text.replace("- plugin_mentions: Cabin", "- plugin_mention: Cabin"))
    with pytest.raises(SuiteError, match="unknown judge 'plugin_mention' \\(did you mean 'plugin_mentions'\\?\\)"):
        load_suite(misspelt)


def test_a_plugin_that_cannot_be_imported_is_a_problem_with_its_line(
    toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    (tmp_path / "broken_judges.py").write_text(
        "from jurybox import judge_factory\n\n@judge_factory(tier='llm')\ndef broken(): ...\n", encoding="utf-8"
    )
    text = TOY_HEADER + "plugins:\n  - no_such_plugin_module\n  - broken_judges\n" + JUDGES

    with pytest.raises(SuiteError) as caught:
        load_suite(toy_suite(text))

    problems = {(p.line, p.field): p.message for p in caught.value.problems}
    assert "cannot import plugin 'no_such_plugin_module': ModuleNotFoundError" in problems[(6, "plugins[0]")]
    assert "tier must be one of deterministic, similarity, llm_operations, llm_judge" in problems[(7, "plugins[1]")]


def test_without_a_suite_threshold_each_judge_keeps_its_own_default(toy_suite: Callable[[str], Path]) -> None:
    marks = pass_marks(toy_suite(TOY_HEADER + JUDGES))

    # The same pass marks as in Python: relevance(...) passes at 0.5, coverage(...) needs every topic.
    assert marks == {
        "relevance": 0.5,
        "coverage": 1.0,
        "faithfulness": 0.8,
        "similarity": 0.8,
        "similar": 0.85,
        "correctness": 0.9,
        "valid_json": None,
    }


def test_a_suite_threshold_applies_to_the_judges_that_take_it(toy_suite: Callable[[str], Path]) -> None:
    marks = pass_marks(toy_suite(with_defaults(0.7) + JUDGES))

    assert marks == {
        "relevance": 0.7,
        "coverage": 0.7,
        "faithfulness": 0.7,
        "similarity": 0.8,  # a cosine: only its entry's threshold changes it
        "similar": 0.85,
        "correctness": 0.9,  # the entry's own threshold wins
        "valid_json": None,
    }


def test_round_over_case_over_suite_threshold(toy_suite: Callable[[str], Path]) -> None:
    text = (
        with_defaults(0.7)
        + """\
cases:
  - name: a
    threshold: 0.6
    criteria: "Lists the properties"
    rounds:
      - prompt: "What are my listings?"
        threshold: 0.4
        judges: [relevance]
      - prompt: "And the first one?"
        judges: [relevance]
  - name: b
    prompt: hi
    criteria: "Says hello"
"""
    )

    first, second = load_suite(toy_suite(text)).cases

    assert {j.key: j.threshold for j in first.judges} == {
        "round1.relevance": 0.4,
        "round2.relevance": 0.6,
        "criteria": 0.6,
    }
    assert [(j.key, j.tier, j.threshold) for j in second.judges] == [("criteria", TIER_LLM, 0.7)]


def test_dry_run_shows_each_judges_pass_mark(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(TOY_HEADER + JUDGES))
    plan = plan_run(suite, suite.cases)
    out = io.StringIO()

    print_plan(plan, Console(file=out, width=250))

    assert plan.cases[0].thresholds["relevance"] == 0.5 and "valid_json" not in plan.cases[0].thresholds
    text = out.getvalue()
    assert "relevance ≥0.5 (SKIPPED)" in text and "coverage ≥1 (SKIPPED)" in text  # no judge model configured
    assert "semantic_similarity ≥0.8" in text and "valid_json ≥" not in text


def test_a_python_judge_runs_in_the_tier_it_names(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    (tmp_path / "tiered_checks.py").write_text(
        "class ModelBacked:\n"
        "    tier = 'llm_judge'\n"
        "    name = 'model_backed'\n"
        "    def __call__(self, ctx):\n"
        "        return True\n\n"
        "model_backed = ModelBacked()\n",
        encoding="utf-8",
    )
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges:\n      - python: tiered_checks:model_backed\n"

    (built,) = load_suite(toy_suite(text)).cases[0].judges

    assert built.tier == TIER_LLM and built.llm_calls == 1
