"""The dashboard's experiment pages: the list, one experiment's matrix and cases, and their JSON twins."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.web import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "experiments"))
from experiment_helpers import write_suite

MARKUP_VARIANTS = """variants:
  - name: plain
  - name: markup
    options: {style: markup}
  - name: polite
    options: {style: polite}
"""


@pytest.fixture(scope="module")
def experiment_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    """A store holding one experiment of three variants (one replies with planted markup), and a client on it."""
    folder = tmp_path_factory.mktemp("experiment-web")
    suite = write_suite(folder, cases=8, variants=MARKUP_VARIANTS)
    store = f"sqlite:///{folder / 'store.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        result = CliRunner().invoke(app, ["run", str(suite), "--store", store, "--no-progress", "--no-preflight"])
    assert result.exit_code == 1, result.output  # polite fails two cases
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        yield client, folder


def test_the_list_names_each_experiment_with_its_variants(experiment_client: tuple[TestClient, Path]) -> None:
    client, _ = experiment_client
    data = client.get("/api/experiments").json()
    [experiment] = data["experiments"]
    assert experiment["suite"] == "exp"
    assert [v["name"] for v in experiment["variants"]] == ["plain", "markup", "polite"]
    page = client.get("/experiments")
    assert page.status_code == 200 and experiment["id"] in page.text and "polite" in page.text


def test_an_experiment_page_shows_the_matrix_findings_and_only_disagreements(
    experiment_client: tuple[TestClient, Path],
) -> None:
    client, _ = experiment_client
    data = client.get("/api/experiments/last").json()
    rates = {v["name"]: v["pass_rate"] for v in data["variants"]}
    assert rates == {"plain": 1.0, "markup": 1.0, "polite": 0.75}
    assert data["counts"] == {"cases": 8, "disagree": 2}
    assert [row["case"] for row in data["listed"]] == ["q0", "q4"]  # polite says "no idea" to multiples of 4
    assert all("Holm-adjusted p" in line for line in data["findings"])
    polite = next(c for c in data["comparisons"] if c["b"] == "polite")
    assert polite["pass_rate"]["pairs"] == 8 and polite["pass_rate"]["changed"] == 2
    assert polite["adjustment"] == "holm" and polite["pass_rate"]["test"] == "mcnemar-exact"
    page = client.get(f"/experiments/{data['experiment']}")
    assert page.status_code == 200
    assert "Cases the variants disagree on (2 of 8)" in page.text
    assert "show every case" in page.text and "75.0%" in page.text
    every = client.get(f"/api/experiments/{data['experiment']}?cases=all").json()
    assert len(every["listed"]) == 8


def test_a_planted_reply_is_text_never_markup(experiment_client: tuple[TestClient, Path]) -> None:
    client, _ = experiment_client
    page = client.get("/experiments/last?cases=all")
    assert page.status_code == 200
    assert "<script>alert(" not in page.text
    assert "&lt;script&gt;alert(" in page.text
    assert "script-src 'self'" in page.headers.get("content-security-policy", "")


def test_unknown_experiments_and_bad_parameters_are_clear(experiment_client: tuple[TestClient, Path]) -> None:
    client, _ = experiment_client
    missing = client.get("/experiments/nope")
    assert missing.status_code == 404 and "nope" in missing.text
    assert client.get("/api/experiments/nope").status_code == 404
    assert client.get("/experiments/last?cases=<b>").status_code == 400


def test_each_variants_run_page_links_its_experiment(experiment_client: tuple[TestClient, Path]) -> None:
    client, _ = experiment_client
    data = client.get("/api/experiments/last").json()
    polite = next(v for v in data["variants"] if v["name"] == "polite")
    run = client.get(f"/api/runs/{polite['run_id']}").json()["run"]
    assert run["experiment"] == data["experiment"] and run["variant"] == "polite"
    page = client.get(polite["links"]["html"])
    assert f"/experiments/{data['experiment']}" in page.text and "Variant polite of experiment" in page.text
