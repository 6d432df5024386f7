"""A finished case as rows, and the one transaction that writes a batch of them.

The store's hot path, in one place: ``prepare`` turns a ``CaseRecord`` into its
``results`` row, its ``round_results`` rows and one ``judgments`` row per node of each
verdict tree (JSON forms from ``_json``, each computed once); ``insert_records`` writes a
batch of prepared records with a fixed number of statements, straight to the driver.
The statements are built once here: ``record_many`` runs once per batch of finished
cases, and constructing a statement with literal values costs more than executing it.
What reads these rows back is ``_rebuild``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Boolean, Float, Select, Table, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Dialect

from jurybox.core import CaseRecord, Context, Judgment, RoundRecord
from jurybox.store._cases import chunked, now
from jurybox.store._errors import StoreError
from jurybox.store._json import RawJson, db_jsonable, json_text
from jurybox.store._schema import judgments_table, results_table, round_results_table, run_cases_table, runs_table

PreparedRows = tuple[str, tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A record's case name, its result row, and its round and judgment rows, without what only the insert knows."""

# FOR SHARE (PostgreSQL; SQLite's write lock already serialises): a run that is finishing waits for
# the writes that saw it running, so the totals ``finish`` writes on its row count every one of them.
RUN_STATUS = select(runs_table.c.status).where(runs_table.c.id == bindparam("run_id")).with_for_update(read=True)
CASE_VERSIONS = select(run_cases_table.c.case_name, run_cases_table.c.case_id).where(
    run_cases_table.c.run_id == bindparam("run_id"),
    run_cases_table.c.case_name.in_(bindparam("names", expanding=True)),
)
RESULTS_NAMED = select(results_table.c.case_name).where(
    results_table.c.run_id == bindparam("run_id"),
    results_table.c.case_name.in_(bindparam("names", expanding=True)),
)
REOPEN_RUN = update(runs_table).where(runs_table.c.id == bindparam("run_id")).values(status="running", finished_at=None)

ROUND_COLUMNS = (
    "result_id",
    "round_index",
    "prompt",
    "status",
    "score",
    "reasoning",
    "duration",
    "tokens",
    "cost",
    "error",
    "follow_ups",
    "judgment",
    "context",
)
"""``round_results`` columns in table order: ``round_values`` gives all but the first."""

JUDGMENT_COLUMNS = (
    "run_id",
    "result_id",
    "round_index",
    "path",
    "depth",
    "judge",
    "tier",
    "status",
    "score",
    "reasoning",
    "checks",
    "tokens",
    "cost",
    "confidence",
    "degraded",
)
"""``judgments`` columns in table order: ``judgment_values`` gives all but the first two."""

# A pyformat driver (psycopg) also takes its positional twin, so rows can be tuples, not dicts.
_POSITIONAL_STYLE = {"pyformat": "format"}


def driver_insert(dialect: Dialect, table: Table, columns: tuple[str, ...]) -> str:
    """The INSERT SQLAlchemy would send for ``columns`` of ``table``, with positional parameters.

    For ``Connection.exec_driver_sql`` with a list of tuples (the driver's
    ``executemany``): no per-value bind processing. So every value must already
    be what the column's bind processor would make of it: JSON as its text,
    and nothing else but plain ``str``, ``int``, ``float``, ``bool`` or None.
    """
    dialect_class: Any = type(dialect)  # typeshed calls a class unhashable; it is, and it is the cache key
    return _driver_insert(dialect_class, dialect.paramstyle, table, columns)


