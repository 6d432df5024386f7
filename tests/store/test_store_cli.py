"""compare, history, lessons, gate and store import/export through the real ``jurybox`` app."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import Judgment
from jurybox.store import CaseRecord, Store

runner = CliRunner()


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    """SQLite only here: the commands are backend-neutral and the Store tests cover PostgreSQL."""
    return f"sqlite:///{tmp_path / 'cli.db'}"


CASES = [f"case-{i:02d}" for i in range(10)]


def _invoke(store_url: str, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--store", store_url], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def _history(store: Store, runs: int, final_llm_failures: int) -> list[str]:
    ids = []
    for number in range(runs):
        failures = final_llm_failures if number == runs - 1 else 1
        ids.append(record_run(store, "cli", {n: (True, i >= failures) for i, n in enumerate(CASES)}))
    return ids


def test_gate_passes_then_fails_on_a_regression(store: Store, store_url: str) -> None:
    _history(store, 5, 1)
    code, out = _invoke(store_url, "gate", "cli")
    assert code == 0, out
    assert "gate: passed (warm-up)" in out

    record_run(store, "cli", {n: (True, i >= 6) for i, n in enumerate(CASES)})
    code, out = _invoke(store_url, "gate", "cli")

    assert code == 1, out
    assert "REGRESSION llm_judge: 40.0% vs baseline 90.0% over 5 runs" in out
    assert "gate: FAILED" in out
    assert "jurybox lessons --suite cli" in out


def test_gate_options_override_thresholds_and_targets(store: Store, store_url: str) -> None:
    ids = _history(store, 6, 2)  # llm 90% -> 80%: an 11% drop, under the 20% LLM threshold
    code, out = _invoke(store_url, "gate", "--run", ids[-1])
    assert code == 0, out

    code, out = _invoke(store_url, "gate", "--run", ids[-1], "--threshold", "llm_*=10%")
    assert code == 1, out

    code, out = _invoke(store_url, "gate", "cli", "--target", "llm_judge=0.95", "--fail-under-target")
    assert code == 1 and "target missed llm_judge: 80.0% < 95%" in out

    code, out = _invoke(store_url, "gate", "cli", "--threshold", "oops")
    assert code == 2 and "expected NAME=FRACTION" in out


def test_gate_without_runs_is_a_usage_error(store_url: str) -> None:
    code, out = _invoke(store_url, "gate", "nothing")
    assert code == 2
    assert "no completed run of suite 'nothing'" in out


def test_history_shows_each_run_and_tier(store: Store, store_url: str) -> None:
    ids = _history(store, 6, 6)

    code, out = _invoke(store_url, "history", "cli")

    assert code == 0, out
    for run_id in ids:
        assert run_id in out
    assert "deterministic" in out and "llm_judge" in out
    assert "90.0%" in out and "40.0%" in out
    assert "regression: overall, llm_judge" in out or "regression: llm_judge, overall" in out
    assert out.count("warm-up") == 5


def test_compare_reports_flips_errors_scores_and_cost(store: Store, store_url: str) -> None:
    a = store.runs.begin("cmp", cases={c: {} for c in ("x", "y", "z", "gone")})
    for record in (make_record("x"), make_record("y", llm=False), make_record("z", cost=0.01), make_record("gone")):
        store.results.record(a, record)
    store.finish_run(a)
    b = store.runs.begin("cmp", cases={c: {} for c in ("x", "y", "z", "new")})
    store.results.record(b, make_record("x", llm=False, duration=2.0))
    store.results.record(b, make_record("y"))
    store.results.record(b, CaseRecord("z", Judgment.errored("judge model unreachable"), error="ModelError: 503"))
    store.results.record(b, make_record("new"))
    store.finish_run(b)

    code, out = _invoke(store_url, "compare", a, b)

    assert code == 0, out
    assert "Flipped (3)" in out
    assert "broke" in out and "fixed" in out
    assert "New errors (1)" in out and "ModelError: 503" in out
    assert "Score changes" in out and "-0.70" in out and "+0.70" in out
    assert "Only in A (1): gone" in out and "Only in B (1): new" in out
    assert "latency mean" in out and "cost" in out


def test_compare_unknown_run_is_a_clear_error(store_url: str) -> None:
    code, out = _invoke(store_url, "compare", "nope", "last")
    assert code == 2
    assert "no run 'nope'" in out


def test_lessons_command_lists_and_filters(store: Store, store_url: str) -> None:
    code, out = _invoke(store_url, "lessons")
    assert code == 0 and "No lessons yet" in out
    _history(store, 6, 6)

    code, out = _invoke(store_url, "lessons", "--suite", "cli", "--topic", "llm_judge")

    assert code == 0, out
    assert "cli · llm_judge" in out
    assert "tier 'llm_judge' pass rate fell to 40.0%" in out
    assert "case-00 [fail]" in out


def test_store_export_then_import_round_trips_a_suite_file(store: Store, store_url: str, tmp_path: Path) -> None:
    source = tmp_path / "suite.yaml"
    source.write_text(
        yaml.safe_dump(
            {
                "name": "files",
                "agent": {"python": "app:agent"},
                "defaults": {"judge": "correctness"},
                "cases": [
                    {"name": "greet", "prompt": "Say hi", "expect": {"contains": "hi"}},
                    {"name": "sum", "prompt": "2+2?", "expected": "4"},
                ],
            },
            sort_keys=False,
        )
    )
    code, out = _invoke(store_url, "store", "import", str(source))
    assert code == 0, out
    assert "Imported files: 2 added, 0 changed, 0 unchanged, 0 retired." in out

    exported = tmp_path / "out" / "suite.yaml"
    code, out = _invoke(store_url, "store", "export", "files", "-o", str(exported))
    assert code == 0, out
    assert yaml.safe_load(exported.read_text()) == yaml.safe_load(source.read_text())

    edited = yaml.safe_load(source.read_text())
    edited["cases"] = [{"name": "sum", "prompt": "2+2=?", "expected": "4"}]
    source.write_text(yaml.safe_dump(edited, sort_keys=False))
    code, out = _invoke(store_url, "store", "import", str(source))
    assert "Imported files: 0 added, 1 changed, 0 unchanged, 1 retired." in out
    assert store.suites.export("files")["cases"] == [{"name": "sum", "prompt": "2+2=?", "expected": "4"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name: s\ncases:\n  - prompt: no name\n", "suite.yaml:3: cases[0].name: every case needs"),
        ("name: s\ncases:\n  - name: a\n  - name: a\n", "suite.yaml:4: cases[1].name: duplicate case name 'a'"),
        ("cases: []\n", "suite.yaml:1: name:"),
        ("name: s\ncases: {}\n", "cases: must be a list"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_store_import_names_file_line_and_field(store_url: str, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(content)
    code, out = _invoke(store_url, "store", "import", str(path))
    assert code == 2
    assert message in " ".join(out.split())
