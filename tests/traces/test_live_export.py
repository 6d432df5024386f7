"""``jurybox run --otel-endpoint``: each case's spans sent as the run takes its record, each case exactly once.

The spans sent live must be the ones the post-run export of the stored records makes
(names, attributes, parents, events, times), whatever part of the run this process did
not see: a resumed run's earlier cases, a worker process's, an experiment's variants.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otlp_receiver import Received, otlp_receiver
from rich.console import Console

from jurybox._cli.run import EXIT_NOT_PASSED, RunRequest, execute
from jurybox.core import CaseRecord
from jurybox.executors import fork_available
from jurybox.store import open_store
from jurybox.stubs import StubServer
from jurybox.traces._exporter import OtlpExporter  # the module under test

AGENT = """
async def respond(message: str, session_id: str) -> str:
    if "crash" in message:
        raise RuntimeError("the agent crashed on purpose")
    return "The answer to " + message + " is forty-two."
"""

VERDICT = json.dumps({"score": 1.0, "reasoning": "matches the reference", "issues": [], "strengths": ["exact"]})


def write_suite(folder: Path, cases: int = 6, *, variants: str = "") -> Path:
    """Cases that pass (a deterministic tier, then an LLM judge), fail and error, in turn."""
    (folder / "live_agent.py").write_text(AGENT, encoding="utf-8")
    lines = ["name: live", 'agent: {python: "live_agent:respond"}', "defaults: {retries: 0}", variants, "cases:"]
    for index in range(cases):
        kind = ("pass", "fail", "crash")[index % 3]
        wanted = "zebra" if kind == "fail" else "answer"
        lines += [
            f"  - name: {kind}-{index:02d}",
            f'    prompt: "{kind} question {index}"',
            f"    judges: [{{contains: {{text: {wanted}}}}}, {{correctness: {{reference: answer {index} is 42}}}}]",
        ]
    path = folder / "suite.yaml"
    path.write_text("\n".join(line for line in lines if line) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A judge model's URL (an OpenAI stub that always passes), the response cache off."""
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    with StubServer("openai", lambda body: VERDICT) as stub:
        yield f"openai:gpt-4o-mini@{stub.base_url}"


def run(request: RunRequest) -> tuple[int, str]:
    err = io.StringIO()
    code = execute(request, console=Console(file=io.StringIO(), width=200), status=Console(file=err, width=200))
    return code, err.getvalue()


def shapes(received: Received | list[tuple[Any, dict[str, Any]]]) -> Counter[tuple[Any, ...]]:
    """Every span as what it says (ids left out, a parent by its name): a multiset to compare exports by."""
    spans = received.spans() if isinstance(received, Received) else received
    names = {span.span_id: span.name for span, _ in spans}
    out: Counter[tuple[Any, ...]] = Counter()
    for span, attributes in spans:
        run_span = span.name.startswith("jurybox run")
        events = tuple(
            (event.name, tuple(sorted((kv.key, str(kv.value)) for kv in event.attributes))) for event in span.events
        )
        out[
            (
                span.name,
                names.get(span.parent_span_id),
                tuple(sorted(attributes.items())),
                events,
                len(span.links),
                (span.status.code, span.status.message),
                None if run_span else (span.start_time_unix_nano, span.end_time_unix_nano),
            )
        ] += 1
    return out


def exported_after(records: list[CaseRecord], *, run_name: str, run_id: str) -> Counter[tuple[Any, ...]]:
    """The spans the post-run export makes of ``records`` (what ``jurybox run`` sent before live export)."""
    with otlp_receiver() as (url, received):
        exporter = OtlpExporter(url)
        exporter.export_records(records, run_name=run_name, run_id=run_id)
        exporter.close()
        return shapes(received)


def stored(store_url: str) -> list[tuple[str, list[CaseRecord]]]:
    """(run id, records) of every stored run, oldest first."""
    store = open_store(store_url)
    try:
        return [(info.id, store.results.read_all(info.id)) for info in reversed(store.runs.newest())]
    finally:
        store.close()


