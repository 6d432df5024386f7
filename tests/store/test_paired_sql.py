"""The paired statistics from SQL aggregates are those of the case-by-case path, on random stores."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from sqlalchemy import delete, select, update
from store_testkit import make_record

from jurybox.core import Judgment
from jurybox.stats import MeanDifference, PairedComparison, compare_runs
from jurybox.store import TRIALS_KEY, Store
from jurybox.store._schema import judgments_table, results_table, run_comparisons_table

SCORES = [None, 0.0, 0.1, 0.25, 0.5, 0.7, 0.75, 0.9, 1.0]


def _random_run(store: Store, rng: random.Random, names: list[str]) -> str:
    records = []
    for name in names:
        record = make_record(name, deterministic=rng.random() < 0.8, llm=rng.random() < 0.6)
        roll = rng.random()
        if roll < 0.05:
            record = replace(record, judgment=Judgment.errored("judge down", judge="cascade"), error="down")
        elif roll < 0.08:
            record = replace(record, judgment=Judgment.abstained("no verdict", judge="cascade"))
        elif roll < 0.2:
            trials = rng.randint(1, 5)
            record = replace(record, metadata={TRIALS_KEY: {"passes": rng.randint(0, trials), "trials": trials}})
        records.append(record)
    run_id = store.runs.begin("paired", cases={r.case: {"prompt": r.case} for r in records}, judge_model="fake")
    for record in records:
        store.results.record(run_id, record)
    store.finish_run(run_id)
    # Scores of many values (some shared, some missing), so differences tie and spread.
    with store.engine.begin() as connection:
        for table in (results_table, judgments_table):
            ids = connection.execute(select(table.c.id).where(table.c.run_id == run_id)).scalars().all()
            for row_id in ids:
                score = rng.choice(SCORES) if rng.random() < 0.7 else round(rng.random(), 2)
                connection.execute(update(table).where(table.c.id == row_id).values(score=score))
        # Rows of a finished run changed by hand, behind the store: the comparison finish_run kept is of the old ones.
        connection.execute(delete(run_comparisons_table))
    return run_id


def _same_mean(found: MeanDifference, expected: MeanDifference) -> None:
    assert (found.name, found.pairs) == (expected.name, expected.pairs)
    assert found.a_mean == pytest.approx(expected.a_mean, rel=1e-12)
    assert found.b_mean == pytest.approx(expected.b_mean, rel=1e-12)
    assert found.difference == pytest.approx(expected.difference, rel=1e-9, abs=1e-12)
    assert found.p_value == expected.p_value
    if expected.interval is None:
        assert found.interval is None
    else:
        assert found.interval is not None
        assert found.interval.method == expected.interval.method
        assert found.interval.low == pytest.approx(expected.interval.low, rel=1e-9, abs=1e-12)
        assert found.interval.high == pytest.approx(expected.interval.high, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", [1])
def test_sql_aggregates_equal_the_case_by_case_statistics(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"case-{i:03d}" for i in range(50)]
    a = _random_run(store, rng, rng.sample(names, 42))
    b = _random_run(store, rng, rng.sample(names, 42))
    run_a, run_b = store.runs.get(a), store.runs.get(b)
    sides_a, sides_b = store.paired.sides(a), store.paired.sides(b)
    expected: PairedComparison = compare_runs(sides_a.sides, sides_b.sides, a_name=a, b_name=b)
    paired = store.paired.compare(run_a, run_b)
    found = paired.comparison
    assert found.pass_rate == expected.pass_rate  # counts, bootstrap interval and McNemar: exactly
    assert sorted(found.added) == sorted(expected.added) and list(found.added) == sorted(found.added)
    assert sorted(found.removed) == sorted(expected.removed)
    assert sorted(found.undecided) == sorted(expected.undecided)
    assert [m.name for m in found.means] == [m.name for m in expected.means]
    for got, want in zip(found.means, expected.means, strict=True):
        _same_mean(got, want)
    assert paired.undecided_a == {"error": len(sides_a.errors), "abstain": len(sides_a.abstains)}
    assert paired.undecided_b == {"error": len(sides_b.errors), "abstain": len(sides_b.abstains)}
