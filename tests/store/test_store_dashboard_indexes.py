"""Revision 0004: the dashboard's indexes are added to a 0003 store on open, and a downgrade removes them."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from store_testkit import make_record

from jurybox.store import open_store, schema_head
from jurybox.store._engine import create_store_engine, stored_revisions

NEW_INDEXES = {
    "ix_results_run_status_case": ("results", ["run_id", "status", "case_name"]),
    "ix_judgments_run_depth_tier": ("judgments", ["run_id", "depth", "tier", "status", "score"]),
}


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", "jurybox.store:migrations")
    config.attributes["connection"] = connection
    return config


def _indexes(connection: Connection) -> dict[str, tuple[str, list[str]]]:
    inspector = inspect(connection)
    return {
        index["name"]: (table, [str(column) for column in index["column_names"]])
        for table in ("results", "judgments")
        for index in inspector.get_indexes(table)
        if index["name"] in NEW_INDEXES
    }


def test_the_dashboard_indexes_follow_0003() -> None:
    revision = ScriptDirectory.from_config(_config()).get_revision("0004_dashboard_indexes")
    assert revision is not None and revision.down_revision == "0003_single_verdict_rows"


def test_a_0003_store_gets_the_indexes_on_open_and_keeps_its_results(store_url: str) -> None:
    with open_store(store_url) as store:
        run_id = store.runs.begin("suite", cases={"a": {}})
        store.results.record(run_id, make_record("a"))
        store.finish_run(run_id)
        metrics = store.metrics.rates(run_id)
        with store.engine.begin() as connection:
            command.downgrade(_config(connection), "0003_single_verdict_rows")
    engine = create_store_engine(store_url)
    with engine.connect() as connection:
        assert stored_revisions(connection) == ("0003_single_verdict_rows",)
        assert _indexes(connection) == {}
    engine.dispose()

    with open_store(store_url) as store:
        assert store.metrics.rates(run_id) == metrics
        assert [record.case for record in store.results.read_all(run_id)] == ["a"]
        with store.engine.connect() as connection:
            assert stored_revisions(connection) == (schema_head(),)
            assert _indexes(connection) == NEW_INDEXES
