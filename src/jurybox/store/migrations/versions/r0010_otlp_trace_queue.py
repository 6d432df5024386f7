"""OTLP trace queue: traces received by ``jurybox serve --otlp`` wait here to be judged.

Revision ID: 0010_otlp_trace_queue
Revises: 0009_exp_run_experiments
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010_otlp_trace_queue"
down_revision: str | None = "0009_exp_run_experiments"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "trace_queue",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("has_root", sa.Boolean, nullable=False),
        sa.Column("spans", sa.Text, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_trace_queue_trace", "trace_queue", ["trace_id"])
    op.create_index("ix_trace_queue_received", "trace_queue", ["received_at"])


def downgrade() -> None:
    op.drop_index("ix_trace_queue_received", table_name="trace_queue")
    op.drop_index("ix_trace_queue_trace", table_name="trace_queue")
    op.drop_table("trace_queue")