def case_counts(spans: Counter[tuple[Any, ...]]) -> Counter[str]:
    return Counter({shape[0]: count for shape, count in spans.items() if shape[0].startswith("jurybox case")})


def test_live_spans_are_the_post_run_export_of_the_stored_records(tmp_path: Path, judge: str) -> None:
    suite = write_suite(tmp_path)
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    with otlp_receiver() as (url, received):
        code, status = run(RunRequest(suites=(suite,), judge_model=judge, store=store_url, otel_endpoint=url))
        assert code == EXIT_NOT_PASSED, status
        live = shapes(received)
    [(run_id, records)] = stored(store_url)
    assert Counter(r.status.value for r in records) == {"pass": 2, "fail": 2, "error": 2}
    assert live == exported_after(records, run_name="live", run_id=run_id)
    assert set(case_counts(live).values()) == {1} and len(case_counts(live)) == 6
    names = {shape[0] for shape in live}
    # nested verdicts: the tiers, their judges, and the judge model's call under its judgment
    assert {"evaluation deterministic", "evaluation contains('answer')", "evaluation llm_judge"} <= names
    assert {"evaluation correctness", "chat openai:gpt-4o-mini"} <= names
    # The run says what it sent, where, and what it cost.
    said = re.search(
        r"OTLP export: ([\d,]+) spans of 6 case\(s\) in 1 request \(([\d.]+) MB\) to (\S+); ([\d.]+) s of CPU", status
    )
    assert said is not None, status
    assert int(said.group(1).replace(",", "")) == sum(live.values())
    assert said.group(3) == f"{url}/v1/traces" or said.group(3).startswith(url)
    errors = {shape[0] for shape in live if shape[5][0] == 2}  # STATUS_CODE_ERROR
    assert errors == {"jurybox case crash-02", "jurybox case crash-05"}
    assert any(name.startswith("chat ") for name in names)


def test_without_a_store_the_live_spans_are_the_kept_records(tmp_path: Path, judge: str) -> None:
    suite = write_suite(tmp_path, 3)
    with otlp_receiver() as (url, received):
        code, status = run(RunRequest(suites=(suite,), judge_model=judge, no_store=True, otel_endpoint=url))
        assert code == EXIT_NOT_PASSED, status
        spans = received.spans()
    [run_span] = [(s, a) for s, a in spans if s.name == "jurybox run live"]
    assert run_span[1]["jurybox.run.cases"] == 3 and run_span[1]["jurybox.run.passed"] == 1
    assert "jurybox.run.id" in run_span[1]
    cases = [s for s, _ in spans if s.name.startswith("jurybox case")]
    assert len(cases) == 3 and all(s.parent_span_id == run_span[0].span_id for s in cases)
    assert all(s.start_time_unix_nano >= run_span[0].start_time_unix_nano for s, _ in spans)


def test_a_resumed_run_sends_every_case_once_its_earlier_ones_from_the_store(tmp_path: Path, judge: str) -> None:
    suite = write_suite(tmp_path)
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    code, status = run(RunRequest(suites=(suite,), judge_model=judge, store=store_url))
    assert code == EXIT_NOT_PASSED, status
    [(_, first)] = stored(store_url)
    # A run stopped after two of its cases: their records are in the store, the other four are not.
    store = open_store(store_url)
    try:
        run_id = store.runs.begin("live", cases={r.case: {"prompt": "p"} for r in first})
        store.results.record_many(run_id, first[:2])
        store.finish_run(run_id, "interrupted")
    finally:
        store.close()
    with otlp_receiver() as (url, received):
        code, status = run(
            RunRequest(suites=(suite,), judge_model=judge, store=store_url, resume="last", otel_endpoint=url)
        )
        assert code == EXIT_NOT_PASSED and "resuming run" in status, status
        live = shapes(received)
        spans = received.spans()
    records = dict(stored(store_url))[run_id]
    assert live == exported_after(records, run_name="live", run_id=run_id)
    assert case_counts(live) == Counter({f"jurybox case {r.case}": 1 for r in first})
    [run_span] = [s for s, _ in spans if s.name == "jurybox run live"]
    # The earlier cases ran before this session: the run's span starts with the first of them.
    assert run_span.start_time_unix_nano == min(s.start_time_unix_nano for s, _ in spans)


