"""Connecting to a store: URLs, SQLite settings for concurrent writers, and migrating on open."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, DBAPIError, OperationalError

from jurybox.store._errors import StoreAccessError, StoreError, StoreVersionError
from jurybox.store._json import dumps

if TYPE_CHECKING:
    from alembic.config import Config

DEFAULT_URL = "sqlite:///.jurybox/jurybox.db"
"""Where the store lives when neither ``--store`` nor ``JURYBOX_STORE`` says otherwise."""

ENV_VAR = "JURYBOX_STORE"

SCHEMA_HEAD = "0014_stored_comparisons"
"""The newest migration revision. Opening a store already at it skips loading Alembic
(a test checks it matches the migration scripts)."""

WRITE = {"jurybox_write": True}
"""Execution option marking a connection that will write: SQLite takes the write lock at BEGIN."""

# Any fixed 64-bit key works; it only has to be the same for every jurybox process.
_PG_MIGRATION_LOCK = 0x6A75727962_6F78


def access_error(url: URL, exc: DBAPIError) -> StoreAccessError:
    """A driver error met while reading or writing, as the store's own error (its first line, no SQL)."""
    text = str(exc.orig if exc.orig is not None else exc).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    return StoreAccessError(describe(url), reason)


def resolve_url(url: str | None) -> str:
    """The store URL to use: the argument, else ``JURYBOX_STORE``, else the default SQLite file."""
    chosen = url or os.environ.get(ENV_VAR) or DEFAULT_URL
    # "postgresql://" would pick psycopg2, which jurybox does not depend on; use psycopg 3.
    for prefix in ("postgresql://", "postgres://"):
        if chosen.startswith(prefix):
            chosen = "postgresql+psycopg://" + chosen[len(prefix) :]
    return chosen


def describe(url: URL) -> str:
    """The URL without its password, for messages."""
    return url.render_as_string(hide_password=True)


def shown_url(url: str | None) -> str:
    """A store URL (None: the configured one) as messages show it: password hidden; an invalid one says so."""
    try:
        return describe(make_url(resolve_url(url)))
    except ArgumentError:
        return "(an invalid store URL)"


def store_file(url: str | None) -> Path | None:
    """The SQLite file a store URL (None: the configured one) names; None for a server, memory or an invalid URL.

    What a command that only reads checks before opening: a file that does not exist is a
    typo or a store never made, and opening it would create an empty one.
    """
    try:
        parsed = make_url(resolve_url(url))
    except ArgumentError:
        return None
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).expanduser()


def create_store_engine(url: str, *, busy_timeout: float = 30.0) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and write transactions that lock at BEGIN.

    Raises:
        StoreError: when the URL cannot be parsed or names an unsupported database.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid store URL {url!r}: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed, busy_timeout)
    if backend == "postgresql":
        return _postgresql_engine(parsed)
    raise StoreError(
        f"unsupported store URL {describe(parsed)!r}: use sqlite:///path/to/file.db or postgresql+psycopg://user@host/db"
    )


def _postgresql_engine(url: URL) -> Engine:
    # No pre-ping: it costs a round trip per case written; recycling keeps idle connections fresh,
    # and a write that still fails raises, so the run can be resumed.
    engine = create_engine(url, json_serializer=dumps, pool_recycle=1800, hide_parameters=True)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The store looks cases and results up by lists of names, the same statement chunk after chunk.
        # psycopg prepares a statement run five times, and the server's generic plan for it compares
        # every row with every name: quadratic in a run's size (planning 40,000 cases took 30 s, not 2).
        dbapi_connection.execute("SET plan_cache_mode = force_custom_plan")
        # The dashboard's joins of big runs cost more than the JIT threshold, and compiling them took
        # 100 ms and more of a query of 300 (a search: 24 ms against 10): none runs long enough to gain it back.
        dbapi_connection.execute("SET jit = off")
        dbapi_connection.commit()

    return engine


