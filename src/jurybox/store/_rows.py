"""Between records and rows: what ``record_case`` writes and what ``run_records`` rebuilds.

The hot-path statements are built once here: ``record_case`` runs once per
case, and constructing a statement with literal values costs more than
executing it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import JSON, Boolean, Float, Table, Text, bindparam, insert, select, type_coerce, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Dialect, Row

from jurybox.core import CaseRecord, Context, Judgment, RoundRecord
from jurybox.store._cases import now
from jurybox.store._models import as_utc
from jurybox.store._schema import results_table, round_results_table, run_cases_table, runs_table
from jurybox.store._serialize import (
    RawJson,
    context_from_json,
    db_jsonable,
    json_text,
    judgment_from_dict,
    metadata_cost,
    usage_tokens,
)


def dialect_insert(connection: Connection, table: Table) -> Any:
    """The dialect's INSERT (it has ``on_conflict_do_nothing``) for the connection's database."""
    return (postgresql if connection.dialect.name == "postgresql" else sqlite).insert(table)


RUN_STATUS = select(runs_table.c.status).where(runs_table.c.id == bindparam("run_id"))
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
        judgment.value,
        db_jsonable(judgment.reasoning),
        judgment.decided_by,
        record.duration,
        record.tokens,
        record.cost,
        record.judge_calls,
        db_jsonable(record.error),
        json_text(list(record.tags)),
        json_text(record.metadata),
        forms.judgment(judgment),
        forms.context(context) if context is not None else "null",
        record.started_at,
        now(),
    )


class TreeReader:
    """Judgments and contexts rebuilt from their JSON column values, each distinct text once.

    A single-round case stores its one verdict and context twice, as the case's
    and as its round's, with the same text. Read through one reader, the text is
    decoded and rebuilt once and the round shares the case's objects, as it did
    when the runner recorded it. A value the driver decoded already (psycopg
    decodes JSONB itself) is rebuilt as it is. Use one reader per batch of rows:
    it keeps what it rebuilt.
    """

    def __init__(self) -> None:
        self._judgments: dict[str, Judgment] = {}
        self._contexts: dict[str, Context] = {}

    def judgment(self, value: Any) -> Judgment:
        return _rebuilt(self._judgments, value, judgment_from_dict)

    def context(self, value: Any) -> Context:
        return _rebuilt(self._contexts, value, context_from_json)

    def optional_context(self, value: Any) -> Context | None:
        """A case's context, or None when it has none (SQL NULL or the JSON ``null`` SQLite keeps as text)."""
        return None if value is None or value == "null" else self.context(value)


_T = TypeVar("_T")


def _rebuilt(known: dict[str, _T], value: Any, build: Callable[[Any], _T]) -> _T:
    """``build`` of a column value; stored text is decoded and rebuilt once per reader."""
    if type(value) is not str:  # psycopg decoded JSONB already
        return build(value)
    item = known.get(value)
    if item is None:
        item = known[value] = build(json.loads(value))
    return item


def _as_text(table: Table, *names: str) -> list[Any]:
    """The table's columns, those named as their stored JSON text (no decoding; ``TreeReader`` decodes)."""
    return [type_coerce(column, Text).label(column.name) if column.name in names else column for column in table.c]


RESULT_COLUMNS = _as_text(results_table, "judgment", "context")
"""``results`` columns for ``record_from_row``: the judgment and context as text, for a ``TreeReader``."""

ROUNDS_OF = (
    select(*_as_text(round_results_table, "judgment", "context"))
    .where(round_results_table.c.result_id.in_(bindparam("ids", expanding=True)))
    .order_by(round_results_table.c.result_id, round_results_table.c.round_index)
)


def rounds_of(
    connection: Connection, result_ids: list[int], reader: TreeReader | None = None
) -> dict[int, tuple[RoundRecord, ...]]:
    """The rounds of some results, rebuilt, by result id.

    Args:
        connection: Where to read.
        result_ids: The results.
        reader: Rebuilds the trees; pass the one ``record_from_row`` gets for the same
            rows so a round and its case share what they stored alike.
    """
    reader = reader or TreeReader()
    rounds: dict[int, list[RoundRecord]] = {}
    for row in connection.execute(ROUNDS_OF, {"ids": result_ids}):
        rounds.setdefault(row.result_id, []).append(
            RoundRecord(
                index=row.round_index,
                prompt=row.prompt,
                context=reader.context(row.context),
                judgment=reader.judgment(row.judgment),
                follow_ups=tuple((str(q), str(a)) for q, a in row.follow_ups),
            )
        )
    return {key: tuple(value) for key, value in rounds.items()}


def record_from_row(row: Row[Any], rounds: tuple[RoundRecord, ...], reader: TreeReader | None = None) -> CaseRecord:
    """Rebuild a CaseRecord from its ``results`` row and its rounds.

    The row's judgment and context may be decoded JSON or its text (``RESULT_COLUMNS``).
    """
    reader = reader or TreeReader()
    return CaseRecord(
        case=row.case_name,
        judgment=reader.judgment(row.judgment),
        rounds=rounds,
        context=reader.optional_context(row.context),
        duration=row.duration,
        tokens=row.tokens,
        cost=row.cost,
        judge_calls=row.judge_calls,
        tags=tuple(str(tag) for tag in row.tags or ()),
        error=row.error,
        started_at=as_utc(row.started_at),
        metadata=dict(row.extra or {}),
    )
