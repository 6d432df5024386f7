"""The queue of traces received over OTLP, kept in the store so that a killed server loses none.

The receiver writes each accepted request's traces (``enqueue``, or several requests' at once:
``enqueue_groups``) before it answers 2xx;
the worker asks which traces are ready (``ready``: the root came and nothing more for
``settle`` seconds), claims one (``claim``), judges it, and deletes it (``done``) in the
same step as its results are recorded. A claim older than ``reclaim_after`` is free again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import case, delete, func, insert, or_, select, update

from jurybox.store._cases import now
from jurybox.store._repository import Repository
from jurybox.store._schema import trace_queue_table

DEFAULT_RECLAIM_AFTER = timedelta(minutes=10)


class TraceQueueRepository(Repository):
    """The ``trace_queue`` table."""

    def enqueue(self, fragments: Sequence[tuple[str, bool, str]], *, max_queued: int) -> bool:
        """Add (trace id, holds the root span, spans as JSON) rows, all or none.

        Returns:
            False, writing nothing, when the queue already holds ``max_queued`` rows (the receiver answers 429).
        """
        return self.enqueue_groups([fragments], max_queued=max_queued)[0]

    def enqueue_groups(self, groups: Sequence[Sequence[tuple[str, bool, str]]], *, max_queued: int) -> list[bool]:
        """Several requests' rows in one transaction (group commit): each group all or none, in order.

        Returns:
            For each group, whether it was written: False for one that would take the queue past
            ``max_queued`` (that request is answered 429; a smaller one after it may still fit).
        """
        if not any(groups):
            return [True] * len(groups)
        kept: list[bool] = []
        with self._write() as connection:
            queued = connection.execute(select(func.count()).select_from(trace_queue_table)).scalar_one()
            received = now()
            rows: list[dict[str, object]] = []
            for fragments in groups:
                fits = queued + len(fragments) <= max_queued or not fragments
                kept.append(fits)
                if fits:
                    queued += len(fragments)
                    rows.extend(
                        {"trace_id": trace_id, "has_root": has_root, "spans": spans, "received_at": received}
                        for trace_id, has_root, spans in fragments
                    )
            if rows:
                connection.execute(insert(trace_queue_table), rows)
        return kept

    def size(self) -> int:
        """Rows waiting (a trace may be several)."""
        with self._read() as connection:
            return int(connection.execute(select(func.count()).select_from(trace_queue_table)).scalar_one())

    def ready(
        self, *, settle: timedelta, limit: int = 100, reclaim_after: timedelta = DEFAULT_RECLAIM_AFTER
    ) -> list[str]:
        """Trace ids whose root came, with nothing more for ``settle``, not claimed (or claimed too long ago)."""
        moment = now()
        table = trace_queue_table
        free = or_(table.c.claimed_at.is_(None), table.c.claimed_at < moment - reclaim_after)
        query = (
            select(table.c.trace_id)
            .where(free)
            .group_by(table.c.trace_id)
            .having(func.max(case((table.c.has_root, 1), else_=0)) > 0)
            .having(func.max(table.c.received_at) <= moment - settle)
            .order_by(func.min(table.c.received_at))
            .limit(limit)
        )
        with self._read() as connection:
            return [str(row) for row in connection.execute(query).scalars()]

    def claim(self, trace_id: str, *, reclaim_after: timedelta = DEFAULT_RECLAIM_AFTER) -> list[str]:
        """Claim a trace's rows for this worker; their spans JSON ([] when another worker has it)."""
        moment = now()
        table = trace_queue_table
        free = or_(table.c.claimed_at.is_(None), table.c.claimed_at < moment - reclaim_after)
        with self._write() as connection:
            claimed = connection.execute(
                update(table).where(table.c.trace_id == trace_id, free).values(claimed_at=moment)
            ).rowcount
            if not claimed:
                return []
            rows = connection.execute(
                select(table.c.spans).where(table.c.trace_id == trace_id).order_by(table.c.id)
            ).scalars()
            return [str(row) for row in rows]

    def done(self, trace_id: str) -> None:
        """Forget a judged (or dropped) trace."""
        with self._write() as connection:
            connection.execute(delete(trace_queue_table).where(trace_queue_table.c.trace_id == trace_id))
