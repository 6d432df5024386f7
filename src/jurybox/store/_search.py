"""The search box of a run page: a case name, reasoning or error containing some text, through an index.

A scan of a 100,000-case run's texts takes hundreds of milliseconds; schema 0013 made a
trigram index of them (an FTS5 table on SQLite, ``pg_trgm`` on PostgreSQL), which finds
text of three characters or more without reading the run's other rows. A shorter text,
or a store whose database could not make the index, is searched by reading the rows.
Either way the match is the same: case-insensitive, anywhere in any of the three texts.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import String, func, literal_column, or_, select, text
from sqlalchemy.engine import Connection

from jurybox.store._schema import results_table

SearchIndex = Literal["fts5", "trigram", "none"]
MIN_INDEXED = 3
"""A trigram index finds texts of at least three characters."""

_known: dict[str, SearchIndex] = {}
"""Which index each store has (by URL): looked up once per process."""


def search_index(connection: Connection) -> SearchIndex:
    """The search index this store has (``none`` when 0013 could not make one)."""
    key = connection.engine.url.render_as_string(hide_password=False)
    found = _known.get(key)
    if found is None:
        if connection.dialect.name == "sqlite":
            query = "SELECT 1 FROM sqlite_master WHERE name = 'results_search'"
            found = "fts5" if connection.exec_driver_sql(query).first() else "none"
        else:
            query = "SELECT 1 FROM pg_indexes WHERE indexname = 'ix_results_search' AND schemaname = current_schema()"
            found = "trigram" if connection.exec_driver_sql(query).first() else "none"
        _known[key] = found
    return found


def search_condition(connection: Connection, needle: str) -> Any:
    """A condition on ``results``: its case name, reasoning or error contains ``needle`` (any case)."""
    r = results_table
    kind = search_index(connection) if len(needle) >= MIN_INDEXED else "none"
    if kind == "fts5":
        # A quoted FTS5 string is matched as a substring by the trigram tokenizer, case-insensitively.
        phrase = '"' + needle.replace('"', '""') + '"'
        matches: Any = (
            select(literal_column("rowid"))
            .select_from(text("results_search"))
            .where(text("results_search MATCH :phrase").bindparams(phrase=phrase))
        )
        return r.c.id.in_(matches)
    if kind == "trigram":
        # Exactly the indexed expression (the separators inline, not bound), so the planner can use it.
        space = literal_column("' '", String)
        texts = func.lower(
            r.c.case_name + space + r.c.reasoning + space + func.coalesce(r.c.error, literal_column("''"))
        )
        escaped = needle.lower().replace("/", "//").replace("%", "/%").replace("_", "/_")
        return texts.like(f"%{escaped}%", escape="/")
    return or_(
        r.c.case_name.icontains(needle, autoescape=True),
        r.c.reasoning.icontains(needle, autoescape=True),
        r.c.error.icontains(needle, autoescape=True),
    )
