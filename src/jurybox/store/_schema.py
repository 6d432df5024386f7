"""The store's tables, as SQLAlchemy 2 typed declarative models.

Alembic migrations in ``jurybox/store/migrations`` create and evolve these
tables; the models are the single description the repository code queries
through. JSON columns become JSONB on PostgreSQL so they can be indexed and
queried there, and plain JSON (text) on SQLite.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

JsonType = JSON().with_variant(JSONB(), "postgresql")
"""Portable JSON column: JSONB on PostgreSQL, JSON text elsewhere."""


class Base(DeclarativeBase):
    """Declarative base of every store table."""


class SuiteRow(Base):
    """A suite: a named set of cases and the agent they run against."""

    __tablename__ = "suites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    agent: Mapped[Any] = mapped_column(JsonType, nullable=True)
    defaults: Mapped[Any] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CaseRow(Base):
    """One version of a case, identified by the hash of its definition.

    Editing a case adds a version rather than changing a row, so runs keep
    pointing at exactly the definition they ran. ``current`` marks the version
    an export or the dashboard shows.
    """

    __tablename__ = "cases"
    __table_args__ = (
        UniqueConstraint("suite_id", "name", "content_hash", name="uq_cases_suite_name_hash"),
        Index("ix_cases_suite_current", "suite_id", "current"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite_id: Mapped[int] = mapped_column(ForeignKey("suites.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(512))
    content_hash: Mapped[str] = mapped_column(String(64))
    definition: Mapped[Any] = mapped_column(JsonType)
    position: Mapped[int] = mapped_column(Integer, default=0)
    current: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RunRow(Base):
    """One run of a suite; status is running until the runner finishes it."""

    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_suite_started", "suite_id", "started_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    suite_id: Mapped[int] = mapped_column(ForeignKey("suites.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    git_commit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    judge_model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    agent_version: Mapped[str | None] = mapped_column(String(255), nullable=True)
    config: Mapped[Any] = mapped_column(JsonType, nullable=True)
    planned: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Totals, written by finish_run from the results so listings need no aggregation.
    total: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    errored: Mapped[int] = mapped_column(Integer, default=0)
    abstained: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    duration: Mapped[float | None] = mapped_column(Float, nullable=True)


class RunCaseRow(Base):
    """The case versions a run was asked to run (its plan)."""

    __tablename__ = "run_cases"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    case_name: Mapped[str] = mapped_column(String(512), primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)


class ResultRow(Base):
    """The outcome of one case in one run; unique per (run, case) so a rewrite is a no-op."""

    __tablename__ = "results"
    __table_args__ = (UniqueConstraint("run_id", "case_name", name="uq_results_run_case"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    case_name: Mapped[str] = mapped_column(String(512))
    case_id: Mapped[int | None] = mapped_column(ForeignKey("cases.id", ondelete="SET NULL"), nullable=True)
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    reasoning: Mapped[str] = mapped_column(Text, default="")
    decided_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    duration: Mapped[float] = mapped_column(Float, default=0.0)
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    judge_calls: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[Any] = mapped_column(JsonType)
    extra: Mapped[Any] = mapped_column(JsonType)
    judgment: Mapped[Any] = mapped_column(JsonType)
    context: Mapped[Any] = mapped_column(JsonType, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RoundResultRow(Base):
    """One round of a multi-round case."""

    __tablename__ = "round_results"
    __table_args__ = (UniqueConstraint("result_id", "round_index", name="uq_round_results_result_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    round_index: Mapped[int] = mapped_column(Integer)
    prompt: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    reasoning: Mapped[str] = mapped_column(Text, default="")
    duration: Mapped[float | None] = mapped_column(Float, nullable=True)
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    follow_ups: Mapped[Any] = mapped_column(JsonType)
    judgment: Mapped[Any] = mapped_column(JsonType)
    context: Mapped[Any] = mapped_column(JsonType)


class JudgmentRow(Base):
    """One judge's verdict inside a case (or round) judgment tree, flattened for queries.

    ``path`` is the node's place in the tree (``""`` for the root,
    ``"deterministic/contains"`` for a judge inside a tier); ``tier`` is the
    first path segment when the root is a cascade (its ``decided_by`` is set).
    """

    __tablename__ = "judgments"
    __table_args__ = (
        Index("ix_judgments_result", "result_id"),
        Index("ix_judgments_run_tier", "run_id", "tier"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    round_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    path: Mapped[str] = mapped_column(String(1024))
    depth: Mapped[int] = mapped_column(Integer)
    judge: Mapped[str] = mapped_column(String(255))
    tier: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    reasoning: Mapped[str] = mapped_column(Text, default="")
    checks: Mapped[Any] = mapped_column(JsonType)
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    degraded: Mapped[bool] = mapped_column(Boolean, default=False)


class LessonRow(Base):
    """What a regression taught: written once per (run, metric) when a gate finds a drop."""

    __tablename__ = "lessons"
    __table_args__ = (
        UniqueConstraint("run_id", "metric", name="uq_lessons_run_metric"),
        Index("ix_lessons_suite_created", "suite_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite_id: Mapped[int] = mapped_column(ForeignKey("suites.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(255))
    baseline: Mapped[float] = mapped_column(Float)
    current: Mapped[float] = mapped_column(Float)
    drop: Mapped[float] = mapped_column(Float)
    threshold: Mapped[float] = mapped_column(Float)
    failing: Mapped[Any] = mapped_column(JsonType)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
