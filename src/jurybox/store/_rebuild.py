"""Stored rows back to records: judgment trees, contexts and whole ``CaseRecord``s rebuilt.

The core gives ``to_dict`` for judgments and contexts; reading a judgment tree back is
the store's job, so ``judgment_from_dict`` lives here rather than in the zero-dependency
core. What writes those rows is ``_record_rows``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy import Table, Text, bindparam, select, type_coerce
from sqlalchemy.engine import Connection, Row

from jurybox.core import (
    BooleanScore,
    CaseRecord,
    CategoricalScore,
    Check,
    Context,
    ErrorInfo,
    Judgment,
    NumericScore,
    RoundRecord,
    Score,
    Status,
)
from jurybox.store._models import as_utc
from jurybox.store._schema import results_table, round_results_table


def score_from_dict(data: Mapping[str, Any] | None) -> Score | None:
    """Rebuild a score from ``score_to_dict`` output."""
    if data is None:
        return None
    kind = data.get("kind")
    if kind == "numeric":
        # Numbers as stored: a judge's integer 2 on a 0..2 scale reads back as 2, not 2.0, so a
        # report from the store is the same text as the one written during the run.
        return NumericScore(data["value"], data.get("min", 0.0), data.get("max", 1.0))
    if kind == "boolean":
        return BooleanScore(bool(data["value"]))
    if kind == "categorical":
        return CategoricalScore(str(data["value"]), dict(data.get("categories") or {}))
    raise ValueError(f"unknown score kind {kind!r} in stored judgment (expected boolean, numeric or categorical)")


_STATUSES: dict[str, Status] = {status.value: status for status in Status}


def judgment_from_dict(data: Mapping[str, Any]) -> Judgment:
    """Rebuild a judgment tree from ``Judgment.to_dict`` output (the derived ``value`` is ignored)."""
    status = data["status"]
    score = data.get("score")
    error = data.get("error")
    checks = data.get("checks")
    children = data.get("children")
    # Judgment copies children and metadata into read-only mappings itself: no copy here.
    return Judgment(
        (_STATUSES.get(status) if isinstance(status, str) else None) or Status(status),
        score=None if score is None else score_from_dict(score),
        reasoning=data.get("reasoning") or "",
        checks=tuple(Check(str(c["name"]), bool(c["passed"]), str(c.get("message") or "")) for c in checks)
        if checks
        else (),
        judge=data.get("judge") or "",
        confidence=data.get("confidence"),
        degraded=bool(data.get("degraded", False)),
        error=ErrorInfo(str(error["type"]), str(error["message"]), str(error.get("traceback") or ""))
        if error
        else None,
        children={str(name): judgment_from_dict(child) for name, child in children.items()} if children else {},
        decided_by=data.get("decided_by"),
        metadata=data.get("metadata") or {},
    )


def context_from_json(data: Mapping[str, Any]) -> Context:
    """Rebuild a context stored from ``Context.to_dict``."""
    return Context.from_dict(data)


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
        # With calls of unknown price the column holds the known part; the record's cost is unknown (None).
        cost=None if getattr(row, "unpriced_calls", None) else row.cost,
        judge_calls=row.judge_calls,
        tags=tuple(str(tag) for tag in row.tags or ()),
        error=row.error,
        started_at=as_utc(row.started_at),
        metadata=dict(row.extra or {}),
    )
