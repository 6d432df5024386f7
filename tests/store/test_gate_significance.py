"""``jurybox gate --method significance``: a regression only when the drop is larger than the noise."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import Judgment
from jurybox.store import RegressionPolicy, Store, check_significance, open_store

runner = CliRunner()
NAMES = [f"case-{i:03d}" for i in range(120)]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'gate.db'}"


def _gate(url: str, *args: str, columns: int = 200) -> tuple[int, str]:
    result = runner.invoke(app, ["gate", "suite", *args, "--store", url], env={"COLUMNS": str(columns)})
    return result.exit_code, " ".join(result.output.split())


def _flaky_history(store: Store, runs: int, seed: int) -> dict[str, float]:
    """``runs`` runs, each case passing its LLM judge with its own probability (above the 70% target on average)."""
    rng = random.Random(seed)
    chance = {name: rng.choice([1.0, 1.0, 1.0, 1.0, 0.9, 0.7, 0.5]) for name in NAMES}
    for _ in range(runs):
        record_run(store, "suite", {n: (True, rng.random() < chance[n]) for n in NAMES})
    return chance


def test_a_significant_drop_fails_the_gate(url: str) -> None:
    with open_store(url) as store:
        chance = _flaky_history(store, 5, seed=1)
        rng = random.Random(2)
        # The new version breaks a third of the cases that always passed.
        steady = [n for n in NAMES if chance[n] == 1.0]
        broken = set(steady[: len(steady) // 3])
        record_run(store, "suite", {n: (True, n not in broken and rng.random() < chance[n]) for n in NAMES})
    code, out = _gate(url, "--method", "significance")
    assert code == 1, out
    assert "REGRESSION overall: this run passes" in out and "points fewer than its baseline" in out
    assert "5 baseline runs" in out
    assert "gate: FAILED" in out


def test_noise_passes_or_is_inconclusive_never_a_regression(url: str) -> None:
    with open_store(url) as store:
        chance = _flaky_history(store, 5, seed=3)
        for seed in range(4, 10):  # more runs of the same agent: only noise changes
            rng = random.Random(seed)
            record_run(store, "suite", {n: (True, rng.random() < chance[n]) for n in NAMES})
            run = store.runs.newest("suite", limit=1)[0]
            result = check_significance(store, run.id, RegressionPolicy())
            assert not result.regressions, [m.describe() for m in result.metrics]
            assert {m.state for m in result.metrics} <= {"ok", "inconclusive"}
    code, out = _gate(url, "--method", "significance")
    assert code == 0, out
    assert "gate: passed" in out


def test_too_few_cases_to_tell_is_inconclusive_with_the_size_needed(url: str) -> None:
    few = NAMES[:12]
    with open_store(url) as store:
        for k in range(3):
            record_run(store, "suite", {n: (True, (i + k) % 3 != 0) for i, n in enumerate(few)})
        record_run(store, "suite", {n: (True, i % 2 == 0) for i, n in enumerate(few)})
    # --baseline completed: runs under the 70% LLM target are the baseline too.
    code, out = _gate(url, "--method", "significance", "--baseline", "completed")
    assert code == 0, out
    assert "inconclusive overall: no difference this suite can detect" in out
    assert "cases would be needed to see 5 points" in out


def test_added_and_removed_cases_are_counted_never_failures(url: str) -> None:
    with open_store(url) as store:
        for _ in range(3):
            record_run(store, "suite", {n: (True, True) for n in NAMES})
        # Ten cases retired and ten new ones that all fail: no pair, so no regression.
        kept = {n: (True, True) for n in NAMES[10:]}
        record_run(store, "suite", kept | {f"new-{i}": (True, False) for i in range(10)})
        run = store.runs.newest("suite", limit=1)[0]
        overall = check_significance(store, run.id, RegressionPolicy()).metrics[0]
    assert overall.metric == "overall" and overall.added == 10 and overall.removed == 10
    assert overall.finding.pairs == 110 and overall.state == "ok"
    code, out = _gate(url, "--method", "significance")
    assert code == 0, out
    assert "10 added, 10 removed, 0 undecided (none counted as a failure)" in out


def test_both_methods_together_and_the_default_stays_the_threshold_rule(url: str) -> None:
    with open_store(url) as store:
        _flaky_history(store, 6, seed=5)
    code, out = _gate(url)
    assert "Drops larger than the noise" not in out and "threshold" in out
    code, out = _gate(url, "--method", "threshold", "--method", "significance")
    assert "threshold" in out and "Drops larger than the noise" in out
    code_both, out_both = _gate(url, "--method", "both", "--alpha", "0.01")
    assert code_both == code and "Significance at alpha 0.01" in out_both


def test_no_baseline_run_is_warm_up(url: str) -> None:
    with open_store(url) as store:
        record_run(store, "suite", {n: (True, False) for n in NAMES[:20]})
    code, out = _gate(url, "--method", "significance")
    assert code == 0, out
    assert "warmup overall: no baseline run to compare with (warm-up)" in out
    assert "gate: passed (warm-up)" in out


def test_the_significance_table_reads_at_80_columns(url: str) -> None:
    with open_store(url) as store:
        _flaky_history(store, 4, seed=6)
    result = runner.invoke(app, ["gate", "suite", "--method", "significance", "--store", url], env={"COLUMNS": "80"})
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "suite" not in result.output or result.exit_code in (0, 1)


@pytest.mark.parametrize(("option", "value"), [("--method", "t-test"), ("--alpha", "0"), ("--alpha", "1")])
def test_bad_options_are_usage_errors(url: str, option: str, value: str) -> None:
    with open_store(url) as store:
        record_run(store, "suite", {n: (True, True) for n in NAMES[:5]})
    code, out = _gate(url, option, value)
    assert code == 2 and option in out


def test_errors_and_abstentions_of_the_run_are_shown_apart_never_failures(url: str) -> None:
    with open_store(url) as store:
        for _ in range(3):
            record_run(store, "suite", {n: (True, True) for n in NAMES})
        run_id = store.runs.begin("suite", cases={n: {"prompt": n} for n in NAMES}, judge_model="fake")
        for i, name in enumerate(NAMES):
            record = make_record(name)
            if i < 30:  # a judge outage: a quarter of the cases could not be judged
                record = replace(record, judgment=Judgment.errored("judge down", judge="cascade"), error="down")
            elif i < 35:
                record = replace(record, judgment=Judgment.abstained("no verdict", judge="cascade"))
            store.results.record(run_id, record)
        store.finish_run(run_id)
        result = check_significance(store, run_id, RegressionPolicy(baseline="completed"))
    assert (result.errors, result.abstains) == (30, 5)
    overall = result.metrics[0]
    assert overall.undecided == 35 and overall.finding.pairs == 85 and overall.state == "ok"
    code, out = _gate(url, "--method", "significance", "--run", run_id, "--baseline", "completed")
    assert code == 0, out
    assert "This run: 30 error, 5 abstain (left out, never a pass or a fail)" in out
