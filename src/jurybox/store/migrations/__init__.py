"""Alembic migrations of the store schema; run programmatically by ``open_store``."""
