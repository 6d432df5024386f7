"""What a newcomer reads in the first ten minutes, at 80 and 120 columns, kept as snapshots.

The console of a run with a case answered from the cache, a case whose similarity tier was
skipped (no embedding model), an abstaining judge and a judge that failed its pass mark;
``jurybox run --help``; ``jurybox runs``. The texts are under tests/snapshots/
(``first-console-*.txt``, ``run-help-*.txt``, ``runs-*.txt``); rewrite them after an
intended change with::

    JURYBOX_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report/test_first_minutes_snapshots.py

and read the diff. Whatever the snapshots say, the checks below hold at every width.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import PASS_MARK_KEY, SKIPPED_TIERS_KEY, CaseRecord, Context, Judgment, Status
from jurybox.report import RunReport, render_console
from jurybox.store import open_store
from snapshot_util import normalise

WIDTHS = (80, 120)
Snapshot = Callable[[str, str], None]
NO_EMBEDDINGS = "no embedding model installed (pip install 'jurybox[embed]')"
UNDECIDED = "The answer names the right listing but I cannot tell whether the occupancy figure is current."


def _calls(calls: int, cached: int) -> dict[str, dict[str, int]]:
    judge = {"calls": calls, "attempts": calls - cached, "retries": 0, "failures": 0, "cache_hits": cached}
    return {"agent": {"attempts": 1, "retries": 0, "failures": 0}, "judge": judge}


def _case(
    name: str, status: Status, tiers: dict[str, Judgment], decided_by: str, *, calls: int, cached: int, **extra: object
) -> CaseRecord:
    verdict = Judgment(status, score=0.0, judge=name, children=tiers, decided_by=decided_by)
    context = Context(input=f"question of {name}", output=f"The agent's answer to {name}.")
    metadata: dict[str, object] = {"calls": _calls(calls, cached), **extra}
    return CaseRecord(
        name, verdict, context=context, duration=1.25, tokens=900, cost=0.0, judge_calls=calls, metadata=metadata
    )


def _tier(status: Status, **judges: Judgment) -> Judgment:
    return Judgment(
        status, score=1.0 if status is Status.PASS else 0.0, children=judges, metadata={"voting": "Consensus"}
    )


def _llm(name: str, status: Status, score: float | None, mark: float = 0.7, **metadata: object) -> Judgment:
    return Judgment(
        status,
        score=score,
        judge=name,
        reasoning="as the reply shows",
        metadata={PASS_MARK_KEY: mark, **metadata},
    )


def first_run() -> RunReport:
    contains = Judgment(
        Status.PASS, score=1.0, judge="contains('Beach House')", reasoning="found", metadata={PASS_MARK_KEY: 1.0}
    )
    deterministic = _tier(Status.PASS, contains=contains)
    records = [
        _case(
            "occupancy-from-the-cache",
            Status.PASS,
            {
                "deterministic": deterministic,
                "llm_judge": _tier(Status.PASS, correctness=_llm("correctness", Status.PASS, 0.9)),
            },
            "llm_judge",
            calls=1,
            cached=1,
        ),
        _case(
            "revenue-below-the-mark",
            Status.FAIL,
            {
                "deterministic": deterministic,
                "llm_judge": _tier(Status.FAIL, correctness=_llm("correctness", Status.FAIL, 0.1)),
            },
            "llm_judge",
            calls=1,
            cached=0,
        ),
        _case(
            "similar-answer-without-embeddings",
            Status.PASS,
            {"deterministic": deterministic},
            "deterministic",
            calls=0,
            cached=0,
            **{SKIPPED_TIERS_KEY: {"similarity": NO_EMBEDDINGS}},
        ),
        _case(
            "occupancy-judge-undecided",
            Status.ABSTAIN,
            {
                "deterministic": deterministic,
                "llm_judge": _tier(
                    Status.ABSTAIN,
                    correctness=Judgment(
                        Status.ABSTAIN,
                        judge="correctness",
                        reasoning="no readable verdict after 3 attempt(s): no JSON object in the reply",
                        metadata={"raw": UNDECIDED, PASS_MARK_KEY: 0.7},
                    ),
                ),
            },
            "llm_judge",
            calls=3,
            cached=2,
        ),
    ]
    return RunReport(suite="property-agent", run_id="20261127-101500-5e1f0a", records=records, judge_model="openai:m")


@pytest.mark.parametrize("width", WIDTHS)
def test_console_of_a_run_with_cached_skipped_and_undecided_cases(width: int, snapshot: Snapshot) -> None:
    console = Console(record=True, width=width, force_terminal=False, color_system=None)
    render_console(first_run(), console)
    text = console.export_text()
    flat = " ".join(text.replace("│", " ").split())  # the words, whatever the wrapping and the notes' box
    assert "judge calls 5 (3 from cache)" in flat
    assert "correctness 0.10 < 0.70" in flat and "correctness 0.90 ≥ 0.70" not in flat  # passing cases: one line
    assert f"judge replied: {UNDECIDED}" in flat
    assert NO_EMBEDDINGS in flat
    assert max(len(line) for line in text.splitlines()) <= width
    snapshot(f"first-console-{width}", normalise(text))


@pytest.mark.parametrize("width", WIDTHS)
def test_run_help(width: int, snapshot: Snapshot) -> None:
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": str(width)}, prog_name="jurybox")
    assert result.exit_code == 0, result.output
    text = result.output
    assert "…" not in text  # no description cut mid-word
    assert max(len(line) for line in text.splitlines()) <= width
    for panel in ("Cases", "Judge model", "Reports", "Store and resume", "Agent, concurrency and executors"):
        assert f"─ {panel} ─" in text
    if width == 80:
        assert len(text.splitlines()) <= 125  # was 182 before the panels
    snapshot(f"run-help-{width}", normalise(text))


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_says_what_it_leaves_out(width: int, tmp_path: Path, snapshot: Snapshot) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        for _ in range(2):
            run_id = store.runs.begin("property-agent", cases={r.case: {} for r in first_run().records})
            for record in first_run().records:
                store.results.record(run_id, record)
            store.finish_run(run_id)
    result = CliRunner().invoke(app, ["runs", "--store", url], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    dropped = "the started (UTC) column needs 110 columns" in result.output
    assert dropped == (width < 110)
    # A run's wall time (0.1s) is the machine's: a placeholder of the same length.
    snapshot(f"runs-{width}", normalise(re.sub(r"\b\d+\.\ds\b", "9.9s", result.output)))
