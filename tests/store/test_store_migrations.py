"""Schema versions: an older store is migrated on open, a newer one is refused untouched."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection
from store_testkit import make_multi_round_record, make_record, nodes_per_record, single_round

from jurybox.store import Rate, StoreError, StoreVersionError, open_store, schema_head
from jurybox.store._engine import SCHEMA_HEAD, create_store_engine, known_revisions, stored_revisions
from jurybox.store._schema import judgments_table, metadata


def _config(connection: object) -> Config:
    config = Config()
    config.set_main_option("script_location", "jurybox.store:migrations")
    config.attributes["connection"] = connection
    return config


def test_migrations_know_a_linear_history() -> None:
    assert schema_head() == SCHEMA_HEAD == "0014_stored_comparisons"
    assert known_revisions() == {
        "0001_initial",
        "0002_lessons",
        "0003_single_verdict_rows",
        "0004_dashboard_indexes",
        "0005_calibrations",
        "0006_people",
        "0007_lesson_scope",
        "0008_suite_settings",
        "0009_exp_run_experiments",
        "0010_otlp_trace_queue",
        "0011_dash_suite_folder",
        "0012_result_pass_mark",
        "0013_web_speed",
        "0014_stored_comparisons",
    }


def test_tables_the_code_queries_match_what_the_migrations_create(store_url: str) -> None:
    with open_store(store_url) as store, store.engine.connect() as connection:
        opts = {"compare_type": True, "compare_server_default": True, "include_name": _not_search_index}
        context = MigrationContext.configure(connection, opts=opts)
        assert compare_metadata(context, metadata) == []


def _not_search_index(name: str | None, _type: str, _parent: object) -> bool:
    """The search index 0013 makes is the database's own kind (FTS5 tables, a trigram index): not in the metadata."""
    return not (name or "").startswith(("results_search", "ix_results_search"))


def test_store_at_an_older_revision_is_migrated_on_open_and_keeps_its_data(store_url: str) -> None:
    engine = create_store_engine(store_url)
    with engine.begin() as connection:
        command.upgrade(_config(connection), "0001_initial")
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as connection:
        assert not inspect(connection).has_table("lessons")
        connection.execute(
            text("INSERT INTO suites (id, name, created_at, updated_at) VALUES (1, 'old', :t, :t)"), {"t": stamp}
        )
        connection.execute(
            text(
                "INSERT INTO runs (id, suite_id, status, planned, started_at,"
                " total, passed, failed, errored, abstained)"
                " VALUES ('old-run', 1, 'completed', 0, :t, 0, 0, 0, 0, 0)"
            ),
            {"t": stamp},
        )
    engine.dispose()

    with open_store(store_url) as store:
        assert store.runs.get("old-run").suite == "old"
        assert store.lessons.find() == []
        with store.engine.connect() as connection:
            assert stored_revisions(connection) == (SCHEMA_HEAD,)
            assert inspect(connection).has_table("lessons")


def test_store_from_a_newer_jurybox_is_refused_and_not_touched(store_url: str) -> None:
    with open_store(store_url) as store:
        store.runs.begin("suite", cases={"a": {}})
        engine = store.engine
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
            connection.execute(text("DROP TABLE lessons"))  # as if the future schema had reshaped it

    with pytest.raises(StoreVersionError) as raised:
        open_store(store_url)

    message = str(raised.value)
    assert "newer jurybox" in message and "0099_future" in message and SCHEMA_HEAD in message
    engine = create_store_engine(store_url)
    with engine.connect() as connection:
        assert stored_revisions(connection) == ("0099_future",)
        assert not inspect(connection).has_table("lessons")  # nothing was "repaired" or created
    engine.dispose()


