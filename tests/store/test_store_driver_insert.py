"""The writer's result, round and judgment rows go straight to the driver: the stored values must not change."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, Table, create_engine, event, insert, text
from sqlalchemy.engine import Connection
from store_testkit import make_multi_round_record, make_record

from jurybox.core import Check, Context, ErrorInfo, Judgment, NumericScore, Status
from jurybox.store import CaseRecord, RoundRecord, Store
from jurybox.store import _record_rows as rows_module
from jurybox.store._json import RawJson, encode_json
from jurybox.store._json import db_jsonable as to_jsonable
from jurybox.store._record_rows import (
    JUDGMENT_COLUMNS,
    RESULT_INSERT_COLUMNS,
    ROUND_COLUMNS,
    driver_insert,
    insert_result,
    metadata_cost,
    results_insert,
    usage_tokens,
)
from jurybox.store._schema import judgments_table, results_table, round_results_table

# The writer before rows went to the driver, kept verbatim as the reference for what is stored:
# dict rows with RawJson values, inserted through SQLAlchemy's bind processing.

RECORDED_AT = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
"""The time both writers stamp, so ``recorded_at`` is compared too."""


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


def _legacy_round_row(record: RoundRecord, forms: _LegacyForms) -> dict[str, Any]:
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


class _LegacyForms:
    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, RawJson]] = {}

    def judgment(self, judgment: Judgment) -> RawJson:
        return self._form(judgment, Judgment.to_dict)

    def context(self, context: Context) -> RawJson:
        return self._form(context, Context.to_dict)

    def _form(self, value: Any, to_dict: Callable[[Any], Any]) -> RawJson:
        known = self._forms.get(id(value))
        if known is None:
            known = self._forms[id(value)] = (value, encode_json(to_dict(value)))
        return known[1]


def _legacy_result_row(run_id: str, record: CaseRecord, forms: _LegacyForms) -> dict[str, Any]:
    context = record.context
    return {
        "run_id": run_id,
        "case_name": record.case,
        "status": record.judgment.status.value,
        # One change since: the case's score is its deciding judge's, stored with that judge's pass mark.
        "score": record.score,
        "pass_mark": record.pass_mark,
        "reasoning": to_jsonable(record.judgment.reasoning),
        "decided_by": record.judgment.decided_by,
        "duration": record.duration,
        "tokens": record.tokens,
        # Schema 0013: the known part of a partly priced cost, and how many calls had no price.
        "cost": record.cost_parts[0],
        "unpriced_calls": record.cost_parts[1],
        "judge_calls": record.judge_calls,
        "error": to_jsonable(record.error),
        "tags": encode_json(list(record.tags)),
        "extra": encode_json(record.metadata),
        "judgment": forms.judgment(record.judgment),
        "context": forms.context(context) if context is not None else None,
        "started_at": record.started_at,
        "recorded_at": RECORDED_AT,
    }


def _legacy_write(connection: Connection, run_id: str, records: list[CaseRecord]) -> None:
    forms = {record.case: _LegacyForms() for record in records}
    plan = text("SELECT case_name, case_id FROM run_cases WHERE run_id = :run")
    versions = {name: case_id for name, case_id in connection.execute(plan, {"run": run_id})}
    rows = [{**_legacy_result_row(run_id, r, forms[r.case]), "case_id": versions[r.case]} for r in records]
    ids = dict(connection.execute(insert_result(connection.dialect.name), rows).all())
    rounds, judgments = [], []
    for record in records:
        result_id = ids[record.case]
        rounds.extend({**_legacy_round_row(r, forms[record.case]), "result_id": result_id} for r in record.rounds)
        # One change since: a round whose verdict is the case's own is not stored a second time.
        trees = [(record.judgment, None)] + [
            (r.judgment, r.index) for r in record.rounds if r.judgment is not record.judgment
        ]
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
    names = [c.name for c in table.c if c.name not in ("id", "run_id", "result_id")]
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


def _count_results_inserts(store: Store) -> dict[str, int]:
    """Counts, as the store writes, the results INSERTs it sends by SQLAlchemy and straight to the driver."""
    counts = {"driver": 0, "sqlalchemy": 0}

    @event.listens_for(store.engine, "before_cursor_execute")
    def _count(*args: Any) -> None:
        statement, context = args[2], args[4]
        if statement.startswith("INSERT INTO results "):
            counts["sqlalchemy" if context.compiled is not None else "driver"] += 1

    return counts


@pytest.mark.parametrize(
    ("path", "statements"),
    [
        ("driver", {"driver": 1, "sqlalchemy": 0}),
        ("driver, 2 rows a statement", {"driver": 2, "sqlalchemy": 0}),
        ("sqlalchemy (no multi-row RETURNING)", {"driver": 0, "sqlalchemy": 1}),
    ],
)
def test_rows_written_through_the_driver_equal_the_sqlalchemy_path(
    store: Store, monkeypatch: pytest.MonkeyPatch, path: str, statements: dict[str, int]
) -> None:
    records = [make_record("a"), make_multi_round_record("b"), _odd_record("c"), make_record("d", llm=False)]
    cases = {r.case: {"prompt": r.case} for r in records}
    new_run = store.runs.begin("suite", cases=cases)
    old_run = store.runs.begin("suite", cases=cases)
    monkeypatch.setattr(rows_module, "now", lambda: RECORDED_AT)
    plan = rows_module.results_insert(store.engine.dialect)
    assert plan is not None  # both test databases return rows from a multi-row INSERT
    if path != "driver":
        chosen = None if path.startswith("sqlalchemy") else dataclasses.replace(plan, rows_per_statement=2)
        monkeypatch.setattr(rows_module, "results_insert", lambda _dialect: chosen)
    counts = _count_results_inserts(store)

    # "a" twice in one batch: its first record is the one written.
    assert store.results.record_many(new_run, [*records, make_record("a", cost=9.0)]) == [True] * 4 + [False]
    assert counts == statements
    with store.engine.begin() as connection:
        _legacy_write(connection, old_run, records)

    for table in (results_table, round_results_table, judgments_table):
        new, old = _stored(store, table, new_run), _stored(store, table, old_run)
        assert new == old, table.name
        assert new, table.name
    assert store.results.read_all(new_run) == store.results.read_all(old_run)


def test_a_failing_judgment_insert_rolls_back_the_whole_batch(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {}, "b": {}})
    # A None reasoning breaks judgments.reasoning NOT NULL on both databases, after the results rows are in.
    broken = Judgment(Status.PASS, judge="x", reasoning=None)  # type: ignore[arg-type]
    bad = CaseRecord("b", Judgment(Status.PASS, children={"x": broken}))

    with pytest.raises(Exception, match=r"(?i)null"):
        store.results.record_many(run_id, [make_record("a"), bad])
    assert store.results.recorded(run_id) == set()
    assert store.results.record_many(run_id, [make_record("a")]) == [True]


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


@pytest.mark.parametrize("url", ["sqlite://", "postgresql+psycopg://"])
def test_the_results_insert_stays_under_the_parameter_limit_and_needs_returning(url: str) -> None:
    dialect = create_engine(url).dialect
    placeholder = "?" if dialect.name == "sqlite" else "%s"
    columns = len(RESULT_INSERT_COLUMNS)
    plan = results_insert(dialect)
    assert plan is not None
    assert 1 < plan.rows_per_statement <= dialect.insertmanyvalues_max_parameters // columns
    sql = plan.statement(3)
    assert sql.count(placeholder) == 3 * columns
    assert sql.count("), (") == 2
    assert " ON CONFLICT (run_id, case_name) DO NOTHING RETURNING " in sql

    dialect.insertmanyvalues_max_parameters = 999  # SQLite before 3.32 allows 999 bound parameters
    smaller = results_insert(dialect)
    assert smaller is not None
    assert smaller.rows_per_statement == 999 // columns
    dialect.insert_returning = False  # SQLite before 3.35: no RETURNING, the writer keeps SQLAlchemy's insert
    assert results_insert(dialect) is None
