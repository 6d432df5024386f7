"""A run's plan given as (name, definition) pairs read once: written chunk by chunk, all or nothing, in flat memory."""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select

from jurybox.core import CaseRecord, Judgment, Status
from jurybox.store import Store, StoreError, open_store
from jurybox.store._runs import PLAN_CHUNK
from jurybox.store._schema import cases_table, results_table, run_cases_table, runs_table


def definitions(count: int, *, start: int = 0, tag: str = "a") -> Iterator[tuple[str, dict[str, Any]]]:
    for index in range(start, start + count):
        yield f"case-{index:07d}", {"name": f"case-{index:07d}", "prompt": f"question {index} {tag}"}


def plan_rows(store: Store, run_id: str) -> list[tuple[str, int, str]]:
    """(case, position, the definition's prompt) of every planned case, in plan order."""
    query = (
        select(run_cases_table.c.case_name, run_cases_table.c.position, cases_table.c.definition)
        .join(cases_table, cases_table.c.id == run_cases_table.c.case_id)
        .where(run_cases_table.c.run_id == run_id)
        .order_by(run_cases_table.c.position)
    )
    with store.engine.connect() as connection:
        return [(name, position, definition["prompt"]) for name, position, definition in connection.execute(query)]


def stored_versions(store: Store) -> list[tuple[str, str, int, bool]]:
    """(name, content hash, position, current) of every stored case version."""
    query = select(cases_table.c.name, cases_table.c.content_hash, cases_table.c.position, cases_table.c.current)
    with store.engine.connect() as connection:
        return sorted(
            (name, digest, position, bool(current)) for name, digest, position, current in connection.execute(query)
        )


def count_rows(store: Store, table: Any) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def test_pairs_plan_the_run_a_mapping_would(store: Store, tmp_path: Path) -> None:
    count = 3 * PLAN_CHUNK + 500  # three whole chunks and a part one (ten chunks took ~5x as long for the same)
    from_pairs = store.runs.begin("big", cases=definitions(count))
    versions = stored_versions(store)
    # The same plan as a mapping, into a store of its own: the same versions, the same plan.
    other = open_store(f"sqlite:///{tmp_path / 'mapping.db'}")
    try:
        from_mapping = other.runs.begin("big", cases=dict(definitions(count)))
        assert stored_versions(other) == versions
        assert plan_rows(other, from_mapping) == plan_rows(store, from_pairs)
    finally:
        other.close()
    assert [(name, position) for name, position, _ in plan_rows(store, from_pairs)] == [
        (f"case-{i:07d}", i) for i in range(count)
    ]
    assert [position for _, _, position, _ in versions] == list(range(count))  # suite order, across chunks
    assert store.runs.get(from_pairs).planned == count
    assert store.results.planned(from_pairs) == [f"case-{i:07d}" for i in range(count)]

    # Planned again unchanged (as a mapping this time): every version reused, one per case, each current.
    again = store.runs.begin("big", cases=dict(definitions(count)))
    assert stored_versions(store) == versions
    assert plan_rows(store, again) == plan_rows(store, from_pairs)


def test_an_edit_past_the_first_chunk_gets_a_version_current_in_its_place(store: Store) -> None:
    store.runs.begin("edited", cases=definitions(PLAN_CHUNK + 5))
    changed = list(definitions(PLAN_CHUNK + 5))
    last = changed[-1][0]
    changed[-1] = (last, {"name": last, "prompt": "edited"})
    edited = store.runs.begin("edited", cases=iter(changed))
    assert plan_rows(store, edited)[-1] == (last, PLAN_CHUNK + 4, "edited")
    current = [(n, p) for n, _, p, is_current in stored_versions(store) if is_current]
    assert len(current) == PLAN_CHUNK + 5 and (last, PLAN_CHUNK + 4) in current  # exactly one current per name
    assert count_rows(store, cases_table) == PLAN_CHUNK + 6  # only the edited case got a second version


