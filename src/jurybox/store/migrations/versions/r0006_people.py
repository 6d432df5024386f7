"""People: dashboard users and logins, human reviews of judgments, case edit history, audit log.

Revision ID: 0006_people
Revises: 0005_calibrations
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0006_people"
down_revision: str | None = "0005_calibrations"
branch_labels: str | None = None
depends_on: str | None = None


def _when(name: str) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("disabled", sa.Boolean, nullable=False),
        _when("created_at"),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        _when("created_at"),
        _when("expires_at"),
    )
    op.create_index("ix_web_sessions_user", "web_sessions", ["user_id"])
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("case_name", sa.String(512), nullable=False),
        sa.Column("round_index", sa.Integer, nullable=True),
        sa.Column("path", sa.String(1024), nullable=False),
        sa.Column("reviewer", sa.String(255), nullable=False),
        sa.Column("agree", sa.Boolean, nullable=False),
        sa.Column("label", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("judge_name", sa.String(255), nullable=False),
        sa.Column("judge_status", sa.String(16), nullable=False),
        sa.Column("judge_key", sa.String(64), nullable=True),
        sa.Column("judge_identity", json_type, nullable=True),
        _when("created_at"),
    )
    op.create_index("ix_reviews_run_case_path", "reviews", ["run_id", "case_name", "path"])
    op.create_index("ix_reviews_judge_key", "reviews", ["judge_key"])
    op.create_table(
        "case_edits",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("suite_id", sa.Integer, sa.ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("case_name", sa.String(512), nullable=False),
        sa.Column("case_id", sa.Integer, sa.ForeignKey("cases.id", ondelete="CASCADE"), nullable=True),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("author", sa.String(255), nullable=False),
        _when("created_at"),
    )
    op.create_index("ix_case_edits_suite_case", "case_edits", ["suite_id", "case_name", "created_at"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("actor", sa.String(255), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(1024), nullable=False),
        sa.Column("detail", json_type, nullable=False),
        _when("created_at"),
    )
    op.create_index("ix_audit_log_created", "audit_log", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_created", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_index("ix_case_edits_suite_case", table_name="case_edits")
    op.drop_table("case_edits")
    op.drop_index("ix_reviews_judge_key", table_name="reviews")
    op.drop_index("ix_reviews_run_case_path", table_name="reviews")
    op.drop_table("reviews")
    op.drop_index("ix_web_sessions_user", table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("users")
