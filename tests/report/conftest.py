"""Fixtures for the report tests: a realistic run (see report_fixtures)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from report_fixtures import SKIP_REASON, START, build_records

from jurybox.report import RunReport
from jurybox.store import CaseRecord


@pytest.fixture
def records() -> list[CaseRecord]:
    return build_records()


@pytest.fixture
def report(records: list[CaseRecord]) -> RunReport:
    return RunReport(
        suite="property-agent",
        run_id="run-7f3a",
        records=records,
        started_at=START,
        finished_at=START + timedelta(seconds=44.5),
        judge_model="openai:gpt-4o-mini",
        notes=(f"llm_judge tier skipped for 1 case: {SKIP_REASON}",),
        planned=8,
        metadata={"git_commit": "216c381"},
    )
