"""``jurybox run`` of a suite with variants, and ``jurybox experiment show | list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experiment_helpers import write_suite
from typer.testing import CliRunner

from jurybox.cli import app


@pytest.fixture
def ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    """A suite of three variants run once; its folder, store and the run's output."""
    monkeypatch.chdir(tmp_path)
    suite = write_suite(tmp_path, cases=8)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    result = CliRunner().invoke(app, ["run", str(suite), "--store", store, "--no-progress", "--no-preflight"])
    assert result.exit_code == 1, result.output  # polite and flaky fail some cases
    return suite, store, result.output


def test_run_prints_the_matrix_instead_of_each_variants_table(ran: tuple[Path, str, str]) -> None:
    _, _, output = ran
    assert output.count("Experiment x") == 1
    assert "plain          polite         flaky" in output
    assert "Against plain, case by case:" in output
    assert "Holm-adjusted p" in output  # two variants against the baseline
    assert "jurybox experiment show x" in output


@pytest.mark.parametrize("fmt", ["console", "json", "markdown", "html"])
def test_experiment_show_renders_every_format(ran: tuple[Path, str, str], fmt: str, tmp_path: Path) -> None:
    _, store, _ = ran
    out = tmp_path / f"experiment.{fmt}"
    result = CliRunner().invoke(app, ["experiment", "show", "last", "--store", store, "-f", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    if fmt == "json":
        data = json.loads(text)
        assert [v["name"] for v in data["variants"]] == ["plain", "polite", "flaky"]
        assert all(c["adjustment"] == "holm" for c in data["comparisons"])
    else:
        assert "polite" in text and "75.0%" in text


def test_experiment_list_and_unknown_ids(ran: tuple[Path, str, str]) -> None:
    _, store, _ = ran
    listed = CliRunner().invoke(app, ["experiment", "list", "--store", store])
    assert listed.exit_code == 0 and "plain 100.0% (completed)" in listed.output
    missing = CliRunner().invoke(app, ["experiment", "show", "nope", "--store", store])
    assert missing.exit_code == 2 and "no experiment 'nope'" in missing.output


def test_an_unknown_variant_is_a_usage_error(ran: tuple[Path, str, str]) -> None:
    suite, store, _ = ran
    result = CliRunner().invoke(app, ["run", str(suite), "--store", store, "--variant", "loud", "--no-preflight"])
    assert result.exit_code == 2
    assert "no variant 'loud'" in result.output


def test_resume_last_finishes_nothing_twice(ran: tuple[Path, str, str]) -> None:
    suite, store, _ = ran
    args = ["run", str(suite), "--store", store, "--resume", "last", "--no-progress", "--no-preflight"]
    result = CliRunner().invoke(app, args)
    # The latest experiment is complete: --resume last starts a new one (and says so).
    assert "no unfinished experiment of suite 'exp' to resume; starting a new one" in result.output


def test_file_formats_write_each_variants_report_and_the_experiments(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, cases=4)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    out = tmp_path / "reports"
    base = ["run", str(suite), "--store", store, "--no-progress", "--no-preflight", "-f", "html", "-f", "markdown"]
    one_file = CliRunner().invoke(app, [*base, "-o", str(tmp_path / "report.html")])
    assert one_file.exit_code == 2 and "--output must be a directory" in " ".join(one_file.output.split())
    result = CliRunner().invoke(app, [*base, "-o", str(out)])
    assert result.exit_code == 1, result.output
    written = sorted(p.name for p in out.iterdir())
    assert sum(name.startswith("experiment-x") for name in written) == 2  # .html and .md
    assert len(written) == 2 + 3 * 2, written  # and each variant's run report in both formats
