"""Between records and rows: what ``record_case`` writes and what ``run_records`` rebuilds.

The hot-path statements are built once here: ``record_case`` runs once per
case, and constructing a statement with literal values costs more than
executing it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Table, Text, bindparam, insert, select, type_coerce, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Row

from jurybox.core._context import Context
from jurybox.core._judgment import Judgment
from jurybox.store._cases import now
from jurybox.store._models import as_utc
from jurybox.store._records import CaseRecord, RoundRecord
from jurybox.store._schema import judgments_table, results_table, round_results_table, run_cases_table, runs_table
from jurybox.store._serialize import (
    RawJson,
    context_from_json,
    encode_json,
    judgment_from_dict,
    metadata_cost,
    to_jsonable,
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
INSERT_ROUND = insert(round_results_table)
INSERT_JUDGMENT = insert(judgments_table)


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


def _error_text(judgment: Judgment) -> str | None:
    if judgment.error is None:
        return None
    return f"{judgment.error.type}: {judgment.error.message}"


NO_CHECKS = RawJson("[]")


def judgment_rows(root: Judgment, round_index: int | None) -> Iterator[dict[str, Any]]:
    """One row per node of a judgment tree; ``tier`` is set below a cascade's root."""
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
            "checks": encode_json([check.to_dict() for check in node.checks]) if node.checks else NO_CHECKS,
            "tokens": usage_tokens(node.metadata),
            "cost": metadata_cost(node.metadata),
            "confidence": node.confidence,
            "degraded": node.degraded,
        }


class JsonForms:
    """Encoded JSON of the judgments and contexts of one record, each encoded once.

    A single-round case's round holds the very same judgment and context objects
    as the case; encoding them once instead of twice is a fifth of a write's CPU.
    """

    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, RawJson]] = {}

    def judgment(self, judgment: Judgment) -> RawJson:
        return self._form(judgment, Judgment.to_dict)

    def context(self, context: Context) -> RawJson:
        return self._form(context, Context.to_dict)

    def _form(self, value: Any, to_dict: Callable[[Any], Any]) -> RawJson:
        # Keyed by id with the object kept alive alongside, so an id is never reused within one record.
        known = self._forms.get(id(value))
        if known is None:
            known = self._forms[id(value)] = (value, encode_json(to_dict(value)))
        return known[1]


def round_row(record: RoundRecord, forms: JsonForms | None = None) -> dict[str, Any]:
    """The ``round_results`` row of one round (``result_id`` is filled in by the writer)."""
    forms = forms or JsonForms()
    context = record.context
    return {
        "round_index": record.index,
        "prompt": to_jsonable(record.prompt),
        "status": record.judgment.status.value,
        "score": record.judgment.value,
        "reasoning": to_jsonable(record.judgment.reasoning),
        "duration": context.duration,
        "tokens": usage_tokens(context.metadata),
        "cost": context.cost,
        "error": _error_text(record.judgment),
        "follow_ups": encode_json([list(pair) for pair in record.follow_ups]),
        "judgment": forms.judgment(record.judgment),
        "context": forms.context(context),
    }


def result_values(run_id: str, record: CaseRecord, forms: JsonForms | None = None) -> dict[str, Any]:
    """The ``results`` row of a record (``case_id`` is filled in by the writer)."""
    forms = forms or JsonForms()
    context = record.context
    return {
        "run_id": run_id,
        "case_name": record.case,
        "status": record.judgment.status.value,
        "score": record.judgment.value,
        "reasoning": to_jsonable(record.judgment.reasoning),
        "decided_by": record.judgment.decided_by,
        "duration": record.duration,
        "tokens": record.tokens,
        "cost": record.cost,
        "judge_calls": record.judge_calls,
        "error": to_jsonable(record.error),
        "tags": encode_json(list(record.tags)),
        "extra": encode_json(record.metadata),
        "judgment": forms.judgment(record.judgment),
        "context": forms.context(context) if context is not None else None,
        "started_at": record.started_at,
        "recorded_at": now(),
    }


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
        if type(value) is not str:
            return judgment_from_dict(value)
        known = self._judgments.get(value)
        if known is None:
            known = self._judgments[value] = judgment_from_dict(json.loads(value))
        return known

    def context(self, value: Any) -> Context:
        if type(value) is not str:
            return context_from_json(value)
        known = self._contexts.get(value)
        if known is None:
            known = self._contexts[value] = context_from_json(json.loads(value))
        return known

    def optional_context(self, value: Any) -> Context | None:
        """A case's context, or None when it has none (SQL NULL or the JSON ``null`` SQLite keeps as text)."""
        return None if value is None or value == "null" else self.context(value)


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