def _sqlite_engine(url: URL, busy_timeout: float) -> Engine:
    database = url.database or ""
    in_memory = database in ("", ":memory:") or database.startswith("file::memory:")
    if not in_memory and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    # hide_parameters: a failing statement's error must never print the case content it was writing.
    engine = create_engine(url, json_serializer=dumps, connect_args={"timeout": busy_timeout}, hide_parameters=True)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (the pysqlite driver's
        # implicit, late BEGIN cannot take the write lock up front).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            if not in_memory:
                # WAL: readers never block the writer and a killed process leaves no torn page.
                _use_wal(cursor, busy_timeout)
                cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # A write transaction that starts deferred and later upgrades can fail at
        # once with SQLITE_BUSY when another process wrote meanwhile; IMMEDIATE
        # waits on the busy timeout instead, so concurrent runs both finish.
        immediate = connection.get_execution_options().get("jurybox_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _alembic_config(connection: Connection | None = None) -> Config:
    # Alembic is imported only when a schema has to be checked against the scripts or migrated.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "jurybox.store:migrations")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def schema_head() -> str:
    """The newest schema revision this jurybox knows, read from the migration scripts."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships revisions
        raise StoreError("jurybox ships no store migrations; the installation is broken")
    return head


def known_revisions() -> set[str]:
    """Every schema revision this jurybox knows."""
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory.from_config(_alembic_config()).walk_revisions()}


def stored_revisions(connection: Connection) -> tuple[str, ...]:
    """The schema revision(s) recorded in the database (empty for a new database)."""
    if not inspect(connection).has_table("alembic_version"):
        return ()
    return tuple(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())


def _check_revisions(url: URL, connection: Connection) -> tuple[str, ...]:
    revisions = stored_revisions(connection)
    unknown = sorted(set(revisions) - known_revisions())
    if unknown:
        raise StoreVersionError(
            f"the store {describe(url)} was written by a newer jurybox (schema revision {', '.join(unknown)}); "
            f"this jurybox knows schema revisions up to {schema_head()}. Upgrade jurybox to read it; "
            "nothing was read or written."
        )
    if not revisions and inspect(connection).has_table("runs"):
        raise StoreError(f"{describe(url)} has a 'runs' table but no jurybox schema version: it is not a jurybox store")
    return revisions


def unreadable_store(url: URL, exc: DatabaseError) -> StoreError | StoreAccessError:
    """One line for a database file that cannot be read: which file and what to do, no stored content.

    Only the driver's own reason is kept (``file is not a database``, ``database disk image is
    malformed``); SQLAlchemy's message would add the statement and its parameters.
    """
    reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
    if url.get_backend_name() != "sqlite":
        # A server's error (host unreachable, connection dropped, a driver's protocol error) is no
        # damaged file: a backup is not the answer, a server that answers is.
        return StoreAccessError(describe(url), reason)
    where = url.database or describe(url)
    return StoreError(
        f"{where}: the store cannot be read ({reason}); restore it from a backup, or move it aside "
        "to start a new store. Nothing was written."
    )


def lock_notice(url: str | None, busy_timeout: float) -> str | None:
    """What to tell the user when another process holds the SQLite store's write lock, or None.

    SQLite waits up to ``busy_timeout`` seconds for the lock in silence; saying so up front keeps
    a run that waits from looking hung. ``url`` None means the configured store (``resolve_url``).
    """
    path = store_file(url)
    if path is None or not path.is_file():
        return None
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            return None
        return f"the store {path} is locked by another process; waiting up to {busy_timeout:g} s for it"
    except sqlite3.DatabaseError:
        return None  # an unreadable file: opening it says so
    finally:
        probe.close()
    return None


def _use_wal(cursor: Any, busy_timeout: float) -> None:
    """Put the database in WAL mode unless it is already, waiting out other connections as a write would.

    Asking to change the journal mode fails at once while another connection holds a lock, whatever
    the busy timeout says: two commands opening a new store together, or one opening it while a run
    writes. So the mode is read first (an open store is in WAL already) and the change retried.
    """
    deadline = time.monotonic() + busy_timeout
    while True:
        mode = cursor.execute("PRAGMA journal_mode").fetchone()
        if mode is not None and str(mode[0]).lower() == "wal":
            return
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def migrate(engine: Engine) -> None:
    """Bring the store's schema to this jurybox's head revision, or refuse a newer one.

    Several processes may open a new store at once: SQLite serializes them on
    the write lock taken at BEGIN, PostgreSQL on an advisory lock, and each
    re-reads the revision under the lock so only the first one migrates. The
    whole upgrade is one transaction, so a failure leaves the old schema intact.

    Raises:
        StoreVersionError: the store has a revision this jurybox does not know.
        StoreError: the database holds something that is not a jurybox store, or cannot be read.
        StoreAccessError: the database is locked past the busy timeout, or cannot be reached.
    """
    try:
        with engine.connect() as connection:
            if stored_revisions(connection) == (SCHEMA_HEAD,):
                return
            _check_revisions(engine.url, connection)
    except OperationalError as exc:  # locked, down, refused: the database is fine, only not answering now
        raise access_error(engine.url, exc) from exc
    except DatabaseError as exc:
        raise unreadable_store(engine.url, exc) from None
    from alembic import command

    head = schema_head()
    with engine.connect().execution_options(**WRITE) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        if _check_revisions(engine.url, connection) == (head,):
            return
        command.upgrade(_alembic_config(connection), "head")
