"""A run of some of the cases (a filter) is partial: never gated, never a baseline, never a lesson."""

from __future__ import annotations

from store_testkit import make_record, record_run

from jurybox.store import RegressionPolicy, Store, StoreBrowser

CASES = [f"case-{i:02d}" for i in range(10)]


def _partial_run(store: Store, suite: str, names: list[str], *, passing: bool) -> str:
    run_id = store.runs.begin(
        suite, cases={name: {"prompt": f"q {name}"} for name in names}, judge_model="fake",
        config={"selectors": names},
    )  # fmt: skip
    for name in names:
        store.results.record(run_id, make_record(name, deterministic=passing, llm=passing))
    store.finish_run(run_id)
    return run_id


def test_a_failing_one_case_run_is_not_gated_against_the_suites_baseline(store: Store) -> None:
    for _ in range(5):
        record_run(store, "whole", dict.fromkeys(CASES, (True, True)))
    run_id = _partial_run(store, "whole", ["case-03"], passing=False)  # 0% against 100%
    check = store.check_regressions(run_id)
    assert store.runs.get(run_id).partial
    assert check.ok and {m.state for m in check.metrics} == {"partial"} and not check.regressions
    assert store.lessons.find("whole") == []
    # The dashboard's trends draw no regression dot for it, and its own gate verdict is partial.
    browser = StoreBrowser(store.engine)
    points = browser.trends.points("whole", limit=10, policy=RegressionPolicy())
    assert set(points[-1].states.values()) == {"partial"}
    assert {c.state for c in browser.stats.check(store.runs.get(run_id), RegressionPolicy())} == {"partial"}


def test_a_partial_run_never_enters_a_baseline(store: Store) -> None:
    for _ in range(5):
        record_run(store, "mixed", dict.fromkeys(CASES, (True, True)))
        _partial_run(store, "mixed", ["case-01"], passing=False)  # between every full run
    full = record_run(store, "mixed", dict.fromkeys(CASES, (True, True)))
    overall = next(m for m in store.check_regressions(full).metrics if m.metric == "overall")
    assert overall.state == "ok" and overall.baseline == 1.0 and overall.baseline_runs == 5
