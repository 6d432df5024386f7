"""The calibrations pages and a run's corrected pass rates, HTML and their JSON twins, every value escaped."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from jurybox.report import CALIBRATIONS_KEY, CalibratedJudge
from jurybox.store import open_store
from jurybox.web import create_app

HOSTILE = "<script>alert(1)</script>"
FIGURES = {"kind": "binary", "n": 8, "tpr": 0.75, "tnr": 0.75, "positives": 4, "negatives": 4, "kappa": 0.5}
CALIBRATION = {
    "overall": {
        "counts": {"n": 8, "decided": 8, "abstain": 0, "error": 0},
        "figures": {"tpr": {"value": 0.75, "low": 0.5, "high": 1.0}, "kappa": {"value": 0.5, "low": 0.1, "high": 0.9}},
        "confusion": {"rows": ["pass", "fail"], "columns": ["pass", "fail"], "counts": [[3, 1], [1, 3]]},
    },
    "disagreements": [
        {
            "id": "p4",
            "human": "pass",
            "judge": "fail",
            "confidence": 0.9,
            "reasoning": HOSTILE,
            "input": "q",
            "output": "a",
        }
    ],
    "disagreement_count": 2,
}


def _identity(name: str, key: str) -> dict[str, object]:
    return {"name": name, "kind": "llm", "model": "openai:judge", "template_hash": "abc123", "settings": {}, "key": key}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, object]]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('calibrations') / 'web.db'}"
    with open_store(url) as store:
        first = store.calibrations.save(_identity("strict", "k1"), figures=FIGURES, calibration={}, dataset="old.jsonl")
        latest = store.calibrations.save(
            _identity("strict", "k1"), figures=FIGURES, calibration=CALIBRATION, dataset="labels.jsonl"
        )
        hostile = store.calibrations.save(
            _identity(HOSTILE, "k2"), figures={"kind": "category", "n": 3}, calibration={}, dataset=HOSTILE
        )
        run_id = store.runs.begin("capitals", cases={})
        store.finish_run(run_id)
        note = CalibratedJudge(
            "strict", "k1", "corrected", 2, 4, corrected=0.5, low=0.2, high=0.8, tpr=0.75, tnr=0.75,
            calibration_id=latest, calibrated_at=datetime(2026, 11, 24, tzinfo=UTC), dataset="labels.jsonl",
        )  # fmt: skip
        weak = CalibratedJudge(HOSTILE, "k2", "uncalibrated", 1, 2, calibration_id=hostile)
        store.runs.update_config(run_id, {CALIBRATIONS_KEY: [note.to_dict(), weak.to_dict()]})
    with TestClient(create_app(url), raise_server_exceptions=False) as client:
        yield client, {"first": first, "latest": latest, "hostile": hostile, "run": run_id}


def test_the_list_shows_every_calibration_newest_first(site: tuple[TestClient, dict[str, object]]) -> None:
    client, ids = site
    data = client.get("/api/calibrations").json()
    assert [c["id"] for c in data["calibrations"]] == [ids["hostile"], ids["latest"], ids["first"]]
    strict = data["calibrations"][1]
    assert strict["judge"] == "strict" and strict["figures"]["tpr"] == 0.75 and strict["n"] == 8
    assert strict["links"] == {"html": f"/calibrations/{ids['latest']}", "api": f"/api/calibrations/{ids['latest']}"}
    only = client.get("/api/calibrations", params={"judge": "strict", "per_page": 1}).json()
    assert [c["id"] for c in only["calibrations"]] == [ids["latest"]] and only["page"]["next"]

    page = client.get("/calibrations")
    assert page.status_code == 200 and f'href="/calibrations/{ids["latest"]}"' in page.text
    assert HOSTILE not in page.text and "&lt;script&gt;" in page.text


def test_one_calibration_in_full(site: tuple[TestClient, dict[str, object]]) -> None:
    client, ids = site
    data = client.get(f"/api/calibrations/{ids['latest']}").json()
    assert data["calibration"]["dataset"] == "labels.jsonl" and data["counts"]["n"] == 8
    assert data["figures"][0] == {"name": "tpr", "value": 0.75, "low": 0.5, "high": 1.0}
    assert data["confusion"]["counts"] == [[3, 1], [1, 3]] and data["disagreement_count"] == 2
    assert data["disagreements"][0]["reasoning"] == HOSTILE
    assert [h["id"] for h in data["history"]] == [ids["latest"], ids["first"]]

    page = client.get(f"/calibrations/{ids['latest']}")
    assert page.status_code == 200 and "Disagreements (2)" in page.text and "[0.50, 1.00]" in page.text
    assert HOSTILE not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text

    missing = client.get("/api/calibrations/999")
    assert missing.status_code == 404 and "no calibration 999" in missing.json()["error"]
    assert client.get("/calibrations/999").status_code == 404
    assert client.get("/api/calibrations/nope").status_code == 400


def test_a_runs_page_shows_its_corrected_pass_rates(site: tuple[TestClient, dict[str, object]]) -> None:
    client, ids = site
    data = client.get(f"/api/runs/{ids['run']}").json()
    corrected, flagged = data["calibrations"]
    assert corrected["status"] == "corrected" and corrected["corrected"] == 0.5 and corrected["observed"] == 0.5
    assert corrected["links"]["calibration"] == f"/calibrations/{ids['latest']}"
    assert flagged["status"] == "uncalibrated"

    page = client.get(f"/runs/{ids['run']}")
    assert page.status_code == 200 and "Calibrated judges" in page.text
    assert "50.0% <span" in page.text and "[20.0%, 80.0%]" in page.text
    assert "uncalibrated: its prompt or model changed since" in page.text
    assert HOSTILE not in page.text


def test_the_shared_stores_hostile_calibration_reads_as_text(client: TestClient) -> None:
    """The session store's calibration (``webkit.plant_hostile_calibration``), which the browser test opens too."""
    for path in ("/calibrations", "/calibrations/1"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert "<script>window.__xss" not in page.text and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page.text
