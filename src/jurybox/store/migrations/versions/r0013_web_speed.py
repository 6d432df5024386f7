"""The dashboard on big stores: stored run summaries, a search index, and partly known costs.

* ``run_summaries``: a finished run's stats (tier and judge rates, latency, tags), written
  by ``finish_run``, so a run page, the gate and a 1,000-run trend never aggregate a big
  run's rows again. Runs finished before this revision have none and are computed as before.
* A search index over each result's case name, reasoning and error, for the search box of
  a run page: an FTS5 table with the trigram tokenizer on SQLite (kept by triggers, so
  every writer keeps it current), a trigram GIN index (``pg_trgm``) on PostgreSQL. When the
  database cannot make it (SQLite without FTS5 trigram, a role that may not create the
  extension) nothing fails: the search reads the rows as before.
* ``ix_judgments_queue``: a partial index of the judgments the review queue reads (judges
  inside a tier), so the queue no longer reads every root and tier verdict of the store.
* ``results.unpriced_calls`` and ``runs.unpriced_calls`` / ``runs.cost_unknown``: the judge
  calls whose price was unknown (and cases whose cost is unknown), so a partly known
  cost is shown as "≥ $X" with what is missing, never as an exact figure or "$0".

Revision ID: 0013_web_speed
Revises: 0012_result_pass_mark
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0013_web_speed"
down_revision: str | None = "0012_result_pass_mark"
branch_labels: str | None = None
depends_on: str | None = None

SQLITE_SEARCH = [
    "CREATE VIRTUAL TABLE results_search USING fts5("
    "case_name, reasoning, error, content='results', content_rowid='id', tokenize='trigram')",
    "CREATE TRIGGER results_search_insert AFTER INSERT ON results BEGIN "
    "INSERT INTO results_search(rowid, case_name, reasoning, error) "
    "VALUES (new.id, new.case_name, new.reasoning, new.error); END",
    "CREATE TRIGGER results_search_delete AFTER DELETE ON results BEGIN "
    "INSERT INTO results_search(results_search, rowid, case_name, reasoning, error) "
    "VALUES ('delete', old.id, old.case_name, old.reasoning, old.error); END",
    "CREATE TRIGGER results_search_update AFTER UPDATE OF case_name, reasoning, error ON results BEGIN "
    "INSERT INTO results_search(results_search, rowid, case_name, reasoning, error) "
    "VALUES ('delete', old.id, old.case_name, old.reasoning, old.error); "
    "INSERT INTO results_search(rowid, case_name, reasoning, error) "
    "VALUES (new.id, new.case_name, new.reasoning, new.error); END",
    "INSERT INTO results_search(results_search) VALUES ('rebuild')",
]
PG_EXTENSION = "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public"
"""In ``public``, not the store's schema: dropping one store's schema must not drop the index of another."""
PG_EXTENSION_SCHEMA = (
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
)
# The expression the search reads (store/_search.py): one index for the three texts.
PG_SEARCH_INDEX = (
    "CREATE INDEX IF NOT EXISTS ix_results_search ON results USING gin "
    "((lower(case_name || ' ' || reasoning || ' ' || coalesce(error, ''))) \"{schema}\".gin_trgm_ops)"
)


def upgrade() -> None:
    op.create_table(
        "run_summaries",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stats", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
    )
    # Plain ADD COLUMNs, as in 0008: SQLite's batch mode would recreate the tables and cascade.
    op.add_column("results", sa.Column("unpriced_calls", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("unpriced_calls", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("cost_unknown", sa.Integer(), nullable=True))
    # The review queue's rows only: its filters read judges inside a tier, never a run's roots and tiers.
    # The same text as the queue's conditions, so SQLite sees the query implies it and uses it.
    where = sa.text("tier IS NOT NULL AND path != tier")
    op.create_index(
        "ix_judgments_queue", "judgments", ["run_id", "tier", "status"], sqlite_where=where, postgresql_where=where
    )
    bind = op.get_bind()
    savepoint = bind.begin_nested()  # a refusal (no trigram tokenizer, no right to the extension) undoes only this
    try:
        if bind.dialect.name == "sqlite":
            for statement in SQLITE_SEARCH:
                bind.exec_driver_sql(statement)
        else:
            bind.exec_driver_sql(PG_EXTENSION)
            schema = bind.exec_driver_sql(PG_EXTENSION_SCHEMA).scalar_one()  # where it was, if it was already
            bind.exec_driver_sql(PG_SEARCH_INDEX.format(schema=str(schema).replace('"', '""')))
    except sa.exc.DBAPIError:
        savepoint.rollback()
    else:
        savepoint.commit()


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for name in ("insert", "delete", "update"):
            bind.exec_driver_sql(f"DROP TRIGGER IF EXISTS results_search_{name}")
        bind.exec_driver_sql("DROP TABLE IF EXISTS results_search")
    else:
        bind.exec_driver_sql("DROP INDEX IF EXISTS ix_results_search")
    op.drop_index("ix_judgments_queue", table_name="judgments")
    op.drop_column("runs", "cost_unknown")
    op.drop_column("runs", "unpriced_calls")
    op.drop_column("results", "unpriced_calls")
    op.drop_table("run_summaries")
