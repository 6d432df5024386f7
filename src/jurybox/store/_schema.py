"""The store's tables, as SQLAlchemy Core ``Table`` objects on one ``MetaData``.

Alembic migrations in ``jurybox/store/migrations`` create and evolve these
tables; the tables here are the single description the repository code
queries through (``select(results_table).where(results_table.c.run_id == ...)``).
They are plain Core on purpose: the ORM is not used, and importing it would
cost every ``jurybox run`` several megabytes.

JSON columns become JSONB on PostgreSQL so they can be indexed and queried
there, and plain JSON (text) on SQLite.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

JsonType = JSON().with_variant(JSONB(), "postgresql")
"""Portable JSON column: JSONB on PostgreSQL, JSON text elsewhere."""

QUEUE_ROWS = "tier IS NOT NULL AND path != tier"
"""The judgments the review queue reads (``_review_queue``): a judge inside a cascade tier."""
TRIALS_ROWS = {"sqlite": "json_type(extra, '$.trials') = 'object'", "postgresql": "extra ? 'trials'"}
"""The results holding repeated trials' counts, per database: the comparison's condition and its partial index."""

metadata = MetaData()
"""Every store table."""


def _when(name: str, *, nullable: bool = False) -> Column[object]:
    """A timezone-aware timestamp column."""
    return Column(name, DateTime(timezone=True), nullable=nullable)


suites_table = Table(
    "suites",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("agent", JsonType, nullable=True),
    Column("defaults", JsonType, nullable=True),
    _when("created_at"),
    _when("updated_at"),
    Column("settings", JsonType, nullable=True),
    Column("folder", String(4096), nullable=True),
)
"""A suite: a named set of cases and the agent they run against.

``folder`` is the absolute folder of the suite file it was imported (or run) from: its
relative paths (seeds, plugins, the agent's module) resolve there, wherever a run starts.

``settings`` holds the suite file's other top-level keys (``database``, ``judge_model``,
``seeds``, ``concurrency``, ``description``...), so a stored suite runs as its file would.
"""

cases_table = Table(
    "cases",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("suite_id", Integer, ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(512), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("definition", JsonType, nullable=False),
    Column("position", Integer, nullable=False, default=0),
    Column("current", Boolean, nullable=False, default=True),
    _when("created_at"),
    UniqueConstraint("suite_id", "name", "content_hash", name="uq_cases_suite_name_hash"),
    Index("ix_cases_suite_current", "suite_id", "current"),
)
"""One version of a case, identified by the hash of its definition.