@functools.cache
def _driver_insert(dialect_class: type[Any], paramstyle: str, table: Table, columns: tuple[str, ...]) -> str:
    dialect = dialect_class(paramstyle=_POSITIONAL_STYLE.get(paramstyle, paramstyle))
    for name in columns:
        column_type = table.c[name].type
        # Those processors leave our values as they are: sqlite3 stores a bool as 1/0 as Boolean's would,
        # a FLOAT column's REAL affinity does Float's float(), and JSON values arrive as their text.
        if column_type.dialect_impl(dialect).bind_processor(dialect) is not None and not isinstance(
            column_type, JSON | Boolean | Float
        ):
            raise TypeError(f"{table.name}.{name} ({column_type}) needs bind processing; insert it with SQLAlchemy")
    compiled = insert(table).compile(dialect=dialect, column_keys=list(columns), for_executemany=True)
    if not dialect.positional or list(compiled.positiontup or ()) != list(columns):
        raise ValueError(f"{table.name}: the INSERT does not take {columns} positionally, in that order")
    return compiled.string


@functools.cache
def insert_result(dialect: str) -> Any:
    """INSERT of results that skips a duplicate (run, case) and returns ``(case_name, id)`` of each new row.

    Executed with a list of rows it is one multi-row statement (SQLAlchemy's
    "insertmanyvalues"), so a batch of cases costs one round trip, not one each.
    """
    module = postgresql if dialect == "postgresql" else sqlite
    return (
        module.insert(results_table)
        .on_conflict_do_nothing(index_elements=["run_id", "case_name"])
        .returning(results_table.c.case_name, results_table.c.id)
    )


RESULT_INSERT_COLUMNS = tuple(column.name for column in results_table.c if column.name != "id")
"""``results`` columns the writer inserts, in table order."""

_JSON_RESULT_COLUMNS = frozenset(name for name in RESULT_INSERT_COLUMNS if isinstance(results_table.c[name].type, JSON))


@dataclass(frozen=True)
class ResultsInsert:
    """``insert_result`` as SQL for the driver: one multi-row ``VALUES`` list, rows as flat parameters.

    Built by ``results_insert``. The values of a row are ``RESULT_INSERT_COLUMNS``
    with JSON as its text; ``parameters`` applies the other columns' bind processors
    (SQLite's DATETIME text, for one), so the driver gets what SQLAlchemy would send.
    """

    head: str
    row: str
    tail: str
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]
    rows_per_statement: int
    """Rows one statement takes: SQLAlchemy's own page size and bound-parameter limit for the dialect."""

    def statement(self, rows: int) -> str:
        """The INSERT of ``rows`` rows."""
        return self.head + ", ".join([self.row] * rows) + self.tail

    def parameters(self, rows: Sequence[tuple[Any, ...]]) -> tuple[Any, ...]:
        """The rows' values, bind-processed, one after another."""
        if not self.processors:
            return tuple(value for row in rows for value in row)
        flat: list[Any] = []
        for row in rows:
            start = len(flat)
            flat.extend(row)
            for index, process in self.processors:
                flat[start + index] = process(flat[start + index])
        return tuple(flat)


def results_insert(dialect: Dialect) -> ResultsInsert | None:
    """The driver-level ``insert_result`` for ``dialect``, or None when it has no multi-row RETURNING.

    SQLite before 3.35 has no RETURNING (SQLAlchemy then says ``insert_returning`` is
    false); the writer keeps SQLAlchemy's statement for it.
    """
    if not (dialect.insert_returning and dialect.supports_multivalues_insert):
        return None
    per_statement = min(
        dialect.insertmanyvalues_page_size, dialect.insertmanyvalues_max_parameters // len(RESULT_INSERT_COLUMNS)
    )
    dialect_class: Any = type(dialect)  # as in driver_insert: the class is the cache key
    return _results_insert(dialect_class, dialect.paramstyle, max(1, per_statement))


