"""Lessons: what a regression taught, kept for reports and prompts.

Revision ID: 0002_lessons
Revises: 0001_initial
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0002_lessons"
down_revision: str | None = "0001_initial"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "lessons",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("suite_id", sa.Integer, sa.ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("metric", sa.String(255), nullable=False),
        sa.Column("baseline", sa.Float, nullable=False),
        sa.Column("current", sa.Float, nullable=False),
        sa.Column("drop", sa.Float, nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("failing", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "metric", name="uq_lessons_run_metric"),
    )
    op.create_index("ix_lessons_suite_created", "lessons", ["suite_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_lessons_suite_created", table_name="lessons")
    op.drop_table("lessons")
