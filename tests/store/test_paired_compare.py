"""Paired statistics wherever two stored runs meet: ``store.paired``, ``jurybox compare --json`` and three runs at once.

Unknown is never zero: a case one run lacks is added or removed, ERROR and
ABSTAIN are counted apart, and the number of pairs is always part of the answer.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import Judgment
from jurybox.store import JUDGE_IDENTITIES_KEY, TRIALS_KEY, Store, open_store
from jurybox.store._paired import _trials as trial_counts

runner = CliRunner()
NAMES = [f"case-{i:03d}" for i in range(60)]


def _compare_json(url: str, *runs: str) -> dict[str, object]:
    result = runner.invoke(app, ["compare", *runs, "--store", url, "--json"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    loaded: dict[str, object] = json.loads(result.output)
    return loaded


def _run_with(store: Store, records: list[object], *, config: dict[str, object] | None = None) -> str:
    run_id = store.runs.begin("paired", cases={r.case: {"prompt": r.case} for r in records}, judge_model="fake")  # type: ignore[attr-defined]
    if config:
        store.runs.update_config(run_id, config)
    for record in records:
        store.results.record(run_id, record)  # type: ignore[arg-type]
    store.finish_run(run_id)
    return run_id


def test_sides_read_outcomes_tiers_judges_verdicts_and_trials(store: Store) -> None:
    errored = replace(make_record("broken"), judgment=Judgment.errored("judge down", judge="cascade"), error="down")
    abstained = replace(make_record("unsure"), judgment=Judgment.abstained("no verdict", judge="cascade"))
    repeated = replace(make_record("repeated", llm=False), metadata={TRIALS_KEY: {"passes": 3, "trials": 5}})
    run_id = _run_with(
        store, [make_record("good"), make_record("det-fails", deterministic=False), errored, abstained, repeated]
    )
    read = store.paired.sides(run_id)
    good, det = read.sides["good"], read.sides["det-fails"]
    assert good.passed is True and good.score == pytest.approx(0.9)
    assert good.tiers == {"deterministic": 1.0, "llm_judge": pytest.approx(0.9)}
    assert good.judges == {"deterministic/contains": 1.0, "llm_judge/correctness": pytest.approx(0.9)}
    assert good.verdicts == {
        "deterministic": True,
        "deterministic/contains": True,
        "llm_judge": True,
        "llm_judge/correctness": True,
    }
    # The cascade stopped at the deterministic tier: the LLM tier is not a fail, it is absent.
    assert det.passed is False and "llm_judge" not in det.verdicts
    assert read.sides["broken"].passed is None and read.sides["unsure"].passed is None
    assert read.errors == {"broken"} and read.abstains == {"unsure"}
    assert read.sides["repeated"].trials == (3, 5) and good.trials is None
    assert read.tiers == {"deterministic", "llm_judge"}


def test_compare_json_pairs_cases_and_never_counts_the_unknown(store: Store, store_url: str) -> None:
    # A: every case passes. B: 20 of the first 50 fail, 3 error, 2 abstain; the last 10 cases are gone and 4 are new.
    a = _run_with(store, [make_record(n) for n in NAMES])
    b_records = []
    for i, name in enumerate(NAMES[:50]):
        record = make_record(name, llm=i >= 20)
        if 45 <= i < 48:
            record = replace(record, judgment=Judgment.errored("judge down", judge="cascade"), error="down")
        elif i >= 48:
            record = replace(record, judgment=Judgment.abstained("no verdict", judge="cascade"))
        b_records.append(record)
    b_records += [make_record(f"new-{i}") for i in range(4)]
    b = _run_with(store, b_records)
    data = _compare_json(store_url, a, b)
    paired = data["paired"]
    assert isinstance(paired, dict)
    rate = paired["pass_rate"]
    assert rate["pairs"] == 45 and paired["pairs"] == 45
    assert rate["only_a"] == 20 and rate["only_b"] == 0 and rate["changed"] == 20
    assert rate["p_value"] == pytest.approx(mcnemar([[25, 20], [0, 0]], exact=True).pvalue, abs=1e-12)
    assert rate["verdict"] == "worse" and rate["interval"]["high"] < 0
    assert sorted(paired["added"]) == [f"new-{i}" for i in range(4)]
    assert sorted(paired["removed"]) == NAMES[50:]
    assert len(paired["undecided"]) == 5
    assert paired["undecided_counts"] == {"a": {"error": 0, "abstain": 0}, "b": {"error": 3, "abstain": 2}}
    assert paired["summary"].startswith("B passes 44.4 points fewer than A [")
    assert "(McNemar, 20 of 45 cases changed)" in paired["summary"]
    names = {m["name"] for m in paired["means"]}
    assert {"score", "tier:deterministic", "tier:llm_judge", "judge:llm_judge/correctness"} <= names
    assert data["only_in_a"] == NAMES[50:] and len(data["broke"]) == 25  # 20 fails + 5 undecided: not passes


def test_compare_prints_the_finding_and_the_pairs_it_rests_on(store: Store, store_url: str) -> None:
    a = _run_with(store, [make_record(n, llm=i % 3 != 0) for i, n in enumerate(NAMES)])
    b = _run_with(store, [make_record(n, llm=i % 3 != 1) for i, n in enumerate(NAMES)])
    result = runner.invoke(app, ["compare", a, b, "--store", store_url], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    out = " ".join(result.output.split())  # sentences wrap between words at 80 columns
    assert "Paired by case" in out
    assert "60 decided pairs of 60 cases in both runs" in out
    assert "no difference this suite can detect" in out and "cases would be needed to see 5 points" in out


def test_three_runs_compare_every_pair_with_holm_adjusted_p_values(store: Store, store_url: str) -> None:
    runs = [
        _run_with(store, [make_record(n, llm=i >= failing) for i, n in enumerate(NAMES)]) for failing in (0, 12, 30)
    ]
    data = _compare_json(store_url, *runs)
    comparisons = data["comparisons"]
    assert isinstance(comparisons, list) and len(comparisons) == 3
    assert [(c["a"], c["b"]) for c in comparisons] == [(runs[0], runs[1]), (runs[0], runs[2]), (runs[1], runs[2])]
    raw = [c["pass_rate"]["p_value"] for c in comparisons]
    expected = multipletests(raw, method="holm")[1]
    assert [c["pass_rate"]["adjusted_p"] for c in comparisons] == pytest.approx(list(expected), abs=1e-12)
    result = runner.invoke(app, ["compare", *runs, "--store", store_url], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Every pair (Holm-adjusted over all pairs)" in result.output and "C vs A" in result.output


def test_one_run_or_a_bad_alpha_is_a_usage_error(store: Store, store_url: str) -> None:
    a = _run_with(store, [make_record(n) for n in NAMES[:5]])
    one = runner.invoke(app, ["compare", a, "--store", store_url])
    assert one.exit_code == 2 and "two runs or more" in one.output
    bad = runner.invoke(app, ["compare", a, a, "--alpha", "1.5", "--store", store_url])
    assert bad.exit_code == 2 and "--alpha" in bad.output


IDENTITY = {"name": "correctness", "kind": "llm", "model": "fake", "template_hash": "t", "settings": {}, "key": "k1"}


def _calibrated_pair(store: Store, *, key_b: str = "k1") -> tuple[str, str]:
    store.calibrations.save(
        IDENTITY, figures={"tpr": 0.9, "tnr": 0.8, "positives": 100, "negatives": 60}, calibration={}, dataset="set"
    )
    a = _run_with(
        store,
        [make_record(n, llm=i % 2 == 0) for i, n in enumerate(NAMES)],
        config={JUDGE_IDENTITIES_KEY: {"llm_judge/correctness": IDENTITY}},
    )
    b = _run_with(
        store,
        [make_record(n, llm=i % 5 != 0) for i, n in enumerate(NAMES)],
        config={JUDGE_IDENTITIES_KEY: {"llm_judge/correctness": {**IDENTITY, "key": key_b}}},
    )
    return a, b


def test_a_calibrated_judge_gets_its_corrected_difference_with_a_wider_interval(store: Store, store_url: str) -> None:
    a, b = _calibrated_pair(store)
    paired = _compare_json(store_url, a, b)["paired"]
    assert isinstance(paired, dict)
    [fix] = paired["corrected"]
    assert fix["path"] == "llm_judge/correctness" and fix["tpr"] == 0.9 and fix["pairs"] == 60
    # Rogan-Gladen: (p + TNR - 1) / (TPR + TNR - 1) for A's 50% and B's 80% observed.
    assert fix["a"] == pytest.approx((0.5 - 0.2) / 0.7) and fix["b"] == pytest.approx((0.8 - 0.2) / 0.7)
    judge = next(m for m in paired["means"] if m["name"] == "judge:llm_judge/correctness")
    assert judge["interval"]["high"] - judge["interval"]["low"] < fix["interval"]["high"] - fix["interval"]["low"]
    text = " ".join(runner.invoke(app, ["compare", a, b, "--store", store_url], env={"COLUMNS": "200"}).output.split())
    assert "judge-corrected llm_judge/correctness: corrected pass rate A 42.9%, B 85.7%" in text


def test_a_judge_that_changed_between_the_runs_is_not_corrected(store: Store, store_url: str) -> None:
    a, b = _calibrated_pair(store, key_b="other")
    paired = _compare_json(store_url, a, b)["paired"]
    assert isinstance(paired, dict) and paired["corrected"] == []


def test_the_comparison_of_big_runs_is_a_fixed_number_of_aggregate_queries(tmp_path: Path) -> None:
    """Both runs are joined and aggregated in SQL: the same few queries, whatever the size."""
    from sqlalchemy import event

    url = f"sqlite:///{tmp_path / 'big.db'}"
    with open_store(url) as store:
        ids = [record_run(store, "big", {f"c{i}": (True, (i + k) % 4 != 0) for i in range(500)}) for k in range(2)]
        run_a, run_b = store.runs.get(ids[0]), store.runs.get(ids[1])
        statements: list[str] = []

        def seen(connection: object, cursor: object, statement: str, *rest: object) -> None:
            statements.append(statement)

        event.listen(store.engine, "before_cursor_execute", seen)
        found = store.paired.compare(run_a, run_b)
        computed = len([s for s in statements if s.lstrip().upper().startswith("SELECT")])
        statements.clear()
        again = store.paired.compare(run_a, run_b)
        event.remove(store.engine, "before_cursor_execute", seen)
    kept = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert found.pairs == 500 and again.comparison == found.comparison
    # The 2x2 table, undecided, scores, tiers and judges, trials, added, removed, errors x2; then the kept
    # comparison looked up (statistics, figures) and its row before it is written.
    assert computed <= 9 + 3
    assert len(kept) == 1  # the second time: the kept statistics alone


def test_repeated_cases_compare_their_per_case_pass_rates(store: Store, store_url: str) -> None:
    def repeated(name: str, passes: int) -> object:
        return replace(make_record(name, llm=passes >= 3), metadata={TRIALS_KEY: {"passes": passes, "trials": 5}})

    a = _run_with(store, [repeated(n, 2 + i % 2) for i, n in enumerate(NAMES)])
    b = _run_with(store, [repeated(n, 4 + i % 2) for i, n in enumerate(NAMES)])
    paired = _compare_json(store_url, a, b)["paired"]
    assert isinstance(paired, dict)
    trials = next(m for m in paired["means"] if m["name"] == "trials")
    assert trials["pairs"] == 60 and trials["difference"] == pytest.approx(0.4)
    assert trials["test"] == "wilcoxon-signed-rank" and trials["p_value"] < 0.001


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["passes", "trials", "x"]), inner),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([TRIALS_KEY, "attempt"]), json_values))
def test_a_records_metadata_never_makes_up_trial_counts(metadata: dict[str, object]) -> None:
    counts = trial_counts(metadata)
    found = metadata.get(TRIALS_KEY)
    if counts is None:
        return
    assert isinstance(found, dict)
    passes, trials = counts
    assert (found["passes"], found["trials"]) == counts and 0 <= passes <= trials and trials > 0
