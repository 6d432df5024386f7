"""Run metrics: a run's pass rates (overall and per cascade tier) and the cases behind a low one.

These are the numbers baselines and regression checks (``_baselines``) compare.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, func, select

from jurybox.core import Status
from jurybox.store._models import Rate
from jurybox.store._repository import Repository
from jurybox.store._schema import judgments_table, results_table

FAILING_LIMIT = 50
"""Failing cases a lesson keeps; the lesson says how many more there were."""


class MetricRepository(Repository):
    """Pass rates read from the ``results`` and ``judgments`` tables (``store.metrics``)."""

    def rates(self, run_id: str) -> dict[str, Rate]:
        """Pass rates of a run: ``overall`` (cases) and one per cascade tier.

        A tier's rate counts the judgments of that tier (the top-level children
        of cascade judgments), one per case, or per round when rounds are
        judged by a cascade; only cases that reached the tier count.
        """
        passed = func.sum(case((judgments_table.c.status == Status.PASS.value, 1), else_=0))
        with self._read() as connection:
            metrics: dict[str, Rate] = {}
            total, passes = connection.execute(
                select(func.count(), func.sum(case((results_table.c.status == Status.PASS.value, 1), else_=0))).where(
                    results_table.c.run_id == run_id
                )
            ).one()
            if total:
                metrics["overall"] = Rate(int(passes or 0), int(total))
            rows = connection.execute(
                select(judgments_table.c.tier, func.count(), passed)
                .where(
                    judgments_table.c.run_id == run_id,
                    judgments_table.c.depth == 1,
                    judgments_table.c.tier.is_not(None),
                )
                .group_by(judgments_table.c.tier)
                .order_by(judgments_table.c.tier)
            )
            for tier, count, tier_passed in rows:
                metrics[str(tier)] = Rate(int(tier_passed or 0), int(count))
        return metrics

    def failing(self, run_id: str, metric: str, *, limit: int = FAILING_LIMIT) -> tuple[list[dict[str, Any]], int]:
        """Cases that did not pass ``metric`` (``overall`` or a tier) with their reasons, and how many in all."""
        with self._read() as connection:
            if metric == "overall":
                condition = and_(results_table.c.run_id == run_id, results_table.c.status != Status.PASS.value)
                total = connection.execute(
                    select(func.count()).select_from(results_table).where(condition)
                ).scalar_one()
                rows = connection.execute(
                    select(
                        results_table.c.case_name,
                        results_table.c.status,
                        results_table.c.reasoning,
                        results_table.c.error,
                    )
                    .where(condition)
                    .order_by(results_table.c.id)
                    .limit(limit)
                ).all()
                failing = [
                    {"case": name, "status": status, "reason": error or reasoning}
                    for name, status, reasoning, error in rows
                ]
                return failing, int(total)
            condition = and_(
                judgments_table.c.run_id == run_id,
                judgments_table.c.depth == 1,
                judgments_table.c.tier == metric,
                judgments_table.c.status != Status.PASS.value,
            )
            total = connection.execute(select(func.count()).select_from(judgments_table).where(condition)).scalar_one()
            tier_rows = connection.execute(
                select(
                    results_table.c.case_name,
                    judgments_table.c.round_index,
                    judgments_table.c.status,
                    judgments_table.c.reasoning,
                )
                .join(results_table, results_table.c.id == judgments_table.c.result_id)
                .where(condition)
                .order_by(judgments_table.c.id)
                .limit(limit)
            ).all()
            failing = []
            for name, round_index, status, reasoning in tier_rows:
                label = name if round_index is None else f"{name} (round {round_index + 1})"
                failing.append({"case": label, "status": status, "reason": reasoning})
            return failing, int(total)
