"""Which runs may enter a baseline (passing, completed, all), and the gate during warm-up."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import BASELINE_POLICIES, RegressionPolicy, Store, StoreBrowser, open_store

CASES = [f"case-{i:02d}" for i in range(10)]


def _run(store: Store, suite: str, llm_failures: int) -> str:
    """A completed run of 10 cases, all passing the deterministic tier, ``llm_failures`` failing the LLM judge."""
    return record_run(store, suite, {name: (True, i >= llm_failures) for i, name in enumerate(CASES)})


def _baseline_of(store: Store, run_id: str, policy: RegressionPolicy) -> tuple[float | None, int]:
    llm = next(
        m for m in store.check_regressions(run_id, policy, record_lessons=False).metrics if m.metric == "llm_judge"
    )
    return llm.baseline, llm.baseline_runs


def test_under_the_default_policy_a_run_below_its_targets_never_enters_the_baseline(store: Store) -> None:
    assert RegressionPolicy().baseline == "passing"
    _run(store, "s", 1)  # llm_judge 90%: meets its 70% target
    _run(store, "s", 6)  # 40%: misses it
    latest = _run(store, "s", 1)

    assert _baseline_of(store, latest, RegressionPolicy()) == (pytest.approx(0.9), 1)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("passing", (0.9, 1)),  # the 90% run only
        ("completed", ((0.9 + 0.4) / 2, 2)),  # both completed runs
        ("all", ((0.9 + 0.4 + 0.5) / 3, 3)),  # the interrupted run too
    ],
)
def test_each_baseline_policy_admits_its_runs(store: Store, policy: str, expected: tuple[float, int]) -> None:
    _run(store, "p", 1)
    _run(store, "p", 6)
    interrupted = store.runs.begin("p", cases={name: {} for name in CASES}, judge_model="fake")
    for i, name in enumerate(CASES):
        store.results.record(interrupted, make_record(name, deterministic=True, llm=i >= 5))
    store.finish_run(interrupted, "interrupted")
    latest = _run(store, "p", 1)

    baseline, runs = _baseline_of(store, latest, RegressionPolicy(baseline=policy))  # type: ignore[arg-type]
    assert (baseline, runs) == (pytest.approx(expected[0]), expected[1])


def test_an_unknown_baseline_policy_is_refused() -> None:
    assert BASELINE_POLICIES == ("passing", "completed", "all")
    with pytest.raises(ValueError, match="baseline policy must be one of passing, completed, all"):
        RegressionPolicy(baseline="every")  # type: ignore[arg-type]


def test_the_dashboards_trend_uses_the_same_policy(store: Store) -> None:
    _run(store, "t", 1)
    _run(store, "t", 6)
    latest = _run(store, "t", 1)
    info = store.runs.get(latest)
    checks = {c.metric: c for c in StoreBrowser(store.engine).stats.check(info, RegressionPolicy())}
    assert (checks["llm_judge"].baseline, checks["llm_judge"].baseline_runs) == (pytest.approx(0.9), 1)


# ------------------------------------------------------------------ jurybox gate


@pytest.fixture
def cli_store(tmp_path: Path) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    return open_store(url), url


def _gate(url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["gate", *args, "--store", url], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_a_warm_up_run_below_its_target_fails_the_gate(cli_store: tuple[Store, str]) -> None:
    store, url = cli_store
    _run(store, "w", 1)
    _run(store, "w", 1)
    _run(store, "w", 7)  # llm_judge 30% < 70%, with a baseline of only 2 runs

    code, out = _gate(url, "w")

    assert code == 1, out
    assert "target missed llm_judge: 30.0% < 70% (warm-up: no full baseline yet, so the target gates)" in out
    assert "gate: FAILED" in out and "gate: passed" not in out


def test_a_warm_up_run_meeting_its_targets_passes(cli_store: tuple[Store, str]) -> None:
    store, url = cli_store
    _run(store, "w", 1)
    code, out = _gate(url, "w")
    assert code == 0, out
    assert "gate: passed (warm-up)" in out


def test_after_warm_up_a_missed_target_only_warns_unless_asked(cli_store: tuple[Store, str]) -> None:
    store, url = cli_store
    for _ in range(5):
        _run(store, "a", 3)  # llm_judge 70%: its target exactly
    _run(store, "a", 4)  # 60%: a 14% drop (under the 20% threshold), below the target

    assert _gate(url, "a")[0] == 0
    code, out = _gate(url, "a", "--fail-under-target")
    assert code == 1 and "target missed llm_judge: 60.0% < 70%" in out


def test_the_gate_takes_the_baseline_policy(cli_store: tuple[Store, str]) -> None:
    store, url = cli_store
    _run(store, "b", 1)
    _run(store, "b", 8)
    _run(store, "b", 1)
    code, out = _gate(url, "b", "--baseline", "completed")
    assert code == 0, out
    assert "55.0% (2 runs)" in out  # (90% + 20%) / 2

    code, out = _gate(url, "b", "--baseline", "sometimes")
    assert code == 2 and "baseline policy must be one of passing, completed, all" in out


def test_history_marks_a_warm_up_run_below_its_target(cli_store: tuple[Store, str]) -> None:
    store, url = cli_store
    _run(store, "h", 1)
    _run(store, "h", 7)
    result = CliRunner().invoke(app, ["history", "h", "--store", url], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "below target: llm_judge" in result.output
