"""Baselines, regressions, warm-up, targets and lessons."""

from __future__ import annotations

import pytest
from store_testkit import record_run

from jurybox.store import Rate, RegressionPolicy, Store, lessons_for, relative_drop
from jurybox.store._baselines import check_metric

CASES = [f"case-{i:02d}" for i in range(20)]


def _outcomes(llm_failures: int = 0, det_failures: int = 0) -> dict[str, tuple[bool, bool]]:
    """20 cases: the first ``det_failures`` fail the deterministic tier, the next ``llm_failures`` the LLM judge."""
    return {
        name: (i >= det_failures, not (det_failures <= i < det_failures + llm_failures)) for i, name in enumerate(CASES)
    }


def test_planted_regression_is_found_at_the_sixth_run_after_warm_up(store: Store) -> None:
    states = []
    for number in range(1, 7):
        # Runs 1-5 pass 90% at the LLM judge (small noise); run 6 drops to 60%.
        failures = {1: 2, 2: 2, 3: 1, 4: 3, 5: 2, 6: 8}[number]
        run_id = record_run(store, "planted", _outcomes(llm_failures=failures))
        check = store.check_regressions(run_id)
        states.append({m.metric: m.state for m in check.metrics})

    assert [s["llm_judge"] for s in states] == ["warmup"] * 5 + ["regression"]
    assert [s["overall"] for s in states] == ["warmup"] * 5 + ["regression"]
    assert states[-1]["deterministic"] == "ok"
    final = check
    llm = next(m for m in final.metrics if m.metric == "llm_judge")
    assert llm.baseline == pytest.approx((18 + 18 + 19 + 17 + 18) / 5 / 20)
    assert llm.baseline_runs == 5
    assert llm.drop == pytest.approx(relative_drop(llm.baseline or 0, 0.6))
    assert not final.ok

    lessons = store.lessons.find("planted")
    assert sorted(lesson.metric for lesson in lessons) == ["llm_judge", "overall"]
    lesson = next(item for item in lessons if item.metric == "llm_judge")
    assert lesson.current == pytest.approx(0.6)
    assert len(lesson.failing) == 8
    assert "case-00" in lesson.text and "contradicts the reference" in lesson.text
    assert "90.0%" in lesson.text and "60.0%" in lesson.text


def test_a_drop_during_warm_up_only_warns_and_writes_no_lesson(store: Store) -> None:
    for _ in range(3):
        record_run(store, "young", _outcomes())
    run_id = record_run(store, "young", _outcomes(llm_failures=4))  # llm_judge 80%: above its 70% target

    check = store.check_regressions(run_id)

    assert check.ok and check.warming_up
    assert {m.metric for m in check.warnings} == {"llm_judge", "overall"}
    assert store.lessons.find("young") == []


def test_during_warm_up_a_missed_target_fails_the_check(store: Store) -> None:
    for _ in range(3):
        record_run(store, "young", _outcomes())
    run_id = record_run(store, "young", _outcomes(llm_failures=10))  # llm_judge 50% < 70%

    check = store.check_regressions(run_id)

    assert check.warming_up and not check.regressions
    assert [m.metric for m in check.warmup_targets_missed] == ["llm_judge"]
    assert not check.ok
    assert store.lessons.find("young") == []  # a lesson is what a regression taught; this is not one


def test_thresholds_differ_per_tier_and_the_boundary_counts(store: Store) -> None:
    for _ in range(5):
        record_run(store, "tiers", _outcomes())
    # deterministic 100% -> 90%: a 10% drop, exactly its threshold; the LLM tier is untouched.
    run_id = record_run(store, "tiers", _outcomes(det_failures=2))

    by_metric = {m.metric: m for m in store.check_regressions(run_id).metrics}

    assert by_metric["deterministic"].drop == pytest.approx(0.10)
    assert by_metric["deterministic"].state == "regression"
    assert by_metric["llm_judge"].state == "ok"  # only cases that reached the tier count: 18/18
    assert by_metric["overall"].state == "ok"  # 10% < 15%


def test_baseline_ignores_unfinished_runs_and_later_runs(store: Store) -> None:
    ids = [record_run(store, "window", _outcomes()) for _ in range(5)]
    broken = store.runs.begin("window", cases={"x": {}})
    store.finish_run(broken, "failed")
    later = record_run(store, "window", _outcomes(llm_failures=10))

    first_after_window = store.check_regressions(later)
    early = store.check_regressions(ids[2], record_lessons=False)

    assert {m.metric: m.baseline_runs for m in first_after_window.metrics}["overall"] == 5
    assert {m.metric: m.baseline_runs for m in early.metrics}["overall"] == 2  # only runs before it


def test_custom_policy_window_thresholds_and_targets(store: Store) -> None:
    for _ in range(2):
        record_run(store, "custom", _outcomes())
    run_id = record_run(store, "custom", _outcomes(llm_failures=3))  # llm 85%: 15% drop
    policy = RegressionPolicy(window=2, thresholds={"llm_*": 0.10, "*": 0.5}, targets={"llm_judge": 0.9})

    check = store.check_regressions(run_id, policy, record_lessons=False)
    by_metric = {m.metric: m for m in check.metrics}

    assert by_metric["llm_judge"].state == "regression"
    assert by_metric["overall"].state == "ok"
    assert [m.metric for m in check.targets_missed] == ["llm_judge"]
    assert by_metric["deterministic"].target is None
    assert store.lessons.find("custom") == []


def test_default_policy_matches_the_documented_numbers() -> None:
    policy = RegressionPolicy()
    assert policy.window == 5
    assert [
        policy.threshold_for(m) for m in ("deterministic", "llm_judge", "llm_operations", "similarity", "overall")
    ] == [
        0.10,
        0.20,
        0.20,
        0.15,
        0.15,
    ]
    assert [policy.target_for(m) for m in ("deterministic", "llm_operations", "llm_judge", "overall")] == [
        0.95,
        0.80,
        0.70,
        None,
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window": 0}, "window"),
        ({"thresholds": {"*": 15}}, "0.15 = 15%"),
        ({"targets": {"llm_judge": -0.1}}, "target for 'llm_judge'"),
    ],
)
def test_bad_policies_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RegressionPolicy(**kwargs)  # type: ignore[arg-type]


def test_relative_drop_maths() -> None:
    assert relative_drop(0.9, 0.765) == pytest.approx(0.15)
    assert relative_drop(0.0, 0.0) == 0.0
    assert relative_drop(0.5, 0.6) == pytest.approx(-0.2)
    improved = check_metric("overall", Rate(10, 10), [0.5] * 5, RegressionPolicy())
    assert improved.state == "ok" and improved.drop == pytest.approx(-1.0)


def test_lessons_for_renders_latest_lessons_by_topic(store: Store) -> None:
    for _ in range(5):
        record_run(store, "loop", _outcomes())
    record_run(store, "loop", _outcomes(llm_failures=10))  # finish_run checks and writes lessons itself

    text = lessons_for(store, suite="loop", topic="llm_judge")
    everything = lessons_for(store, suite="loop", limit=10)

    assert text.startswith("Suite 'loop': the tier 'llm_judge' pass rate fell to 50.0%")
    assert "case-03 [fail]" in text
    assert "overall pass rate" in everything and "tier 'llm_judge'" in everything
    assert lessons_for(store, suite="loop", topic="case-07").count("Suite 'loop'") == 2
    assert lessons_for(store, suite="other") == ""
    # Checking again writes nothing new.
    run_id = store.runs.latest("loop")
    assert run_id is not None
    assert store.check_regressions(run_id.id).lessons_written == 0
    assert len(store.lessons.find("loop")) == 2