@functools.cache
def _results_insert(dialect_class: type[Any], paramstyle: str, rows_per_statement: int) -> ResultsInsert:
    dialect = dialect_class(paramstyle=_POSITIONAL_STYLE.get(paramstyle, paramstyle))
    compiled = insert_result(dialect.name).compile(dialect=dialect, column_keys=list(RESULT_INSERT_COLUMNS))
    if not dialect.positional or list(compiled.positiontup or ()) != list(RESULT_INSERT_COLUMNS):
        raise ValueError(f"results: the INSERT does not take {RESULT_INSERT_COLUMNS} positionally, in that order")
    head, row, tail = _split_values(compiled.string)
    processors = []
    for index, name in enumerate(RESULT_INSERT_COLUMNS):
        column_type = results_table.c[name].type
        process = column_type.dialect_impl(dialect).bind_processor(dialect)
        # JSON values arrive as their text already; its processor would encode that text as a JSON string.
        if process is not None and name not in _JSON_RESULT_COLUMNS:
            processors.append((index, process))
    return ResultsInsert(head, row, tail, tuple(processors), rows_per_statement)


def _split_values(sql: str) -> tuple[str, str, str]:
    """``INSERT ... VALUES (<row>) <tail>`` cut into ``INSERT ... VALUES ``, ``(<row>)`` and `` <tail>``."""
    marker = " VALUES ("
    start = sql.index(marker) + len(marker) - 1
    depth = 0
    for end in range(start, len(sql)):  # the row's own closing parenthesis: a cast may hold parentheses too
        if sql[end] == "(":
            depth += 1
        elif sql[end] == ")":
            depth -= 1
            if depth == 0:
                return sql[:start], sql[start : end + 1], sql[end + 1 :]
    raise ValueError(f"no complete VALUES row in {sql!r}")


