"""A finished run's totals are read from its row (``finish_run`` wrote them), a running run's counted live."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update
from store_testkit import make_record

from jurybox.core import UNPRICED_KEY, CaseRecord
from jurybox.store import Store
from jurybox.store._runs import NO_RESULTS, run_totals
from jurybox.store._schema import runs_table

FIELDS = ("recorded", "passed", "failed", "errored", "abstained", "tokens", "cost", "unpriced_calls", "cost_unknown")


def _figures(store: Store, run_id: str) -> dict[str, object]:
    run = store.runs.get(run_id)
    figures = {name: getattr(run, name) for name in FIELDS}
    return figures | {"duration": round(run.duration, 9), "cost": _rounded(run.cost)}


def _rounded(cost: float | None) -> float | None:
    return None if cost is None else round(cost, 12)  # a sum in SQL, then a float on the row


def _live(store: Store, run_id: str) -> dict[str, object]:
    with store.engine.connect() as connection:
        totals = {**NO_RESULTS, **run_totals(connection, [run_id]).get(run_id, {})}
    figures = {name: totals[name] for name in FIELDS}
    return figures | {"duration": round(totals["duration"] or 0.0, 9), "cost": _rounded(totals["cost"])}


def _record(index: int, kind: str, cost: float | None) -> CaseRecord:
    record = make_record(f"case-{index}", deterministic=kind != "det-fail", llm=kind != "llm-fail", cost=cost)
    if kind == "unpriced":
        record = dataclasses.replace(record, metadata={UNPRICED_KEY: {"calls": 2, "known_cost": 0.001}})
    return record


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["pass", "det-fail", "llm-fail", "unpriced"]),
            st.one_of(st.none(), st.floats(min_value=0, max_value=2, allow_nan=False)),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_a_finished_runs_row_totals_are_what_its_results_count(
    store: Store, cases: list[tuple[str, float | None]]
) -> None:
    run_id = store.runs.begin("suite", cases={f"case-{i}": {"prompt": "p"} for i in range(len(cases))})
    for index, (kind, cost) in enumerate(cases):
        store.results.record(run_id, _record(index, kind, cost))
    running = _figures(store, run_id)
    assert running == _live(store, run_id)  # a running run: counted live
    store.finish_run(run_id)
    assert store.runs.get(run_id).finished_at is not None
    assert _figures(store, run_id) == _live(store, run_id) == running


def test_a_finished_run_is_read_from_its_row_and_one_finished_before_0013_live(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {"prompt": "p"}, "b": {"prompt": "p"}})
    store.results.record(run_id, make_record("a"))
    store.results.record(run_id, make_record("b", llm=False))
    store.finish_run(run_id)
    with store.engine.begin() as connection:  # a row that says otherwise: the row is what is read
        connection.execute(update(runs_table).where(runs_table.c.id == run_id).values(passed=2, failed=0))
    assert (store.runs.get(run_id).passed, store.runs.get(run_id).failed) == (2, 0)
    with store.engine.begin() as connection:  # finished before schema 0013: no cost_unknown on the row
        connection.execute(update(runs_table).where(runs_table.c.id == run_id).values(cost_unknown=None))
    run = store.runs.get(run_id)
    assert (run.passed, run.failed, run.cost_unknown) == (1, 1, 0)


def test_a_run_finishing_while_results_are_written_counts_every_one_of_them(store: Store) -> None:
    # On PostgreSQL nothing else serialises the two (SQLite's write lock does): a write that saw the
    # run running commits before the finish counts, and its result is in the totals on the row.
    import threading
    import time

    from jurybox.store._record_rows import insert_records, prepare

    run_id = store.runs.begin("suite", cases={"a": {"prompt": "p"}, "b": {"prompt": "p"}})
    store.results.record(run_id, make_record("a"))
    finished = threading.Event()

    def finish() -> None:
        store.finish_run(run_id)
        finished.set()

    with store.engine.begin() as connection:
        insert_records(connection, run_id, [prepare(make_record("b", llm=False))], store.url)
        finishing = threading.Thread(target=finish)
        finishing.start()
        time.sleep(0.5)
        waited = not finished.is_set()  # SQLite: the finish waits for the write lock; PostgreSQL: the row lock
    finishing.join(timeout=30)
    assert waited and finished.is_set()
    run = store.runs.get(run_id)
    assert (run.recorded, run.passed, run.failed) == (2, 1, 1)
    assert _figures(store, run_id) == _live(store, run_id)


def test_the_stores_errors_cross_a_process_boundary() -> None:
    import pickle

    from jurybox.store import StoreAccessError, StoreError, StoreVersionError

    locked = pickle.loads(pickle.dumps(StoreAccessError("sqlite:///x.db", "database is locked")))
    assert (str(locked), locked.url, locked.reason, locked.locked) == (
        "the store sqlite:///x.db cannot be used right now: database is locked",
        "sqlite:///x.db",
        "database is locked",
        True,
    )
    assert str(pickle.loads(pickle.dumps(StoreError("no run 'x'")))) == "no run 'x'"
    assert isinstance(pickle.loads(pickle.dumps(StoreVersionError("newer"))), StoreError)
