"""Lessons with a scope and a life: the case and judge a lesson is about, who wrote it, and retirement.

A lesson a person adds (``jurybox lessons add``) belongs to no run; a retired
lesson stays, with when and why, so the history of what was taught is kept.

Revision ID: 0007_lesson_scope
Revises: 0006_people
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007_lesson_scope"
down_revision: str | None = "0006_people"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Batch mode: SQLite changes a column's nullability only by copying the table.
    with op.batch_alter_table("lessons") as batch:
        batch.alter_column("run_id", existing_type=sa.String(64), nullable=True)
        batch.add_column(sa.Column("case_name", sa.String(512), nullable=True))
        batch.add_column(sa.Column("judge", sa.String(255), nullable=True))
        batch.add_column(sa.Column("origin", sa.String(16), nullable=False, server_default="regression"))
        batch.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("retired_reason", sa.Text, nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM lessons WHERE run_id IS NULL")
    with op.batch_alter_table("lessons") as batch:
        for name in ("retired_reason", "retired_at", "origin", "judge", "case_name"):
            batch.drop_column(name)
        batch.alter_column("run_id", existing_type=sa.String(64), nullable=False)