Editing a case adds a version rather than changing a row, so runs keep
pointing at exactly the definition they ran. ``current`` marks the version
an export or the dashboard shows.
"""

runs_table = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("suite_id", Integer, ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
    Column("status", String(16), nullable=False),
    Column("git_commit", String(64), nullable=True),
    Column("judge_model", String(255), nullable=True),
    Column("agent_version", String(255), nullable=True),
    Column("config", JsonType, nullable=True),
    Column("planned", Integer, nullable=False, default=0),
    _when("started_at"),
    _when("finished_at", nullable=True),
    # Totals, written by finish_run from the results so listings need no aggregation.
    Column("total", Integer, nullable=False, default=0),
    Column("passed", Integer, nullable=False, default=0),
    Column("failed", Integer, nullable=False, default=0),
    Column("errored", Integer, nullable=False, default=0),
    Column("abstained", Integer, nullable=False, default=0),
    Column("tokens", Integer, nullable=True),
    Column("cost", Float, nullable=True),
    Column("duration", Float, nullable=True),
    # Schema 0013: calls whose price was unknown, and cases whose cost is unknown (NULL: run finished before).
    # With either above 0, ``cost`` is only the known part: a lower bound.
    Column("unpriced_calls", Integer, nullable=True),
    Column("cost_unknown", Integer, nullable=True),
    # An experiment's variant (``variants:`` in the suite): the runs of one experiment share its id.
    Column("experiment_id", String(64), nullable=True),
    Column("variant", String(255), nullable=True),
    Index("ix_runs_suite_started", "suite_id", "started_at"),
    Index("ix_runs_experiment", "experiment_id"),
)
"""One run of a suite; status is running until the runner finishes it."""

run_summaries_table = Table(
    # A finished run's stats (tier and judge rates, latency, tags), written by finish_run so pages
    # never aggregate a big run's rows again; finished_at is the finish they describe (schema 0013).
    "run_summaries",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    _when("finished_at"),
    Column("stats", JsonType, nullable=False),
)

run_comparisons_table = Table(
    # Run B against run A as the compare page computes it, kept for that finish of both runs (schema 0014):
    # the counts of each kind of change with the first page shown (``summary``), the paired statistics'
    # aggregates (``paired``) and the statistics last computed from them (``statistics``), each NULL until computed.
    "run_comparisons",
    metadata,
    Column("run_a", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("run_b", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    _when("a_finished_at"),
    _when("b_finished_at"),
    Column("summary", JsonType, nullable=True),
    Column("paired", JsonType, nullable=True),
    Column("statistics", JsonType, nullable=True),
    Index("ix_run_comparisons_b", "run_b"),
)

run_cases_table = Table(
    "run_cases",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("case_name", String(512), primary_key=True),
    Column("case_id", Integer, ForeignKey("cases.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
)
"""The case versions a run was asked to run (its plan)."""

results_table = Table(
    "results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("case_name", String(512), nullable=False),
    Column("case_id", Integer, ForeignKey("cases.id", ondelete="SET NULL"), nullable=True),
    Column("status", String(16), nullable=False),
    # The deciding judge's score and the pass mark it applied (``correctness 0.10 < 0.70``).
    Column("score", Float, nullable=True),
    Column("pass_mark", Float, nullable=True),
    Column("reasoning", Text, nullable=False, default=""),
    Column("decided_by", String(255), nullable=True),
    Column("duration", Float, nullable=False, default=0.0),
    Column("tokens", Integer, nullable=True),
    Column("cost", Float, nullable=True),
    # Schema 0013: judge calls with no known price; when above 0, ``cost`` is the known part only.
    Column("unpriced_calls", Integer, nullable=True),
    Column("judge_calls", Integer, nullable=False, default=0),
    Column("error", Text, nullable=True),
    Column("tags", JsonType, nullable=False),
    Column("extra", JsonType, nullable=False),
    Column("judgment", JsonType, nullable=False),
    Column("context", JsonType, nullable=True),
    _when("started_at", nullable=True),
    _when("recorded_at"),
    UniqueConstraint("run_id", "case_name", name="uq_results_run_case"),
    # A run's cases of one status (a filter, the failing ones) without reading its other rows.
    Index("ix_results_run_status_case", "run_id", "status", "case_name"),
    # Two runs joined by case name (a comparison) from the index alone, never the rows (schema 0014).
    Index("ix_results_run_case_figures", "run_id", "case_name", "status", "score"),
    # The few results with repeated trials' counts, found without reading every result's metadata.
    Index(
        "ix_results_trials",
        "run_id",
        sqlite_where=text(TRIALS_ROWS["sqlite"]),
        postgresql_where=text(TRIALS_ROWS["postgresql"]),
    ),
)
"""The outcome of one case in one run; unique per (run, case) so a rewrite is a no-op."""

round_results_table = Table(
    "round_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    Column("round_index", Integer, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("score", Float, nullable=True),
    Column("reasoning", Text, nullable=False, default=""),
    Column("duration", Float, nullable=True),
    Column("tokens", Integer, nullable=True),
    Column("cost", Float, nullable=True),
    Column("error", Text, nullable=True),
    Column("follow_ups", JsonType, nullable=False),
    Column("judgment", JsonType, nullable=False),
    Column("context", JsonType, nullable=False),
    UniqueConstraint("result_id", "round_index", name="uq_round_results_result_index"),
)
"""One round of a multi-round case."""

judgments_table = Table(
    "judgments",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    Column("round_index", Integer, nullable=True),
    Column("path", String(1024), nullable=False),
    Column("depth", Integer, nullable=False),
    Column("judge", String(255), nullable=False),
    Column("tier", String(255), nullable=True),
    Column("status", String(16), nullable=False),
    Column("score", Float, nullable=True),
    Column("reasoning", Text, nullable=False, default=""),
    Column("checks", JsonType, nullable=False),
    Column("tokens", Integer, nullable=True),
    Column("cost", Float, nullable=True),
    Column("confidence", Float, nullable=True),
    Column("degraded", Boolean, nullable=False, default=False),
    Index("ix_judgments_result", "result_id"),
    Index("ix_judgments_run_tier", "run_id", "tier"),
    # Every column of the per-tier rates and mean scores: the dashboard computes them from the index alone.
    Index("ix_judgments_run_depth_tier", "run_id", "depth", "tier", "status", "score"),
    # The review queue's rows only (judges inside a tier, schema 0013): it never reads a run's roots and tiers.
    Index(
        "ix_judgments_queue",
        "run_id",
        "tier",
        "status",
        sqlite_where=text(QUEUE_ROWS),
        postgresql_where=text(QUEUE_ROWS),
    ),
)
"""One judge's verdict inside a case (or round) judgment tree, flattened for queries.

