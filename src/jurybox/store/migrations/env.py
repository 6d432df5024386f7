"""Alembic environment: migrations run on the connection ``open_store`` hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from jurybox.store._schema import metadata


def run_migrations_online() -> None:
    """Run the pending revisions on the caller's connection, one transaction per revision."""
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("jurybox store migrations run through open_store(), which passes a connection")
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things in place; batch mode rebuilds tables instead.
        render_as_batch=connection.dialect.name == "sqlite",
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("jurybox store migrations run online only (through open_store)")
run_migrations_online()