def test_a_database_that_is_not_a_store_is_refused(store_url: str) -> None:
    engine = create_store_engine(store_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE runs (id INTEGER PRIMARY KEY)"))
    engine.dispose()
    with pytest.raises(StoreError, match="not a jurybox store"):
        open_store(store_url)


def test_opening_twice_is_a_no_op(store_url: str) -> None:
    with open_store(store_url) as store:
        run_id = store.runs.begin("suite", cases={})
    with open_store(store_url) as store:
        assert store.runs.get(run_id).suite == "suite"


def test_a_single_round_verdict_stored_twice_before_0003_is_kept_once(store_url: str) -> None:
    single = single_round(make_record("single", llm=False))
    multi = make_multi_round_record("multi")
    with open_store(store_url) as store:
        run_id = store.runs.begin("suite", cases={"single": {}, "multi": {}})
        store.results.record(run_id, single)
        store.results.record(run_id, multi)
        with store.engine.begin() as connection:
            # What writers before 0003 stored: the single-round case's rows again, as its round's.
            columns = ", ".join(c.name for c in judgments_table.c if c.name not in ("id", "round_index"))
            connection.execute(
                text(
                    f"INSERT INTO judgments (round_index, {columns}) SELECT 0, {columns} FROM judgments"
                    " WHERE round_index IS NULL AND result_id = (SELECT id FROM results WHERE case_name = 'single')"
                )
            )
            connection.execute(text("UPDATE alembic_version SET version_num = '0002_lessons'"))
            # A 0002 store has none of the tables 0005 and 0006 create, and 0002's lessons table.
            tables = ("calibrations", "audit_log", "case_edits", "reviews", "web_sessions", "users", "lessons")
            for table in (*tables, "trace_queue"):  # 0010 creates trace_queue
                connection.execute(text(f"DROP TABLE {table}"))
            _lessons_as_of_0002().create(connection)
            connection.execute(text("ALTER TABLE suites DROP COLUMN settings"))  # 0008 adds it
            connection.execute(text("DROP INDEX ix_runs_experiment"))  # 0009 adds the index and columns
            connection.execute(text("ALTER TABLE runs DROP COLUMN variant"))
            connection.execute(text("ALTER TABLE runs DROP COLUMN experiment_id"))
            connection.execute(text("ALTER TABLE suites DROP COLUMN folder"))  # 0011 adds it
            connection.execute(text("ALTER TABLE results DROP COLUMN pass_mark"))  # 0012 adds it
            _drop_0014(connection)
            _drop_0013(connection)
        assert store.metrics.rates(run_id)["llm_judge"].total == 4  # the double count, before

    with open_store(store_url) as store:
        assert store.metrics.rates(run_id)["llm_judge"] == Rate(passed=2, total=3)
        with store.engine.connect() as connection:
            assert stored_revisions(connection) == (SCHEMA_HEAD,)
            rows = connection.execute(select(func.count()).select_from(judgments_table)).scalar_one()
        # The two-round case's own round verdicts are kept.
        assert rows == nodes_per_record(single) + nodes_per_record(multi)


def _drop_0014(connection: Connection) -> None:
    """Undo what 0014 adds: the kept comparisons and the comparison's indexes."""
    connection.execute(text("DROP TABLE run_comparisons"))
    connection.execute(text("DROP INDEX ix_results_run_case_figures"))
    connection.execute(text("DROP INDEX ix_results_trials"))


def _drop_0013(connection: Connection) -> None:
    """Undo what 0013 adds: the run summaries, the cost columns and the search index."""
    if connection.dialect.name == "sqlite":
        for name in ("insert", "delete", "update"):
            connection.execute(text(f"DROP TRIGGER IF EXISTS results_search_{name}"))
        connection.execute(text("DROP TABLE IF EXISTS results_search"))
    else:
        connection.execute(text("DROP INDEX IF EXISTS ix_results_search"))
    connection.execute(text("DROP INDEX ix_judgments_queue"))
    connection.execute(text("DROP TABLE run_summaries"))
    connection.execute(text("ALTER TABLE results DROP COLUMN unpriced_calls"))
    connection.execute(text("ALTER TABLE runs DROP COLUMN unpriced_calls"))
    connection.execute(text("ALTER TABLE runs DROP COLUMN cost_unknown"))


def _lessons_as_of_0002() -> Table:
    """The lessons table as revision 0002 made it (0007 adds scope and retirement to it)."""
    return Table(
        "lessons",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("suite_id", Integer, nullable=False),
        Column("run_id", String(64), nullable=False),
        Column("metric", String(255), nullable=False),
        Column("baseline", Float, nullable=False),
        Column("current", Float, nullable=False),
        Column("drop", Float, nullable=False),
        Column("threshold", Float, nullable=False),
        Column("failing", JSON, nullable=False),
        Column("text", Text, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        UniqueConstraint("run_id", "metric", name="uq_lessons_run_metric"),
        Index("ix_lessons_suite_created", "suite_id", "created_at"),
    )


def test_lessons_of_a_0006_store_keep_their_rows_and_gain_scope_and_retirement(store_url: str) -> None:
    engine = create_store_engine(store_url)
    with engine.begin() as connection:
        command.upgrade(_config(connection), "0006_people")
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO suites (id, name, created_at, updated_at) VALUES (1, 'old', :t, :t)"), {"t": stamp}
        )
        connection.execute(
            text(
                "INSERT INTO runs (id, suite_id, status, planned, started_at,"
                " total, passed, failed, errored, abstained)"
                " VALUES ('old-run', 1, 'completed', 0, :t, 0, 0, 0, 0, 0)"
            ),
            {"t": stamp},
        )
        connection.execute(
            text(
                'INSERT INTO lessons (suite_id, run_id, metric, baseline, current, "drop", threshold, failing,'
                " text, created_at) VALUES (1, 'old-run', 'llm_judge', 0.9, 0.6, 0.33, 0.2, '[]', 'fell', :t)"
            ),
            {"t": stamp},
        )
    engine.dispose()

    with open_store(store_url) as store:
        (kept,) = store.lessons.find("old")
        assert (kept.text, kept.origin, kept.case, kept.retired_at) == ("fell", "regression", None, None)
        added = store.lessons.add_manual("old", "Quote the refund window.", case="refund")
        assert store.lessons.retire(kept.id, "fixed in 2.1")
        assert [lesson.id for lesson in store.lessons.find("old", manual=True)] == [added]
        retired = [lesson for lesson in store.lessons.find("old", manual=True, retired=True) if lesson.id == kept.id]
        assert retired[0].retired_reason == "fixed in 2.1" and retired[0].retired_at is not None
