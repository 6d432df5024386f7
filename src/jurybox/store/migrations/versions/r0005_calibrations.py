"""Calibrations: judges measured against human labels, kept so run reports can correct pass rates.

Revision ID: 0005_calibrations
Revises: 0004_dashboard_indexes
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0005_calibrations"
down_revision: str | None = "0004_dashboard_indexes"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("judge_key", sa.String(64), nullable=False),
        sa.Column("judge_name", sa.String(255), nullable=False),
        sa.Column("identity", json_type, nullable=False),
        sa.Column("figures", json_type, nullable=False),
        sa.Column("calibration", json_type, nullable=False),
        sa.Column("dataset", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_calibrations_key_created", "calibrations", ["judge_key", "created_at"])
    op.create_index("ix_calibrations_name_created", "calibrations", ["judge_name", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_calibrations_name_created", table_name="calibrations")
    op.drop_index("ix_calibrations_key_created", table_name="calibrations")
    op.drop_table("calibrations")