def result_parameters(rows: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Rows of ``RESULT_INSERT_COLUMNS`` as parameters of ``insert_result`` (SQLAlchemy's own path).

    JSON text is wrapped as ``RawJson``, which the engine's serializer passes through as it is.
    """
    return [
        {
            name: RawJson(value) if name in _JSON_RESULT_COLUMNS else value
            for name, value in zip(RESULT_INSERT_COLUMNS, row, strict=True)
        }
        for row in rows
    ]


def _error_text(judgment: Judgment) -> str | None:
    if judgment.error is None:
        return None
    # Through to_jsonable like every other text column: an error may quote a reply holding NUL,
    # which PostgreSQL text refuses (and the whole batch with it).
    text: str = db_jsonable(f"{judgment.error.type}: {judgment.error.message}")
    return text


def judgment_values(root: Judgment, round_index: int | None) -> Iterator[tuple[Any, ...]]:
    """One row per node of a judgment tree: ``JUDGMENT_COLUMNS`` from ``round_index`` on.

    The writer puts ``run_id`` and ``result_id`` in front; ``tier`` is set below a cascade's root.
    """
    cascade = root.decided_by is not None
    for path, node in root.walk():
        metadata = node.metadata
        yield (
            round_index,
            path,
            path.count("/") + 1 if path else 0,
            node.judge or path.rsplit("/", 1)[-1],
            path.split("/", 1)[0] if cascade and path else None,
            node.status.value,
            node.value,
            db_jsonable(node.reasoning),
            json_text([check.to_dict() for check in node.checks]) if node.checks else "[]",
            usage_tokens(metadata),
            metadata_cost(metadata),
            node.confidence,
            node.degraded,
        )


class JsonForms:
    """JSON text of the judgments and contexts of one record, each encoded once.

    A single-round case's round holds the very same judgment and context objects
    as the case; encoding them once instead of twice is a fifth of a write's CPU.
    """

    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, str]] = {}

    def judgment(self, judgment: Judgment) -> str:
        return self._form(judgment, Judgment.to_dict)

    def context(self, context: Context) -> str:
        return self._form(context, Context.to_dict)

    def _form(self, value: Any, to_dict: Callable[[Any], Any]) -> str:
        # Keyed by id with the object kept alive alongside, so an id is never reused within one record.
        known = self._forms.get(id(value))
        if known is None:
            known = self._forms[id(value)] = (value, json_text(to_dict(value)))
        return known[1]


def round_values(record: RoundRecord, forms: JsonForms | None = None) -> tuple[Any, ...]:
    """The ``round_results`` row of one round: ``ROUND_COLUMNS`` but the writer's ``result_id``."""
    forms = forms or JsonForms()
    context = record.context
    judgment = record.judgment
    return (
        record.index,
        db_jsonable(record.prompt),
        judgment.status.value,
        judgment.value,
        db_jsonable(judgment.reasoning),
        context.duration,
        usage_tokens(context.metadata),
        context.cost,
        _error_text(judgment),
        json_text([list(pair) for pair in record.follow_ups]) if record.follow_ups else "[]",
        forms.judgment(judgment),
        forms.context(context),
    )


def result_values(record: CaseRecord, forms: JsonForms | None = None) -> tuple[Any, ...]:
    """The ``results`` row of a record: ``RESULT_INSERT_COLUMNS`` from ``status`` on.

    The writer puts ``run_id``, ``case_name`` and ``case_id`` in front. A case
    without a context stores the JSON ``null``, as SQLAlchemy's JSON type does with None.
    """
    forms = forms or JsonForms()
    context = record.context
    judgment = record.judgment
    return (
        judgment.status.value,
        record.score,
        record.pass_mark,
        db_jsonable(judgment.reasoning),
        judgment.decided_by,
        record.duration,
        record.tokens,
        *record.cost_parts,
        record.judge_calls,
        db_jsonable(record.error),
        json_text(list(record.tags)),
        json_text(record.metadata),
        forms.judgment(judgment),
        forms.context(context) if context is not None else "null",
        record.started_at,
        now(),
    )


# Hoisted: ``int | float`` written inside a check builds a new union object on every call, once per node written.
_NUMBER = (int, float)
# OpenAI's, Anthropic's and our own judges' names (an LLM judge's metadata says tokens: {input, output, total}).
_TOKEN_TOTALS = ("total_tokens", "total")
_TOKEN_PARTS = ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens", "input", "output")


def usage_tokens(metadata: Mapping[str, Any]) -> int | None:
    """Tokens a judge or execution reports in its metadata, or None when it reports none.

    Accepts ``tokens`` as a number or as a usage mapping (``total_tokens`` or
    ``total``, or input plus output tokens under OpenAI's, Anthropic's or our
    judges' names), and a ``usage`` mapping of the same shape.
    """
    if not metadata:  # most judges report nothing; this runs once per judgment node written
        return None
    for key in ("tokens", "usage"):
        value = metadata.get(key)
        if value is None or value is True or value is False:
            continue
        if isinstance(value, _NUMBER):
            if math.isfinite(value):
                return int(value)
        elif isinstance(value, Mapping) and value:
            counted = _counted_tokens(value)
            if counted is not None:
                return counted
    return None


def _counted_tokens(usage: Mapping[str, Any]) -> int | None:
    """A usage mapping's total, else the sum of its input and output counts, else None."""
    for name in _TOKEN_TOTALS:
        total = usage.get(name)
        if isinstance(total, _NUMBER) and total is not True and total is not False:
            return int(total)
    counted = None
    for name in _TOKEN_PARTS:
        part = usage.get(name)
        if isinstance(part, _NUMBER) and part is not True and part is not False:
            counted = int(part) if counted is None else counted + int(part)
    return counted


def metadata_cost(metadata: Mapping[str, Any]) -> float | None:
    """``metadata["cost"]`` as a finite float, or None."""
    if not metadata:
        return None
    value = metadata.get("cost")
    if isinstance(value, _NUMBER) and value is not True and value is not False and math.isfinite(value):
        return float(value)
    return None


def prepare(record: CaseRecord) -> PreparedRows:
    """The result row, round rows and judgment rows of a record, JSON forms computed once."""
    forms = JsonForms()
    values = result_values(record, forms)
    rounds = [round_values(r, forms) for r in record.rounds]
    judgments = list(judgment_values(record.judgment, None))
    for r in record.rounds:
        # A single-round case's one verdict is the case's and its round's: its rows are written once,
        # as the case's, so a query over judgments (tier rates, failing cases) counts it once.
        if r.judgment is not record.judgment:
            judgments.extend(judgment_values(r.judgment, r.index))
    return record.case, values, rounds, judgments


def insert_records(connection: Connection, run_id: str, prepared: list[PreparedRows], url: str) -> list[bool]:
    """Write prepared records in the caller's transaction: a fixed number of statements per batch, whatever its size.

    Returns, per record, False when the run already had that case (or the batch named it before).

    Raises:
        StoreError: the run does not exist or is already completed.
    """
    names = [name for name, _, _, _ in prepared]
    status = connection.execute(RUN_STATUS, {"run_id": run_id}).scalar_one_or_none()
    if status is None:
        raise StoreError(f"unknown run {run_id!r} in store {url}")
    if status == "completed":
        if set(names) <= _recorded_among(connection, run_id, names):
            return [False] * len(names)
        raise StoreError(f"run {run_id} is completed; it takes no more results")
    versions = dict(_rows_named(connection, CASE_VERSIONS, run_id, names))
    first: dict[str, int] = {}  # a case named twice in one batch: its first record is the one written
    rows = []
    for index, (name, values, _, _) in enumerate(prepared):
        if name not in first:
            first[name] = index
            rows.append((run_id, name, versions.get(name), *values))
    new_ids = _insert_results(connection, rows)
    if not new_ids:
        return [False] * len(names)
    if status != "running":
        connection.execute(REOPEN_RUN, {"run_id": run_id})
    rounds: list[tuple[Any, ...]] = []
    judgments: list[tuple[Any, ...]] = []
    for name, result_id in new_ids.items():
        _, _, round_rows, judgment_rows = prepared[first[name]]
        round_ids = (result_id,)
        rounds.extend(round_ids + row for row in round_rows)
        judgment_ids = (run_id, result_id)
        judgments.extend(judgment_ids + row for row in judgment_rows)
    # Straight to the driver's executemany: SQLAlchemy's per-value parameter processing cost
    # as much CPU as building the rows, and the prepared values already are what it would bind.
    dialect = connection.dialect
    if rounds:
        connection.exec_driver_sql(driver_insert(dialect, round_results_table, ROUND_COLUMNS), rounds)
    if judgments:
        connection.exec_driver_sql(driver_insert(dialect, judgments_table, JUDGMENT_COLUMNS), judgments)
    return [first[name] == index and name in new_ids for index, name in enumerate(names)]


def _rows_named(connection: Connection, statement: Select[Any], run_id: str, names: Sequence[str]) -> Iterator[Any]:
    """The rows ``statement`` (with ``run_id`` and an expanding ``names`` parameter) finds for ``names``.

    Asked in chunks, so a big batch stays under the database's limit on bound parameters.
    """
    for part in chunked(sorted(set(names))):
        yield from connection.execute(statement, {"run_id": run_id, "names": list(part)})


def _recorded_among(connection: Connection, run_id: str, names: Sequence[str]) -> set[str]:
    """Which of ``names`` the run already has results for."""
    return {row.case_name for row in _rows_named(connection, RESULTS_NAMED, run_id, names)}


def _insert_results(connection: Connection, rows: list[tuple[Any, ...]]) -> dict[str, int]:
    """Insert ``results`` rows (``RESULT_INSERT_COLUMNS``), skipping cases the run already has.

    Returns ``{case_name: id}`` of the rows inserted.
    """
    plan = results_insert(connection.dialect)
    if plan is None:
        statement = insert_result(connection.dialect.name)
        return dict(connection.execute(statement, result_parameters(rows)).all())
    # Straight to the driver, as the round and judgment rows: SQLAlchemy's rendering and per-value
    # processing of this one statement were a tenth of record_many's CPU.
    new_ids: dict[str, int] = {}
    for part in chunked(rows, plan.rows_per_statement):
        new_ids.update(connection.exec_driver_sql(plan.statement(len(part)), plan.parameters(part)).all())
    return new_ids
