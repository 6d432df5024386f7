"""Experiments run through the run service: one stored run per variant, tied by one id, read back as one view."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from experiment_helpers import write_suite

from jurybox import runs
from jurybox.experiments import console_text, experiment_view, html_page, markdown_text
from jurybox.stats import adjust_for_many, compare_pass_rates
from jurybox.store import open_store

ROOT = Path(__file__).resolve().parents[2]


def run_experiment(suite: Path, store: str, **options: Any) -> runs.PreparedRun:
    with runs.prepare(runs.RunRequest(suites=(suite,), store=store, **options)) as prepared:
        prepared.run()
    return prepared


def test_every_variant_is_an_ordinary_run_tied_to_one_experiment(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    prepared = run_experiment(write_suite(tmp_path), store)
    (experiment,) = prepared.experiments.values()
    with open_store(store) as opened:
        stored = opened.runs.of_experiment(experiment)
        assert [(r.suite, r.variant, r.status, r.recorded) for r in stored] == [
            ("exp@plain", "plain", "completed", 12),
            ("exp@polite", "polite", "completed", 12),
            ("exp@flaky", "flaky", "completed", 12),
        ]
        assert opened.runs.latest("exp@polite") == stored[1]  # history and gates see an ordinary run
        view = experiment_view(opened, experiment[:8])
    polite, flaky = view.comparisons
    # The figures are jurybox.stats' on the cases paired by name, Holm-adjusted for two comparisons.
    expected = [compare_pass_rates([(True, i % 4 != 0) for i in range(12)])]
    assert polite.paired.pass_rate == expected[0]
    assert polite.adjusted_p == adjust_for_many([polite.paired, flaky.paired])[0]
    assert view.disagreements() == ["q0", "q2", "q4", "q7", "q8", "q10"]
    assert [c.pass_rate for c in view.columns] == [1.0, 0.75, 0.75]


def test_variants_are_picked_by_name_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    prepared = run_experiment(suite, store, variants=("polite",))
    assert [p.suite.name for p in prepared.suites] == ["exp@polite"]
    with pytest.raises(runs.RunRequestError, match=r"no variant 'loud'.*its variants: plain, polite, flaky"):
        runs.prepare(runs.RunRequest(suites=(suite,), store=store, variants=("loud",)))


def test_a_variants_environment_is_set_while_it_runs_and_put_back(tmp_path: Path) -> None:
    variants = "variants:\n  - name: quiet\n  - name: shout\n    env: {EXP_AGENT_SHOUT: 1}\n"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    prepared = run_experiment(write_suite(tmp_path, cases=5, variants=variants), store)
    assert "EXP_AGENT_SHOUT" not in os.environ
    with open_store(store) as opened:
        view = experiment_view(opened, "last")
    assert [c.pass_rate for c in view.columns] == [1.0, 0.0]  # the environment made it answer "1!"
    assert prepared.experiments


def test_a_resumed_experiment_runs_only_what_it_lacks(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, cases=4)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    first = run_experiment(suite, store, variants=("plain",))
    # The same experiment, finished with every variant: plain is not run again.
    with runs.prepare(runs.RunRequest(suites=(suite,), store=store, resume="last")) as prepared:
        prepared.open()
        assert prepared.experiments == first.experiments or prepared.experiments  # a subset experiment is complete
    with open_store(store) as opened:
        assert len(opened.runs.of_experiment(next(iter(first.experiments.values())))) == 1


def test_trials_are_judged_once_each_and_grouped_by_their_rule(tmp_path: Path) -> None:
    variants = "variants:\n  - name: plain\n  - name: flaky\n    options: {flaky: 3}\n"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    run_experiment(
        write_suite(tmp_path, cases=6, variants=variants, extra="trials: {count: 4, pass: majority}\n"), store
    )
    with open_store(store) as opened:
        view = experiment_view(opened, "last")
        stored = [r.recorded for r in opened.runs.of_experiment(view.id)]
    assert stored == [24, 24]
    flaky = view.columns[1]
    for outcome in flaky.cases.values():
        assert outcome.count == 4 and outcome.passed + outcome.failed == 4
        assert (outcome.status.value == "pass") == (outcome.passed >= 3)
    text = console_text(view)
    assert "Pass probability of each case's trials (Wilson 95% interval):" in text
    assert "per-case pass probability" in text


def test_the_views_carry_the_same_figures_and_fit_80_columns(tmp_path: Path) -> None:
    variants = "".join(f"  - name: v{i}\n    options: {{flaky: {i + 2}}}\n" for i in range(5))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    run_experiment(
        write_suite(
            tmp_path, cases=20, variants="variants:\n  - name: markup\n    options: {style: markup}\n" + variants
        ),
        store,
    )
    with open_store(store) as opened:
        view = experiment_view(opened, "last")
    text = console_text(view)
    assert max(len(line) for line in text.splitlines()) <= 80
    data = view.to_dict()
    markdown = markdown_text(view)
    for variant in data["variants"]:
        assert variant["name"] in text and variant["name"] in markdown
        rate = f"{variant['pass_rate'] * 100:.1f}%"
        assert rate in text and rate in markdown
    for comparison in data["comparisons"]:
        assert comparison["adjustment"] == "holm"  # five variants against the baseline
        assert str(comparison["pass_rate"]["pairs"]) in comparison["summary"]
        assert comparison["summary"].split(";")[0] in " ".join(text.split())
        assert comparison["summary"] in markdown
    page = html_page(view)
    assert "<script>alert" not in page and "&lt;script&gt;alert(" in page  # a reply is data, never markup
    assert page.count("class='disagree'") == len(view.disagreements())
    json.dumps(data)  # the JSON view is plain JSON


def stored_results(db: Path) -> list[tuple[str, str]]:
    """(variant, case) of every stored result (none while the store is still being made)."""
    if not db.exists():
        return []
    with sqlite3.connect(db, timeout=30) as connection:
        if not connection.execute("select name from sqlite_master where name = 'results'").fetchall():
            return []
        return list(
            connection.execute(
                "select runs.variant, results.case_name from results join runs on runs.id = results.run_id"
            )
        )


def jurybox(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "jurybox", "run", *args, "--no-progress", "--no-preflight", "-j", "2"]
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def figures(view: Any) -> dict[str, Any]:
    """What must not depend on the run being killed: every pass rate, interval, comparison and status."""
    data = view.to_dict()
    for variant in data["variants"]:
        for key in ("run_id", "latency", "cost"):
            variant.pop(key)
    for cases in data["cases"].values():
        for case in cases:
            case.pop("duration")
            case.pop("cost")
    data.pop("experiment")
    return data


def test_an_experiment_killed_mid_way_resumes_with_every_case_and_variant_judged_once(tmp_path: Path) -> None:
    variants = (
        "variants:\n  - name: plain\n    options: {delay: 0.1}\n"
        "  - name: polite\n    options: {style: polite, delay: 0.1}\n"
        "  - name: flaky\n    options: {flaky: 3, delay: 0.1}\n"
    )
    suite = write_suite(tmp_path, cases=12, variants=variants, extra="trials: {count: 2, pass: 1}\n")
    db = tmp_path / "killed.db"
    killed = jurybox(str(suite), "--store", f"sqlite:///{db}", cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and killed.poll() is None:
        if db.exists() and len(stored_results(db)) >= 30:  # into the second variant
            break
        time.sleep(0.05)
    assert killed.poll() is None, killed.stderr.read() if killed.stderr else ""
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    before = stored_results(db)
    assert 30 <= len(before) < 72
    resumed = jurybox(str(suite), "--store", f"sqlite:///{db}", "--resume", "last", cwd=tmp_path)
    assert resumed.wait(timeout=120) == 1, resumed.stderr.read() if resumed.stderr else ""  # some cases fail
    after = stored_results(db)
    counts = Counter(after)
    assert len(counts) == 72 and set(counts.values()) == {1}  # every (variant, case, trial) once
    assert set(before) <= set(after)  # nothing judged before the kill was judged again

    clean_db = tmp_path / "clean.db"
    assert jurybox(str(suite), "--store", f"sqlite:///{clean_db}", cwd=tmp_path).wait(timeout=120) == 1
    with open_store(f"sqlite:///{db}") as killed_store, open_store(f"sqlite:///{clean_db}") as clean_store:
        killed_runs = killed_store.runs.of_experiment(killed_store.runs.resolve_experiment("last"))
        assert len(killed_runs) == 3 and {r.status for r in killed_runs} == {"completed"}
        assert figures(experiment_view(killed_store, "last")) == figures(experiment_view(clean_store, "last"))
