"""A cost partly unknown reads "≥ $X" with what is missing, a cost wholly unknown "unknown": never "$0.0000"."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from jurybox.core import UNPRICED_KEY
from jurybox.store import open_store
from jurybox.web import create_app

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
from store_testkit import make_record


def test_partly_and_wholly_unknown_costs_say_so_on_every_page(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jurybox.db'}"
    records = [
        dataclasses.replace(
            make_record("partly", cost=None), metadata={UNPRICED_KEY: {"calls": 5, "known_cost": 0.0123}}
        ),
        make_record("unknown", cost=None),
    ]
    with open_store(url) as store:
        run_id = store.runs.begin("costs", cases={r.case: {"prompt": r.case} for r in records})
        for record in records:
            store.results.record(run_id, record)
        store.finish_run(run_id)
    with TestClient(create_app(url)) as client:
        run = client.get(f"/api/runs/{run_id}").json()
        assert run["run"]["cost_text"] == "≥ $0.0123 (price unknown for 5 calls and 1 case)"
        rows = {row["case"]: row["cost_text"] for row in run["cases"]["rows"]}
        assert rows == {"partly": "≥ $0.0123 (price unknown for 5 calls)", "unknown": "unknown"}
        pages = [f"/runs/{run_id}", "/runs", f"/runs/{run_id}/case?name=partly"]
        for path in pages:
            html = client.get(path).text
            assert "≥ $0.0123" in html and "price unknown for 5 calls" in html, path
            assert "$0.0000" not in html, path
        assert "unknown" in client.get(f"/runs/{run_id}/case?name=unknown").text