``path`` is the node's place in the tree (``""`` for the root,
``"deterministic/contains"`` for a judge inside a tier); ``tier`` is the
first path segment when the root is a cascade (its ``decided_by`` is set).
"""

lessons_table = Table(
    "lessons",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("suite_id", Integer, ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
    # None for a lesson a person added (``jurybox lessons add``).
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=True),
    Column("metric", String(255), nullable=False),
    Column("baseline", Float, nullable=False),
    Column("current", Float, nullable=False),
    Column("drop", Float, nullable=False),
    Column("threshold", Float, nullable=False),
    Column("failing", JsonType, nullable=False),
    Column("text", Text, nullable=False),
    _when("created_at"),
    Column("case_name", String(512), nullable=True),  # the case the lesson is about, if one
    Column("judge", String(255), nullable=True),  # the judge (its key, e.g. round2.criteria) or tier, if one
    Column("origin", String(16), nullable=False, server_default="regression"),  # regression | manual
    _when("retired_at", nullable=True),
    Column("retired_reason", Text, nullable=True),
    UniqueConstraint("run_id", "metric", name="uq_lessons_run_metric"),
    Index("ix_lessons_suite_created", "suite_id", "created_at"),
)
"""What a regression taught (written once per (run, metric) when a gate finds a drop), or what a person wrote.

A retired lesson is kept (``retired_at``) and no longer handed to runs."""

calibrations_table = Table(
    "calibrations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("judge_key", String(64), nullable=False),
    Column("judge_name", String(255), nullable=False),
    Column("identity", JsonType, nullable=False),
    Column("figures", JsonType, nullable=False),
    Column("calibration", JsonType, nullable=False),
    Column("dataset", Text, nullable=False),
    _when("created_at"),
    # A run's judge is looked up by its key, the "changed since" check by its name: newest first in both.
    Index("ix_calibrations_key_created", "judge_key", "created_at"),
    Index("ix_calibrations_name_created", "judge_name", "created_at"),
)
"""One judge measured against human labels, filed under its identity's key.

``identity`` is who the judge is (kind, model, template hash, settings),
``figures`` the few numbers lists and corrections read (TPR, TNR, positives,
negatives, kappa, n, ...), ``calibration`` the judge's whole calibration
(figures with intervals, slices, disagreements). All plain JSON: the store
does not know the calibrate package's types.
"""

users_table = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("disabled", Boolean, nullable=False, default=False),
    _when("created_at"),
)
"""People who may write through the dashboard; ``token_hash`` is the SHA-256 of their login token (never the token)."""

web_sessions_table = Table(
    "web_sessions",
    metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    _when("created_at"),
    _when("expires_at"),
    Index("ix_web_sessions_user", "user_id"),
)
"""Dashboard logins, kept in the store so a server restart keeps people logged in; the cookie's id is hashed."""

reviews_table = Table(
    "reviews",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("case_name", String(512), nullable=False),
    Column("round_index", Integer, nullable=True),
    Column("path", String(1024), nullable=False),
    Column("reviewer", String(255), nullable=False),
    Column("agree", Boolean, nullable=False),
    Column("label", String(16), nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("judge_name", String(255), nullable=False),
    Column("judge_status", String(16), nullable=False),
    Column("judge_key", String(64), nullable=True),
    Column("judge_identity", JsonType, nullable=True),
    _when("created_at"),
    Index("ix_reviews_run_case_path", "run_id", "case_name", "path"),
    Index("ix_reviews_judge_key", "judge_key"),
)
"""A person's verdict on one judgment: agree or not with the judge, the label they would give, why.

``path`` is the judgment's place in the case's verdict tree (as in ``judgments``);
``judge_key`` and ``judge_identity`` say which judge it was (prompt template hash,
model, settings), so a labelled set exported from reviews calibrates that judge.
A later review of the same judgment by the same reviewer replaces nothing: both stay.
"""

case_edits_table = Table(
    "case_edits",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("suite_id", Integer, ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
    Column("case_name", String(512), nullable=False),
    Column("case_id", Integer, ForeignKey("cases.id", ondelete="CASCADE"), nullable=True),
    Column("action", String(16), nullable=False),
    Column("author", String(255), nullable=False),
    _when("created_at"),
    Index("ix_case_edits_suite_case", "suite_id", "case_name", "created_at"),
)
"""Who changed which case when: each save, duplicate, retire, revert or import, with the version it made current."""

audit_log_table = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("actor", String(255), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", String(1024), nullable=False),
    Column("detail", JsonType, nullable=False),
    _when("created_at"),
    Index("ix_audit_log_created", "created_at"),
)
"""Every write made through the dashboard or the user commands, newest last."""

trace_queue_table = Table(
    "trace_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("trace_id", String(32), nullable=False),
    Column("has_root", Boolean, nullable=False, default=False),
    Column("spans", Text, nullable=False),
    _when("received_at"),
    _when("claimed_at", nullable=True),
    Index("ix_trace_queue_trace", "trace_id"),
    Index("ix_trace_queue_received", "received_at"),
)
"""Traces received over OTLP (``jurybox serve --otlp``) waiting to be judged: one row per trace per request.

``spans`` is the redacted spans as JSON; a trace is judged once its root has come and no
part of it came for a while, then its rows are deleted with its results recorded. A row
claimed by a worker that died is claimed again after a timeout: an accepted trace is never lost.
"""