def test_the_suite_is_locked_once_for_the_whole_plan(store: Store) -> None:
    locks: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "FROM suites" in statement and "WHERE suites.id =" in statement:  # lock_suite's select
            locks.append(statement)

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        store.runs.begin("locked", cases=definitions(PLAN_CHUNK * 3))
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    assert len(locks) == 1, locks
    if store.engine.dialect.name == "postgresql":
        assert "FOR UPDATE" in locks[0]


@pytest.mark.parametrize("where", ["same chunk", "later chunk"])
def test_a_name_twice_is_refused_and_leaves_no_run(store: Store, where: str) -> None:
    pairs = list(definitions(PLAN_CHUNK * 2))
    twin = pairs[3]
    # In a later chunk the name comes back with another definition (which must not replace the first's version).
    copy = twin if where == "same chunk" else (twin[0], {"name": twin[0], "prompt": "other"})
    at = 7 if where == "same chunk" else PLAN_CHUNK + 8
    pairs.insert(at, copy)
    assert (at // PLAN_CHUNK == 0) == (where == "same chunk")
    pairs.extend(definitions(PLAN_CHUNK, start=PLAN_CHUNK * 2))  # a chunk after it: never read
    read = 0

    def stream() -> Iterator[tuple[str, dict[str, Any]]]:
        nonlocal read
        for pair in pairs:
            read += 1
            yield pair

    with pytest.raises(ValueError, match=f"case '{twin[0]}' is in the run's plan twice"):
        store.runs.begin("twice", cases=stream())
    assert read <= PLAN_CHUNK * 2
    assert count_rows(store, runs_table) == 0
    assert count_rows(store, run_cases_table) == 0
    assert count_rows(store, cases_table) == 0


def test_a_failing_stream_leaves_nothing(store: Store) -> None:
    def broken() -> Iterator[tuple[str, dict[str, Any]]]:
        yield from definitions(PLAN_CHUNK + 1)
        raise ValueError("cases.jsonl:2002: not JSON")  # what a cases file read line by line may do

    with pytest.raises(ValueError, match="not JSON"):
        store.runs.begin("broken", cases=broken())
    assert count_rows(store, runs_table) == 0
    assert count_rows(store, cases_table) == 0
    assert store.runs.get(store.runs.begin("broken", cases=[])).planned == 0  # an empty plan is still a run


def test_a_whole_run_reads_back_without_holding_its_case_names(store: Store) -> None:
    run_id = store.runs.begin("readback", cases=definitions(30))
    statuses = [Status.PASS, Status.FAIL, Status.ERROR]
    store.results.record_many(
        run_id, [CaseRecord(f"case-{i:07d}", Judgment(statuses[i % 3], reasoning="r")) for i in range(30)]
    )
    records = store.results.records(run_id)
    assert not hasattr(records, "_names")  # counts come from the database, names only when asked
    assert len(records) == 30 and records.status_counts()[Status.FAIL] == 10
    # A record written after the snapshot (a resume in another process) does not appear halfway through.
    late = store.runs.begin("readback", cases=definitions(1, start=99))
    store.results.record_many(late, [CaseRecord("case-0000099", Judgment(Status.PASS, reasoning="r"))])
    assert [r.case for r in records] == [f"case-{i:07d}" for i in range(30)] == list(records.names())
    assert [r.case for r in records.only(["case-0000004", "case-0000002", "nope"])] == ["case-0000002", "case-0000004"]


@pytest.mark.slow
def test_planning_ten_times_the_cases_takes_no_more_memory(tmp_path: Path) -> None:
    """SQLite only: the chunking is the same code on PostgreSQL, where tracemalloc makes 200,000 rows take minutes."""
    store = open_store(f"sqlite:///{tmp_path / 'plan.db'}")

    def peak(count: int) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            store.runs.begin(f"memory-{count}", cases=definitions(count))
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    try:
        # Two and twenty chunks: ten times the cases is enough to tell flat from growing (and tracemalloc
        # makes each case ~6x slower, so 200,000 cases cost ~40 s of a test run for the same answer).
        small, big = peak(2 * PLAN_CHUNK), peak(20 * PLAN_CHUNK)
    finally:
        store.close()
    # Held all at once, a case costs ~1.4 kB of peak (40,000 cases: ~55 MB against ~6 MB for 4,000); one chunk
    # at a time, both peaks are ~3 MB. The 1.5 MB margin is ~40 bytes a case: a list of the names would exceed it.
    assert big < small + 1_500_000, (small, big)


def test_a_plan_written_as_the_run_goes_is_the_plan_written_at_once(store: Store) -> None:
    """``begin`` with the first chunk and the plan's size, then ``extend_plan`` per chunk: the same rows."""
    pairs = definitions(250)
    run_id = store.runs.begin("chunks", cases=list(itertools.islice(pairs, 100)), planned=250)
    assert tuple(store.runs.plan_progress(run_id)) == (100, 250, ())
    assert not store.runs.plan_progress(run_id).complete
    assert store.runs.get(run_id).planned == 250  # the whole plan's size, known from the start
    store.runs.extend_plan(run_id, list(itertools.islice(pairs, 100)), first=100)
    store.runs.extend_plan(run_id, list(pairs), first=200, last=True)
    assert store.runs.plan_progress(run_id).complete
    assert [(name, position) for name, position, _ in plan_rows(store, run_id)] == [
        (f"case-{i:07d}", i) for i in range(250)
    ]
    at_once = store.runs.begin("chunks", cases=definitions(250))
    assert plan_rows(store, at_once) == plan_rows(store, run_id)  # the same versions, reused


def test_the_last_chunk_says_how_big_the_plan_turned_out(store: Store) -> None:
    run_id = store.runs.begin("size", cases=definitions(10), planned=30, config={"selectors": ["smoke"]})
    assert tuple(store.runs.plan_progress(run_id)) == (10, 30, ("smoke",))
    store.runs.extend_plan(run_id, list(definitions(5, start=10)), first=10, last=True)
    assert tuple(store.runs.plan_progress(run_id)) == (15, 15, ("smoke",))
    assert store.runs.get(run_id).planned == 15


def test_a_chunk_that_repeats_a_planned_name_writes_nothing(store: Store) -> None:
    run_id = store.runs.begin("again", cases=definitions(10), planned=20)
    repeat = [*definitions(5, start=10), ("case-0000003", {"name": "case-0000003", "prompt": "other"})]
    with pytest.raises(ValueError, match="case 'case-0000003' is in the run's plan twice"):
        store.runs.extend_plan(run_id, repeat, first=10)
    assert store.runs.plan_progress(run_id).written == 10
    assert count_rows(store, cases_table) == 10
    with pytest.raises(StoreError, match="unknown run"):
        store.runs.extend_plan("no-such-run", list(definitions(1)), first=0)


def test_a_result_written_before_its_plan_row_gets_its_case_version_when_the_run_ends(store: Store) -> None:
    """A worker or an actor may finish a case before the chunk naming it is stored."""
    run_id = store.runs.begin("early", cases=definitions(2), planned=4)
    early = CaseRecord("case-0000003", Judgment(Status.PASS, reasoning="r"))
    assert store.results.record_many(run_id, [early]) == [True]
    store.runs.extend_plan(run_id, list(definitions(2, start=2)), first=2, last=True)
    store.results.record_many(run_id, [CaseRecord("case-0000002", Judgment(Status.PASS, reasoning="r"))])
    store.finish_run(run_id, "interrupted")
    query = (
        select(results_table.c.case_name, results_table.c.case_id, run_cases_table.c.case_id)
        .join(
            run_cases_table,
            (run_cases_table.c.run_id == results_table.c.run_id)
            & (run_cases_table.c.case_name == results_table.c.case_name),
        )
        .where(results_table.c.run_id == run_id)
    )
    with store.engine.connect() as connection:
        linked = {
            name: (result_version, plan_version) for name, result_version, plan_version in connection.execute(query)
        }
    assert set(linked) == {"case-0000002", "case-0000003"}
    assert all(result == plan and result is not None for result, plan in linked.values()), linked
    assert [r.case for r in store.results.records(run_id)] == ["case-0000002", "case-0000003"]  # plan order
