"""``jurybox run`` and ``jurybox run --dry-run`` at 80, 120 and 200 columns, end to end.

The toy suite has a pass, a fail (wrong tool and text), an agent crash (ERROR), a case
with only an LLM judge (ABSTAIN: no judge model) and a pass whose LLM judge was skipped.
Snapshots are plain text under tests/snapshots/ (``run-*.txt``, ``dry-run-*.txt``), with
run ids and timings normalised; rewrite them after an intended change with::

    JURYBOX_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/suites/test_run_cli_widths.py

and read the diff. Whatever the snapshots say, at every width each case name is whole
on one line with its status, and the first line of each failure reason is complete.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER
from typer.testing import CliRunner

from jurybox._cli.run import EXIT_NOT_PASSED, EXIT_OK, RunRequest, execute
from jurybox.cli import app
from snapshot_util import normalise

WIDTHS = (80, 120, 200)
Snapshot = Callable[[str, str], None]
SUITE = (
    TOY_HEADER
    + """\
cases:
  - name: lists-the-three-listings-of-the-host
    tags: [smoke, listings]
    prompt: "What are my listings?"
    expect_tools: [get_listings]
    judges:
      - contains: "Beach House"
      - correctness: {reference: "Beach House, Mountain Cabin and City Apartment."}
  - name: revenue-in-euros-for-the-beach-house
    tags: [revenue]
    prompt: "What are my listings in EUR?"
    expect_tools: [get_revenue]
    judges:
      - matches: "\\\\d+ EUR"
  - name: agent-crash-is-an-error
    prompt: "please crash"
    judges:
      - contains: "anything"
  - name: judged-only-by-an-llm
    prompt: "What are my listings?"
    judges:
      - correctness: {reference: "Three listings."}
"""
)
REASONS = (
    "tool_calls[strict](get_revenue): strict match failed:",
    "/\\d+ EUR/ did not match anywhere in the output",
    "not judged: the case has only LLM judges (correctness) and the llm tier was skipped (no judge model configured)",
)


def run_at(width: int, request: RunRequest) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = execute(request, console=Console(file=out, width=width), status=Console(file=err, width=width))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("width", WIDTHS)
def test_run(width: int, toy_suite: Callable[[str], Path], snapshot: Snapshot) -> None:
    code, report, status = run_at(width, RunRequest(suites=(toy_suite(SUITE),), no_store=True, progress=False))

    assert code == EXIT_NOT_PASSED, report + status
    lines = report.splitlines()
    assert max(len(line) for line in lines) <= width
    for name, verdict in (
        ("revenue-in-euros-for-the-beach-house", "FAIL"),
        ("agent-crash-is-an-error", "ERROR"),
        ("judged-only-by-an-llm", "ABSTAIN"),
    ):
        assert any(name in line and verdict in line for line in lines), f"{name} / {verdict} cut:\n{report}"
    assert any("lists-the-three-listings-of-the-host" in line for line in lines)
    flat = " ".join(report.split())
    for reason in REASONS:
        assert reason in flat
    assert "reply: Your listings: Beach House, Mountain Cabin, City Apartment." in flat
    assert "tools: made get_listings() · expected get_revenue (" in flat
    # Failures first, then the error, then the abstention, then the passing summary.
    order = [report.index(s) for s in (" FAIL ", " ERROR ", " ABSTAIN ", " PASS ")]
    assert order == sorted(order)
    assert (
        "LLM tier SKIPPED: 2 case(s) would have had LLM judges; 1 decided by their other judges (1 PASS); "
        "1 ABSTAIN (only LLM judges, not judged)" in " ".join(flat.replace("│", " ").split())
    )
    assert (
        "2 LLM judge(s) in 2 case(s) will not run: 1 will be decided by their other judges, "
        "1 with only LLM judges will be ABSTAIN (not judged)" in " ".join(status.split())
    )
    snapshot(f"run-{width}", normalise(report, seconds=True))


@pytest.mark.parametrize("width", WIDTHS)
def test_dry_run(width: int, toy_suite: Callable[[str], Path], snapshot: Snapshot) -> None:
    code, report, _ = run_at(width, RunRequest(suites=(toy_suite(SUITE),), dry_run=True))

    assert code == EXIT_OK
    lines = report.splitlines()
    assert max(len(line) for line in lines) <= width
    for name in ("lists-the-three-listings-of-the-host", "revenue-in-euros-for-the-beach-house"):
        assert any(name in line for line in lines), f"{name} is cut:\n{report}"
    assert "…" not in report
    snapshot(f"dry-run-{width}", normalise(report))


def test_verbose_lists_the_passing_case_with_its_reasoning(toy_suite: Callable[[str], Path]) -> None:
    request = RunRequest(suites=(toy_suite(SUITE),), no_store=True, progress=False, verbose=True)
    _, report, _ = run_at(80, request)
    header = next(line for line in report.splitlines() if "lists-the-three-listings-of-the-host" in line)
    assert " PASS " in header
    assert "contains('Beach House'): found 1 of 1" in " ".join(report.split())
    assert "(-v lists each" not in report


def test_the_command_line_takes_v_for_verbose() -> None:
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "--verbose" in result.output and "-v" in result.output
