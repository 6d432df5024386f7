"""``LiveRun``: whatever mix of cases it was told of and the store holds, each case's span is sent once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Collection, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from otel_exports import Keep

import jurybox.traces._live as live_module
from jurybox.core import CaseRecord, Judgment
from jurybox.traces._exporter import OtlpExporter  # the module under test

ROLES = ("live", "lost", "earlier", "worker")
"""live: told and stored; lost: told, its store write failed; earlier: stored by an earlier session
(a resumed run); worker: stored by a worker process, the runner told only its name (``miss``)."""

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Stored:
    """A store's lazy records: names without decoding, ``only`` decoding just the ones asked for."""

    def __init__(self, records: list[CaseRecord]) -> None:
        self._records = records
        self.decoded: list[str] = []

    def names(self) -> tuple[str, ...]:
        return tuple(r.case for r in self._records)

    def only(self, names: Collection[str]) -> Iterator[CaseRecord]:
        for record in self._records:
            if record.case in names:
                self.decoded.append(record.case)
                yield record

    def __iter__(self) -> Iterator[CaseRecord]:
        raise AssertionError("a whole pass over the stored records")


def record(index: int, passed: bool, role: str) -> CaseRecord:
    make = Judgment.passed if passed else Judgment.failed
    verdict = make(float(passed), "verdict", judge="v", children={"j": make(float(passed), "r", judge="j")})
    # A resumed run's earlier cases started before this session (and before its run span opened).
    started = T0 - timedelta(hours=1) if role == "earlier" else datetime.now(UTC)
    return CaseRecord(case=f"c{index}", judgment=verdict, started_at=started + timedelta(seconds=index), duration=0.5)


cases = st.lists(st.tuples(st.sampled_from(ROLES), st.booleans()), max_size=30)


@settings(max_examples=60, deadline=None)
@given(cases=cases, order=st.randoms(use_true_random=False), lazy=st.booleans())
def test_each_case_is_sent_once_and_only_the_unsent_ones_are_read_from_the_store(
    cases: list[tuple[str, bool]], order: object, lazy: bool
) -> None:
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")  # opened as the run starts: before its cases of this session
    records = [record(index, passed, role) for index, (role, passed) in enumerate(cases)]
    roles = {r.case: role for r, (role, _) in zip(records, cases, strict=True)}
    told = [r for r in records if roles[r.case] in ("live", "lost", "worker")]
    order.shuffle(told)  # type: ignore[attr-defined]  # cases finish in any order
    for r in told:
        if roles[r.case] == "worker":
            live.miss(r.case)
        else:
            live.add(r)
    in_store = [r for r in records if roles[r.case] != "lost"]
    stored = Stored(in_store)
    late = live.finish(stored if lazy else in_store, run_id="id1")
    exporter.close()

    spans = keep.spans
    case_spans = Counter(s.name for s in spans if s.name.startswith("jurybox case"))  # type: ignore[attr-defined]
    assert case_spans == Counter(f"jurybox case {r.case}" for r in records)
    unsent = [r.case for r in records if roles[r.case] in ("earlier", "worker")]
    assert late == len(unsent)
    if lazy:
        assert stored.decoded == unsent  # in plan order, and nothing sent live decoded again
    [run] = [s for s in spans if s.name == "jurybox run r"]  # type: ignore[attr-defined]
    assert run.attributes["jurybox.run.cases"] == len(records)
    assert run.attributes["jurybox.run.passed"] == sum(passed for _, passed in cases)
    assert run.attributes["jurybox.run.id"] == "id1"
    assert all(s.start_time >= run.start_time for s in spans)  # type: ignore[attr-defined]
    assert all(s.context.trace_id == run.context.trace_id for s in spans)  # type: ignore[attr-defined]


def test_a_record_told_twice_is_sent_once_and_a_second_finish_sends_nothing() -> None:
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    one = record(0, True, "live")
    live.add(one)
    live.add(one)
    assert live.finish([one]) == 0 and live.finish([record(1, True, "earlier")]) == 0
    exporter.close()
    assert sorted(s.name for s in keep.spans) == ["evaluation j", "jurybox case c0", "jurybox run r"]  # type: ignore[attr-defined]


