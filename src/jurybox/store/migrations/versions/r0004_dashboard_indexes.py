"""Indexes for the dashboard's reads of big runs: a run's results by status, its verdicts by depth and tier.

``results(run_id, status, case_name)`` finds a run's cases of one status (the
failing ones, a status filter, the counts per status) without reading the
run's other rows, in name order. ``judgments(run_id, depth, tier, status, score)``
holds every column the per-tier pass rates and mean scores read, so they are
computed from the index alone instead of from every verdict row of the run.

Revision ID: 0004_dashboard_indexes
Revises: 0003_single_verdict_rows
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

revision: str = "0004_dashboard_indexes"
down_revision: str | None = "0003_single_verdict_rows"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # IF NOT EXISTS: a team may have created them by hand on a big store already; a second copy would
    # only slow every write.
    op.create_index("ix_results_run_status_case", "results", ["run_id", "status", "case_name"], if_not_exists=True)
    op.create_index(
        "ix_judgments_run_depth_tier",
        "judgments",
        ["run_id", "depth", "tier", "status", "score"],
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_index("ix_judgments_run_depth_tier", table_name="judgments", if_exists=True)
    op.drop_index("ix_results_run_status_case", table_name="results", if_exists=True)
