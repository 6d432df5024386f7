"""Two runs' comparison kept once computed, and the indexes the comparison's joins read.

* ``run_comparisons``: what the compare page computes of run B against run A, kept by
  the pair of run ids with both runs' finish times (a resumed run finishes again, so a
  kept comparison of an earlier finish is never taken for the new one): the counts of
  each kind of change, the first page of the kind shown first, the aggregates of the
  paired statistics (2x2 table, differences' counts per score, tier and judge), and the
  statistics last computed from them (with the level, resamples and seed). Results
  of a finished run never change, so the figures stay right. ``finish_run`` writes the
  comparison of a run against its baseline; the dashboard writes any other pair it
  computes. Stores without a row compute the comparison as before.
* ``ix_results_run_case_figures``: ``(run_id, case_name, status, score)``, so joining two
  runs' results by case name reads two indexes, never the table's rows.
* ``ix_results_trials``: a partial index of the results that hold repeated trials' counts
  (``extra.trials``), so a comparison finds the few (usually none) without reading every
  result's metadata.

Revision ID: 0014_stored_comparisons
Revises: 0013_web_speed
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0014_stored_comparisons"
down_revision: str | None = "0013_web_speed"
branch_labels: str | None = None
depends_on: str | None = None

# The text of store/_schema.py TRIALS_ROWS (a migration keeps its own copy): the planner must see the query implies it.
TRIALS_ROWS = {"sqlite": "json_type(extra, '$.trials') = 'object'", "postgresql": "extra ? 'trials'"}


def upgrade() -> None:
    op.create_table(
        "run_comparisons",
        sa.Column("run_a", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("run_b", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("a_finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("b_finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("summary", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True),
        sa.Column("paired", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True),
        sa.Column("statistics", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True),
    )
    # Deleting a run deletes its comparisons as B too: the cascade reads this index.
    op.create_index("ix_run_comparisons_b", "run_comparisons", ["run_b"])
    op.create_index("ix_results_run_case_figures", "results", ["run_id", "case_name", "status", "score"])
    dialect = op.get_bind().dialect.name
    where = sa.text(TRIALS_ROWS.get(dialect, TRIALS_ROWS["sqlite"]))
    op.create_index("ix_results_trials", "results", ["run_id"], sqlite_where=where, postgresql_where=where)


def downgrade() -> None:
    op.drop_index("ix_results_trials", table_name="results")
    op.drop_index("ix_results_run_case_figures", table_name="results")
    op.drop_index("ix_run_comparisons_b", table_name="run_comparisons")
    op.drop_table("run_comparisons")
