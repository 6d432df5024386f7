"""Between records and rows: what ``record_case`` writes and what ``run_records`` rebuilds.

The hot-path statements are built once here: ``record_case`` runs once per
case, and constructing a statement with literal values costs more than
executing it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Row

from jurybox.core._context import Context
from jurybox.core._judgment import Judgment
from jurybox.store._cases import now
from jurybox.store._models import as_utc
from jurybox.store._records import CaseRecord, RoundRecord
from jurybox.store._schema import judgments_table, results_table, round_results_table, run_cases_table, runs_table
from jurybox.store._serialize import (
    context_from_json,
    context_to_json,
    judgment_from_dict,
    judgment_to_json,
    metadata_cost,
    to_jsonable,
    usage_tokens,
)


def dialect_insert(connection: Connection, table: Table) -> Any:
    """The dialect's INSERT (it has ``on_conflict_do_nothing``) for the connection's database."""
    return (postgresql if connection.dialect.name == "postgresql" else sqlite).insert(table)


RUN_STATUS_AND_VERSION = select(
    runs_table.c.status,
    select(run_cases_table.c.case_id)
    .where(run_cases_table.c.run_id == runs_table.c.id, run_cases_table.c.case_name == bindparam("case_name"))
    .scalar_subquery(),
).where(runs_table.c.id == bindparam("run_id"))
RESULT_EXISTS = select(results_table.c.id).where(
    results_table.c.run_id == bindparam("run_id"), results_table.c.case_name == bindparam("case_name")
)
REOPEN_RUN = update(runs_table).where(runs_table.c.id == bindparam("run_id")).values(status="running", finished_at=None)
INSERT_ROUND = insert(round_results_table)
INSERT_JUDGMENT = insert(judgments_table)


@functools.cache
def insert_result(dialect: str) -> Any:
    """INSERT of one result that does nothing on a duplicate (run, case) and returns the new id."""
    module = postgresql if dialect == "postgresql" else sqlite
    return (
        module.insert(results_table)
        .on_conflict_do_nothing(index_elements=["run_id", "case_name"])
        .returning(results_table.c.id)
    )


def _error_text(judgment: Judgment) -> str | None:
    if judgment.error is None:
        return None
    return f"{judgment.error.type}: {judgment.error.message}"


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
            "checks": [to_jsonable(check.to_dict()) for check in node.checks],
            "tokens": usage_tokens(node.metadata),
            "cost": metadata_cost(node.metadata),
            "confidence": node.confidence,
            "degraded": node.degraded,
        }


class JsonForms:
    """JSON forms of the judgments and contexts of one record, each computed once.

    A single-round case's round holds the very same judgment and context objects
    as the case; converting them once instead of twice is a fifth of a write's CPU.
    """

    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, Any]] = {}

    def judgment(self, judgment: Judgment) -> Any:
        return self._form(judgment, judgment_to_json)

    def context(self, context: Context) -> Any:
        return self._form(context, context_to_json)

    def _form(self, value: Any, convert: Callable[[Any], Any]) -> Any:
        # Keyed by id with the object kept alive alongside, so an id is never reused within one record.
        known = self._forms.get(id(value))
        if known is None:
            known = self._forms[id(value)] = (value, convert(value))
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
        "follow_ups": to_jsonable([list(pair) for pair in record.follow_ups]),
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
        "tags": to_jsonable(list(record.tags)),
        "extra": to_jsonable(record.metadata),
        "judgment": forms.judgment(record.judgment),
        "context": forms.context(context) if context is not None else None,
        "started_at": record.started_at,
        "recorded_at": now(),
    }


def rounds_of(connection: Connection, result_ids: list[int]) -> dict[int, tuple[RoundRecord, ...]]:
    """The rounds of some results, rebuilt, by result id."""
    rounds: dict[int, list[RoundRecord]] = {}
    rows = connection.execute(
        select(round_results_table)
        .where(round_results_table.c.result_id.in_(result_ids))
        .order_by(round_results_table.c.result_id, round_results_table.c.round_index)
    )
    for row in rows:
        rounds.setdefault(row.result_id, []).append(
            RoundRecord(
                index=row.round_index,
                prompt=row.prompt,
                context=context_from_json(row.context),
                judgment=judgment_from_dict(row.judgment),
                follow_ups=tuple((str(q), str(a)) for q, a in row.follow_ups),
            )
        )
    return {key: tuple(value) for key, value in rounds.items()}


def record_from_row(row: Row[Any], rounds: tuple[RoundRecord, ...]) -> CaseRecord:
    """Rebuild a CaseRecord from its ``results`` row and its rounds."""
    return CaseRecord(
        case=row.case_name,
        judgment=judgment_from_dict(row.judgment),
        rounds=rounds,
        context=context_from_json(row.context) if row.context is not None else None,
        duration=row.duration,
        tokens=row.tokens,
        cost=row.cost,
        judge_calls=row.judge_calls,
        tags=tuple(str(tag) for tag in row.tags or ()),
        error=row.error,
        started_at=as_utc(row.started_at),
        metadata=dict(row.extra or {}),
    )
