"""Suite settings: the suite file's other top-level keys, so a stored suite runs as its file would.

``jurybox store import`` kept only ``agent`` and ``defaults``; a suite's ``database``,
``judge_model``, ``seeds``, ``concurrency``, ``plugins``, ``description``... were lost,
and a suite run from the store (``jurybox run --suite``, the dashboard) could not run
its SQL checks or load its seeds.

Revision ID: 0008_suite_settings
Revises: 0007_lesson_scope
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0008_suite_settings"
down_revision: str | None = "0007_lesson_scope"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: SQLite's batch copy drops and recreates the table, and
    # dropping ``suites`` would cascade to every run and case of the store.
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    op.add_column("suites", sa.Column("settings", json_type, nullable=True))


def downgrade() -> None:
    op.drop_column("suites", "settings")  # SQLite 3.35+ drops a column in place
