"""Initial schema: suites, versioned cases, runs, results, rounds and per-judge judgments.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

json_type = sa.JSON().with_variant(JSONB(), "postgresql")


def _when(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "suites",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("agent", json_type, nullable=True),
        sa.Column("defaults", json_type, nullable=True),
        _when("created_at"),
        _when("updated_at"),
    )
    op.create_table(
        "cases",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("suite_id", sa.Integer, sa.ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(512), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("definition", json_type, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("current", sa.Boolean, nullable=False),
        _when("created_at"),
        sa.UniqueConstraint("suite_id", "name", "content_hash", name="uq_cases_suite_name_hash"),
    )
    op.create_index("ix_cases_suite_current", "cases", ["suite_id", "current"])
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("suite_id", sa.Integer, sa.ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("git_commit", sa.String(64), nullable=True),
        sa.Column("judge_model", sa.String(255), nullable=True),
        sa.Column("agent_version", sa.String(255), nullable=True),
        sa.Column("config", json_type, nullable=True),
        sa.Column("planned", sa.Integer, nullable=False),
        _when("started_at"),
        _when("finished_at", nullable=True),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("passed", sa.Integer, nullable=False),
        sa.Column("failed", sa.Integer, nullable=False),
        sa.Column("errored", sa.Integer, nullable=False),
        sa.Column("abstained", sa.Integer, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=True),
        sa.Column("cost", sa.Float, nullable=True),
        sa.Column("duration", sa.Float, nullable=True),
    )
    op.create_index("ix_runs_suite_started", "runs", ["suite_id", "started_at"])
    op.create_table(
        "run_cases",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("case_name", sa.String(512), primary_key=True),
        sa.Column("case_id", sa.Integer, sa.ForeignKey("cases.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
    )
    op.create_table(
        "results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("case_name", sa.String(512), nullable=False),
        sa.Column("case_id", sa.Integer, sa.ForeignKey("cases.id", ondelete="SET NULL"), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("decided_by", sa.String(255), nullable=True),
        sa.Column("duration", sa.Float, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=True),
        sa.Column("cost", sa.Float, nullable=True),
        sa.Column("judge_calls", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("tags", json_type, nullable=False),
        sa.Column("extra", json_type, nullable=False),
        sa.Column("judgment", json_type, nullable=False),
        sa.Column("context", json_type, nullable=True),
        _when("started_at", nullable=True),
        _when("recorded_at"),
        sa.UniqueConstraint("run_id", "case_name", name="uq_results_run_case"),
    )
    op.create_table(
        "round_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("result_id", sa.Integer, sa.ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
        sa.Column("round_index", sa.Integer, nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("duration", sa.Float, nullable=True),
        sa.Column("tokens", sa.Integer, nullable=True),
        sa.Column("cost", sa.Float, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("follow_ups", json_type, nullable=False),
        sa.Column("judgment", json_type, nullable=False),
        sa.Column("context", json_type, nullable=False),
        sa.UniqueConstraint("result_id", "round_index", name="uq_round_results_result_index"),
    )
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("result_id", sa.Integer, sa.ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
        sa.Column("round_index", sa.Integer, nullable=True),
        sa.Column("path", sa.String(1024), nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("judge", sa.String(255), nullable=False),
        sa.Column("tier", sa.String(255), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("checks", json_type, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=True),
        sa.Column("cost", sa.Float, nullable=True),
        sa.Column("confidence", sa.Float, nullable=True),
        sa.Column("degraded", sa.Boolean, nullable=False),
    )
    op.create_index("ix_judgments_result", "judgments", ["result_id"])
    op.create_index("ix_judgments_run_tier", "judgments", ["run_id", "tier"])


def downgrade() -> None:
    for table in ("judgments", "round_results", "results", "run_cases", "runs", "cases", "suites"):
        op.drop_table(table)
