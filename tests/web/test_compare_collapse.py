"""The comparison lists the judges that changed; the unchanged ones are folded away, still there to open."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from webkit import WebStore


def test_unchanged_judges_are_folded_and_changed_ones_listed(client: TestClient, web_store: WebStore) -> None:
    a, b = web_store.example_runs[0], web_store.example_runs[1]
    page = client.get("/compare", params={"a": a, "b": b}).text
    folded = re.search(r"<summary>(\d+) judge\(s\) unchanged", page)
    judges = client.get("/api/compare", params={"a": a, "b": b}).json()["judges"]
    same = [j for j in judges if j["a"] and j["b"] and not j["rate_change"] and not j["score_change"]]
    assert same and folded is not None and int(folded.group(1)) == len(same)
    opened = page.split('id="unchanged-judges"', 1)[0]
    assert all(f">{j['path']}<" not in opened for j in same)  # not in the table above the fold
