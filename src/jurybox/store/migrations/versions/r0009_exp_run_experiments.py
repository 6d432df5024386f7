"""Experiments: a run may be one variant of an experiment (``jurybox run`` of a suite with ``variants:``).

Each variant of an experiment is stored as an ordinary run (so history, gates,
compare and the dashboard read it unchanged); two columns tie it to its
experiment and say which variant it is. The experiment is the set of runs with
one ``experiment_id``: no table of its own to keep in step.

Revision ID: 0009_exp_run_experiments
Revises: 0008_suite_settings
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009_exp_run_experiments"
down_revision: str | None = "0008_suite_settings"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not batch mode: a batch copy of ``runs`` would cascade to its results.
    op.add_column("runs", sa.Column("experiment_id", sa.String(64), nullable=True))
    op.add_column("runs", sa.Column("variant", sa.String(255), nullable=True))
    op.create_index("ix_runs_experiment", "runs", ["experiment_id"])


def downgrade() -> None:
    op.drop_index("ix_runs_experiment", table_name="runs")
    op.drop_column("runs", "variant")
    op.drop_column("runs", "experiment_id")
