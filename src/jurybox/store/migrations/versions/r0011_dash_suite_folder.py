"""Suite folder: where an imported suite file lived, so its relative paths resolve from anywhere.

A stored suite's ``seeds: seeds/``, plugins and ``agent: {python: file.py:...}`` are
relative to the suite file. Without the file's folder in the store, ``jurybox run --suite``
and the dashboard's Run button resolved them against whatever folder the process ran in.

Revision ID: 0011_dash_suite_folder
Revises: 0010_otlp_trace_queue
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011_dash_suite_folder"
down_revision: str | None = "0010_otlp_trace_queue"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: SQLite's batch copy would drop and recreate ``suites``,
    # cascading to every run and case of the store.
    op.add_column("suites", sa.Column("folder", sa.String(4096), nullable=True))


def downgrade() -> None:
    op.drop_column("suites", "folder")  # SQLite 3.35+ drops a column in place
