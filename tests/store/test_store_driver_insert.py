"""The writer's round and judgment rows go straight to the driver: the stored values must not change."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, Table, create_engine, insert, text
from sqlalchemy.engine import Connection
from store_testkit import make_multi_round_record, make_record

from jurybox.core import Check, Context, ErrorInfo, Judgment, NumericScore, Status
from jurybox.store import CaseRecord, RoundRecord, Store
from jurybox.store._rows import (
    JUDGMENT_COLUMNS,
    ROUND_COLUMNS,
    JsonForms,
    driver_insert,
    insert_result,
    result_values,
)
from jurybox.store._schema import judgments_table, results_table, round_results_table
from jurybox.store._serialize import RawJson, encode_json, metadata_cost, to_jsonable, usage_tokens

# The writer before rows went to the driver, kept verbatim as the reference for what is stored:
# dict rows with RawJson values, inserted through SQLAlchemy's bind processing.


def _legacy_judgment_rows(root: Judgment, round_index: int | None) -> Iterator[dict[str, Any]]:
    cascade = root.decided_by is not None
    for path, node in root.walk():
        yield {
            "round_index": round_index,
            "path": path,
            "depth": path.count("/") + 1 if path else 0,
            "judge": node.judge or path.rsplit("/", 1)[-1],
            "tier": path.split("/", 1)[0] if cascade and path else None,
            "status": node.status.value,
            "score": node.value,
            "reasoning": to_jsonable(node.reasoning),
            "checks": encode_json([check.to_dict() for check in node.checks]) if node.checks else RawJson("[]"),
            "tokens": usage_tokens(node.metadata),
            "cost": metadata_cost(node.metadata),
            "confidence": node.confidence,
            "degraded": node.degraded,
        }


def _legacy_round_row(record: RoundRecord, forms: JsonForms) -> dict[str, Any]:
    context = record.context
    error = record.judgment.error
    return {
        "round_index": record.index,
        "prompt": to_jsonable(record.prompt),
        "status": record.judgment.status.value,
        "score": record.judgment.value,
        "reasoning": to_jsonable(record.judgment.reasoning),
        "duration": context.duration,
        "tokens": usage_tokens(context.metadata),
        "cost": context.cost,
        "error": None if error is None else f"{error.type}: {error.message}",
        "follow_ups": encode_json([list(pair) for pair in record.follow_ups]),
        "judgment": forms.judgment(record.judgment),
        "context": forms.context(context),
    }


def _legacy_write(connection: Connection, run_id: str, records: list[CaseRecord]) -> None:
    forms = {record.case: JsonForms() for record in records}
    plan = text("SELECT case_name, case_id FROM run_cases WHERE run_id = :run")
    versions = {name: case_id for name, case_id in connection.execute(plan, {"run": run_id})}
    rows = [{**result_values(run_id, r, forms[r.case]), "case_id": versions[r.case]} for r in records]
    ids = dict(connection.execute(insert_result(connection.dialect.name), rows).all())
    rounds, judgments = [], []
    for record in records:
        result_id = ids[record.case]
        rounds.extend({**_legacy_round_row(r, forms[record.case]), "result_id": result_id} for r in record.rounds)
        trees = [(record.judgment, None)] + [(r.judgment, r.index) for r in record.rounds]
        for tree, index in trees:
            judgments.extend(
                {**row, "run_id": run_id, "result_id": result_id} for row in _legacy_judgment_rows(tree, index)
            )
    connection.execute(insert(round_results_table), rounds)
    connection.execute(insert(judgments_table), judgments)


def _odd_record(case: str) -> CaseRecord:
    """Values that have tripped stores before: NUL, NaN, unicode, None and int scores, flags, errors."""
    child = Judgment(
        Status.FAIL,
        score=NumericScore(3, 1, 10),
        reasoning="NUL\x00 in reasoning, ünïcödé ✓ 日本",
        checks=(Check("nul\x00", False, "msg\x00"), Check("ok", True)),
        confidence=1,  # an int in a FLOAT column
        degraded=True,
        metadata={"tokens": {"input_tokens": 3, "output_tokens": 4}, "cost": math.nan},
    )
    root = Judgment(
        Status.ERROR,
        reasoning="",
        judge="",
        error=ErrorInfo("Boom", "it broke ✗"),
        children={"tier/with slash": child, "none": Judgment(Status.ABSTAIN, score=None)},
        decided_by="tier/with slash",
        metadata={"nan": math.nan, "inf": -math.inf},
    )
    context = Context(input="q\x00", output="ça va ✓", metadata={"tokens": 7.9, "odd": {1, 2}})
    round_ = RoundRecord(index=0, prompt="p\x00 ✓", context=context, judgment=root, follow_ups=(("why?", "car\x00"),))
    other = RoundRecord(index=1, prompt="second", context=Context(output=""), judgment=child)
    return CaseRecord(case, root, rounds=(round_, other), context=None, error="crash\x00", tags=("t\x00", "ü"))


def _stored(store: Store, table: Table, run_id: str) -> list[tuple[Any, ...]]:
    """Every column of the run's rows as stored (JSON as its text; SQLite adds each value's storage class)."""
    sqlite = store.engine.dialect.name == "sqlite"
    names = [c.name for c in table.c if c.name not in ("id", "run_id", "result_id", "recorded_at")]
    columns = []
    for name in names:
        json = isinstance(table.c[name].type, JSON)
        columns.append(f"t.{name}::text" if json and not sqlite else f"t.{name}")
        if sqlite:
            columns.append(f"typeof(t.{name})")
    key = "t.case_name" if table is results_table else "r.case_name"
    join = "" if table is results_table else " JOIN results r ON r.id = t.result_id"
    where = "t.run_id" if table is results_table else "r.run_id"
    query = f"SELECT {key}, {', '.join(columns)} FROM {table.name} t{join} WHERE {where} = :run ORDER BY t.id"
    with store.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(query), {"run": run_id})]


def test_rows_written_through_the_driver_equal_the_sqlalchemy_path(store: Store) -> None:
    records = [make_record("a"), make_multi_round_record("b"), _odd_record("c"), make_record("d", llm=False)]
    cases = {r.case: {"prompt": r.case} for r in records}
    new_run = store.begin_run("suite", cases=cases)
    old_run = store.begin_run("suite", cases=cases)

    # "a" twice in one batch: its first record is the one written.
    assert store.record_cases(new_run, [*records, make_record("a", cost=9.0)]) == [True] * 4 + [False]
    with store.engine.begin() as connection:
        _legacy_write(connection, old_run, records)

    for table in (results_table, round_results_table, judgments_table):
        new, old = _stored(store, table, new_run), _stored(store, table, old_run)
        assert new == old, table.name
        assert new, table.name
    assert store.run_records(new_run) == store.run_records(old_run)


def test_a_failing_judgment_insert_rolls_back_the_whole_batch(store: Store) -> None:
    run_id = store.begin_run("suite", cases={"a": {}, "b": {}})
    # A None reasoning breaks judgments.reasoning NOT NULL on both databases, after the results rows are in.
    broken = Judgment(Status.PASS, judge="x", reasoning=None)  # type: ignore[arg-type]
    bad = CaseRecord("b", Judgment(Status.PASS, children={"x": broken}))

    with pytest.raises(Exception, match=r"(?i)null"):
        store.record_cases(run_id, [make_record("a"), bad])
    assert store.recorded_cases(run_id) == set()
    assert store.record_cases(run_id, [make_record("a")]) == [True]


@pytest.mark.parametrize("url", ["sqlite://", "postgresql+psycopg://"])
def test_driver_insert_is_the_sqlalchemy_insert_with_positional_parameters(url: str) -> None:
    dialect = create_engine(url).dialect
    for table, columns in ((round_results_table, ROUND_COLUMNS), (judgments_table, JUDGMENT_COLUMNS)):
        sql = driver_insert(dialect, table, columns)
        assert "RETURNING" not in sql
        assert sql.count("?" if dialect.name == "sqlite" else "%s") == len(columns)
        if dialect.name == "postgresql":  # a str sent for a JSONB column needs its cast
            assert sql.count("::JSONB") == sum(1 for c in columns if isinstance(table.c[c].type, JSON))


def test_driver_insert_refuses_columns_that_need_bind_processing() -> None:
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("at", DateTime))
    with pytest.raises(TypeError, match="needs bind processing"):
        driver_insert(create_engine("sqlite://").dialect, table, ("at",))
    with pytest.raises(ValueError, match="in that order"):
        driver_insert(create_engine("sqlite://").dialect, judgments_table, JUDGMENT_COLUMNS[::-1])
