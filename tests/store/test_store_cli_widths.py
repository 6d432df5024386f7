"""``jurybox history``, ``compare`` and ``gate`` at 80, 120 and 200 columns.

Snapshots are plain text under tests/snapshots/ (``history-*.txt``, ``compare-*.txt``,
``gate-*.txt``), with run ids and dates normalised. After an intended change of the
output, rewrite them with::

    JURYBOX_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/store/test_store_cli_widths.py

and read the diff. Whatever the snapshots say, at every width: run ids, case names
and statuses are whole on one line, and the first line of every reason is complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import Judgment
from jurybox.store import CaseRecord, Store, open_store
from snapshot_util import normalise

WIDTHS = (80, 120, 200)
SUITE = "property-agent"
CASES = [
    "lists-properties",
    "refund-policy-for-cancelled-bookings-in-the-high-season",
    "occupancy-of-the-mountain-cabin",
    "pet-policy-across-revival",
]
ERROR = "ModelError: judge model unreachable at http://127.0.0.1:9/v1 (connection refused): is the server running?"
Snapshot = Callable[[str, str], None]
runner = CliRunner()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 'widths.db'}"
    return open_store(url), url


def invoke(url: str, width: int, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--store", url], env={"COLUMNS": str(width)})
    return result.exit_code, result.output


def history_of(store: Store) -> list[str]:
    """Six runs; the last loses two LLM-judged cases (a regression)."""
    ids = [record_run(store, SUITE, dict.fromkeys(CASES, (True, True))) for _ in range(5)]
    ids.append(record_run(store, SUITE, {n: (True, i >= 2) for i, n in enumerate(CASES)}))
    return ids


def assert_whole(text: str, *words: str) -> None:
    for word in words:
        assert any(word in line for line in text.splitlines()), f"{word!r} is cut or split:\n{text}"


@pytest.mark.parametrize("width", WIDTHS)
def test_history(width: int, sqlite_store: tuple[Store, str], snapshot: Snapshot) -> None:
    store, url = sqlite_store
    ids = history_of(store)
    code, out = invoke(url, width, "history", SUITE)
    assert code == 0, out
    assert max(len(line) for line in out.splitlines()) <= width
    assert_whole(out, *ids, "completed", "regression: overall, llm_judge")
    assert "…" not in out
    snapshot(f"history-{width}", normalise(out))


@pytest.mark.parametrize("width", WIDTHS)
def test_gate(width: int, sqlite_store: tuple[Store, str], snapshot: Snapshot) -> None:
    store, url = sqlite_store
    ids = history_of(store)
    code, out = invoke(url, width, "gate", SUITE)
    assert code == 1, out
    assert max(len(line) for line in out.splitlines()) <= width
    assert_whole(out, ids[-1], "overall", "llm_judge", "deterministic", "regression", "gate: FAILED")
    assert "…" not in out
    snapshot(f"gate-{width}", normalise(out))


@pytest.mark.parametrize("width", WIDTHS)
def test_compare(width: int, sqlite_store: tuple[Store, str], snapshot: Snapshot) -> None:
    store, url = sqlite_store
    a = record_run(store, SUITE, dict.fromkeys(CASES, (True, True)))
    b = store.runs.begin(SUITE, cases={name: {} for name in CASES})
    store.results.record(b, make_record(CASES[0], llm=False))
    store.results.record(b, make_record(CASES[1], deterministic=False))
    store.results.record(b, CaseRecord(CASES[2], Judgment.errored("judge model unreachable"), error=ERROR))
    store.results.record(b, make_record(CASES[3]))
    store.finish_run(b)

    code, out = invoke(url, width, "compare", a, b)

    assert code == 0, out
    assert max(len(line) for line in out.splitlines()) <= width
    assert_whole(out, a, b, *CASES[:3], "broke", "pass", "fail", "error")
    flat = " ".join(out.split())
    assert ERROR in flat  # the first line of the reason, whole
    assert f"{CASES[1]}: answer missing" in flat
    assert "…" not in out
    snapshot(f"compare-{width}", normalise(out))
    assert "B's cost is a lower bound (price unknown for 1 case)" in out  # the errored case has no cost
    code, raw = invoke(url, 200, "compare", a, b, "--json")
    data = json.loads(raw)
    assert data["cost_change"] is None and data["b"]["cost_exact"] is False and data["b"]["cost_unknown"] == 1
    assert data["a"]["cost_exact"] is True
