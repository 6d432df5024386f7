"""``jurybox judge-traces`` and ``load_judges``: every judge on every agent run of an export."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from otel_exports import genai_agent, openinference_agent, record, write_json_lines
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.judges import contains, tool_calls
from jurybox.store import open_store
from jurybox.suites import SuiteError, load_judges
from jurybox.traces import ReadStats, judge_traces


@pytest.fixture
def export(tmp_path: Path) -> Path:
    spans = record(genai_agent, functools.partial(genai_agent, city="Rome"), openinference_agent)
    return write_json_lines(tmp_path / "traces.jsonl", [spans[:6], spans[6:]])


def _judges(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judges.yaml"
    path.write_text(text)
    return path


def test_the_command_judges_stores_and_writes_every_agent_run(tmp_path: Path, export: Path) -> None:
    judges = _judges(tmp_path, "judges:\n  - tool_calls: {expected: [search_hotels]}\n  - contains: {text: EUR}\n")
    out = tmp_path / "verdicts.jsonl"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    result = CliRunner().invoke(
        app, ["judge-traces", str(export), "--judges", str(judges), "-o", str(out), "--suite", "prod", "--store", store]
    )
    assert result.exit_code == 1, result.output  # the OpenInference agent called no search_hotels
    assert "2 pass, 1 fail" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["status"] for row in rows] == ["pass", "pass", "fail"]
    assert rows[0]["context"]["tool_calls"][0]["arguments"] == {"city": "Lisbon", "nights": 2}
    with open_store(store) as opened:
        run = opened.runs.latest("prod")
        assert run is not None
        records = opened.results.read_all(run.id)
        assert sorted(r.status.value for r in records) == ["fail", "pass", "pass"]
        assert all(r.metadata["trace_id"] in r.case for r in records)


def test_a_bad_judges_file_names_line_and_field(tmp_path: Path, export: Path) -> None:
    judges = _judges(tmp_path, "judges:\n  - contains: {text: EUR}\n  - tool_calls: {calls: [x]}\nextra: 1\n")
    result = CliRunner().invoke(app, ["judge-traces", str(export), "--judges", str(judges)])
    assert result.exit_code == 2
    assert "judges.yaml:4: extra: unknown key" in result.output


def test_load_judges_reports_every_problem(tmp_path: Path) -> None:
    path = _judges(tmp_path, "- contains: {text: EUR}\n- containz: {text: x}\n- tool_calls: {calls: [x]}\n")
    with pytest.raises(SuiteError) as caught:
        load_judges(path)
    text = str(caught.value)
    assert "judges.yaml:2" in text and "did you mean 'contains'" in text
    assert "judges.yaml:3" in text and "unknown option 'calls'" in text


def test_llm_judges_without_a_model_are_left_out_with_a_note(
    tmp_path: Path, export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    judges = _judges(tmp_path, "judges:\n  - contains: {text: EUR}\n  - correctness\n")
    result = CliRunner().invoke(app, ["judge-traces", str(export), "--judges", str(judges), "--no-gate"])
    assert result.exit_code == 0, result.output
    assert "the LLM judges correctness are left out" in result.output


def test_llm_judges_judge_traces_with_a_fake_model(tmp_path: Path, export: Path) -> None:
    from jurybox.llm import relevance
    from jurybox.models import FakeModel

    model = FakeModel('{"relevant": true, "confidence": 0.9, "reasoning": "answers the question"}')
    records = judge_traces(export, [tool_calls(["search_hotels"]), relevance(model=model)])
    assert [r.status.value for r in records].count("pass") == 2
    assert model.calls == 2  # the LLM tier ran only where the deterministic tier passed


def test_the_python_function_fills_the_stats(export: Path) -> None:
    stats = ReadStats()
    records = judge_traces(export, [contains("EUR")], stats=stats)
    assert len(records) == stats.contexts == 3