def test_a_finished_cases_spans_leave_on_time_when_no_other_case_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the runner's loop, a case's spans go within the batch time, not at the next case's end or the run's."""
    monkeypatch.setattr(live_module, "BATCH_SECONDS", 0.05)
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")

    def sent() -> list[str]:
        return [s.name for s in keep.spans if s.name.startswith("jurybox case")]  # type: ignore[attr-defined]

    async def one_case_then_idle() -> tuple[list[str], list[str]]:
        live.add(record(0, True, "live"))
        at_once = sent()  # the batch waits: neither full nor due
        for _ in range(150):  # idle: no other case finishes, nobody flushes
            await asyncio.sleep(0.02)
            if sent():
                break
        return at_once, sent()

    at_once, later = asyncio.run(one_case_then_idle())
    assert at_once == []
    assert later == ["jurybox case c0"]
    live.finish([])
    exporter.close()
    assert sent() == ["jurybox case c0"]  # once


def test_told_outside_an_event_loop_the_spans_wait_for_the_batch_or_the_end() -> None:
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    live.add(record(0, True, "live"))  # no loop: no timer (and no error)
    live.finish([])
    exporter.close()
    assert [s.name for s in keep.spans if s.name.startswith("jurybox case")] == ["jurybox case c0"]  # type: ignore[attr-defined]


def test_told_cases_are_written_a_batch_at_a_time_and_the_rest_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_module, "LIVE_BATCH", 3)
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    live.add(record(0, True, "live"))
    live.add(record(1, False, "live"))
    assert (live.sent, exporter.cases) == (0, 0)  # waiting for the batch
    live.add(record(2, True, "live"))
    assert (live.sent, exporter.cases) == (3, 3)
    assert exporter.cpu_seconds > 0  # the batch was timed
    live.add(record(3, True, "live"))
    assert live.finish([]) == 0  # the waiting case is written by finish, as a live one
    assert (live.sent, exporter.cases, live.passed) == (4, 4, 3)
    exporter.close()
    assert case_spans(keep) == [f"jurybox case c{index}" for index in range(4)]


def test_outside_an_event_loop_a_batch_past_its_time_is_written_and_sent_at_the_next_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(live_module.time, "monotonic", lambda: now[0])
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    live.add(record(0, True, "live"))
    assert (live.sent, exporter.cases) == (0, 0)
    now[0] += live_module.BATCH_SECONDS
    live.add(record(1, True, "live"))
    assert (live.sent, exporter.cases) == (2, 2)
    assert not exporter._batch  # handed to the sender at once: they waited long enough
    assert exporter.flush()
    assert case_spans(keep) == ["jurybox case c0", "jurybox case c1"]
    live.finish([])
    exporter.close()


def case_spans(keep: Keep) -> list[str]:
    return sorted(s.name for s in keep.spans if s.name.startswith("jurybox case"))  # type: ignore[attr-defined]


def test_a_case_whose_spans_fail_to_write_is_sent_from_the_store_with_the_rest_of_its_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_module, "LIVE_BATCH", 3)
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    records = [record(index, True, "live") for index in range(3)]
    write = exporter._export_record

    def failing(one: CaseRecord, run: object, moment: float) -> None:
        if one.case == "c1":
            raise RuntimeError("a bug while writing c1")
        write(one, run, moment)  # type: ignore[arg-type]

    monkeypatch.setattr(exporter, "_export_record", failing)
    live.add(records[0])
    live.add(records[1])
    with pytest.raises(RuntimeError, match="c1"):
        live.add(records[2])
    assert (live.sent, exporter.cases, live.passed) == (1, 1, 1)  # c0 written; c1 and c2 not sent
    monkeypatch.setattr(exporter, "_export_record", write)
    assert live.finish(Stored(records)) == 2  # from the store, as cases this process never saw
    exporter.close()
    assert case_spans(keep) == ["jurybox case c0", "jurybox case c1", "jurybox case c2"]
    run_span = next(s for s in keep.spans if s.name == "jurybox run r")  # type: ignore[attr-defined]
    assert (run_span.attributes["jurybox.run.cases"], run_span.attributes["jurybox.run.passed"]) == (3, 3)


def test_closing_the_exporter_writes_what_an_unfinished_live_run_holds() -> None:
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r")
    live.add(record(0, True, "live"))
    exporter.close()  # nobody finished the run: its waiting case is still written and sent
    assert case_spans(keep) == ["jurybox case c0"]


def test_a_case_with_no_start_ends_when_the_run_was_told_of_it_not_when_its_batch_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1_000.0]
    monkeypatch.setattr(live_module.time, "time", lambda: clock[0])
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    live = exporter.live_run("r", start_ns=0)
    live.add(CaseRecord(case="c0", judgment=Judgment.passed(1.0, "ok", judge="v"), duration=0.5))
    clock[0] = 1_004.0  # the batch is written 4 s later
    live.finish([])
    exporter.close()
    case = next(s for s in keep.spans if s.name == "jurybox case c0")  # type: ignore[attr-defined]
    assert (case.start_time, case.end_time) == (999_500_000_000, 1_000_000_000_000)
