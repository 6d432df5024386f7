"""Store fixtures: every store test runs against SQLite and PostgreSQL.

PostgreSQL tests use the server on 127.0.0.1:5432 (user postgres, database
test) and a fresh schema per test, named after this session, so parallel
sessions never clash. Unreachable PostgreSQL skips them locally and fails them
when CI=true.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from jurybox.store import Store, open_store

PG_ADMIN_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SESSION_TAG = f"jbx_{os.getpid()}_{secrets.token_hex(3)}"


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[Engine]:
    """An engine on the PostgreSQL test database, or skip/fail when the server is unreachable."""
    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except OperationalError as exc:
        engine.dispose()
        shown = make_url(PG_ADMIN_URL).render_as_string(hide_password=True)
        where = (
            "JURYBOX_TEST_PG" if "JURYBOX_TEST_PG" in os.environ else "the default; set JURYBOX_TEST_PG to change it"
        )
        reason = f"PostgreSQL at {shown} ({where}) is unreachable: {str(exc).splitlines()[0]}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run, not skip)")
        pytest.skip(f"{reason}; start it (scripts/services.sh) to run the postgres tests")
    yield engine
    engine.dispose()


_counter = iter(range(1_000_000))


def _pg_url(pg_admin: Engine) -> Iterator[str]:
    schema = f"{SESSION_TAG}_{next(_counter)}"
    with pg_admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
    finally:
        with pg_admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty store: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'jurybox.db'}"
    else:
        yield from _pg_url(request.getfixturevalue("pg_admin"))


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An opened, migrated empty store."""
    opened = open_store(store_url)
    yield opened
    opened.close()
