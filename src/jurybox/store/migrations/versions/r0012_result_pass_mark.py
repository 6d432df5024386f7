"""A result's pass mark: the threshold the deciding judge applied to the result's score.

A case's score is the score of the judge that decided it (``correctness 0.10``); the pass
mark beside it says what that number had to reach (``< 0.70``). Rows written before this
revision have none (NULL): their pass marks were not kept.

Revision ID: 0012_result_pass_mark
Revises: 0011_dash_suite_folder
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012_result_pass_mark"
down_revision: str | None = "0011_dash_suite_folder"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # A plain ADD COLUMN, as in 0008: SQLite's batch mode would recreate the table and cascade.
    op.add_column("results", sa.Column("pass_mark", sa.Float(), nullable=True))


def downgrade() -> None:
    op.drop_column("results", "pass_mark")