@pytest.mark.skipif(not fork_available(), reason="--workers forks its worker processes")
def test_cases_a_worker_process_stored_are_sent_from_the_store_once(tmp_path: Path, judge: str) -> None:
    suite = write_suite(tmp_path)
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    with otlp_receiver() as (url, received):
        request = RunRequest(
            suites=(suite,), judge_model=judge, store=store_url, workers=2, concurrency=2, otel_endpoint=url
        )
        code, status = run(request)
        assert code == EXIT_NOT_PASSED, status
        live = shapes(received)
    [(run_id, records)] = stored(store_url)
    assert live == exported_after(records, run_name="live", run_id=run_id)
    assert set(case_counts(live).values()) == {1} and len(case_counts(live)) == 6


def test_each_variant_of_an_experiment_is_a_run_span_of_its_own(tmp_path: Path, judge: str) -> None:
    variants = "variants:\n  - name: one\n  - name: two\n    env: {LIVE_UNUSED: '1'}"
    suite = write_suite(tmp_path, 3, variants=variants)
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    with otlp_receiver() as (url, received):
        code, status = run(RunRequest(suites=(suite,), judge_model=judge, store=store_url, otel_endpoint=url))
        assert code == EXIT_NOT_PASSED, status
        spans = received.spans()
    runs = [(s, a) for s, a in spans if s.name.startswith("jurybox run")]
    assert len(runs) == 2 and len({s.trace_id for s, _ in runs}) == 2
    by_run = stored(store_url)
    assert {a["jurybox.run.id"] for _, a in runs} == {run_id for run_id, _ in by_run}
    for run_span, attributes in runs:
        cases = [s for s, _ in spans if s.name.startswith("jurybox case") and s.parent_span_id == run_span.span_id]
        assert len(cases) == attributes["jurybox.run.cases"] == 3
    expected: Counter[tuple[Any, ...]] = Counter()
    for run_id, records in by_run:
        name = next(a["jurybox.run.name"] for _, a in runs if a["jurybox.run.id"] == run_id)
        expected += exported_after(records, run_name=str(name), run_id=run_id)
    assert shapes(spans) == expected


def test_an_exporter_plugin_without_live_runs_exports_each_run_when_it_ends(
    tmp_path: Path, judge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurybox._cli import run as run_module

    class AfterTheRun:
        """An exporter plug-in of the first kind: ``export_records`` and ``close`` only."""

        def __init__(self) -> None:
            self.runs: list[tuple[str, int]] = []

        def export_records(self, records: Any, *, run_name: str, run_id: str | None, start_ns: int | None) -> None:
            self.runs.append((run_name, len(list(records))))

        def close(self) -> None:
            pass

    plugin = AfterTheRun()
    monkeypatch.setattr(run_module, "otel_exporter", lambda endpoint, errors=None: plugin)
    code, status = run(RunRequest(suites=(write_suite(tmp_path, 3),), judge_model=judge, no_store=True))
    assert code == EXIT_NOT_PASSED, status
    assert plugin.runs == [("live", 3)]


def test_a_run_that_stopped_without_a_result_still_gets_its_run_span() -> None:
    from types import SimpleNamespace

    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from jurybox._cli.run_otel import RunExport
    from jurybox.core import Judgment
    from jurybox.report import LiveTally

    memory = InMemorySpanExporter()
    export = RunExport(OtlpExporter(span_exporter=memory))
    planned: Any = SimpleNamespace(suite=SimpleNamespace(name="stopped"))
    tally = export.tally(planned, LiveTally())
    tally.add(CaseRecord("a", Judgment.passed(1.0, "ok", judge="j")))
    export.close()  # the run raised before its result: no finished() call
    [run_span] = [s for s in memory.get_finished_spans() if s.name == "jurybox run stopped"]
    assert run_span.attributes is not None and run_span.attributes["jurybox.run.cases"] == 1
    [case] = [s for s in memory.get_finished_spans() if s.name == "jurybox case a"]
    assert case.parent is not None and case.parent.span_id == run_span.context.span_id
