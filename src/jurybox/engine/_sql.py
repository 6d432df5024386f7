"""Database checks: an SQL query against the agent's database must return the expected rows or value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from jurybox.core import Check, Context, Judgment
from jurybox.judges import SqlQueryError
from jurybox.suites import SqlCheck, SqlExpect


class SqlPort(Protocol):
    """What SQL checks need from the agent's databases (``jurybox.judges.SqlDatabases`` provides it).

    Called from worker threads: a database round trip must not stall the event loop.
    """

    def parameters(self, query: str) -> set[str]:
        """The named parameters ``query`` needs."""
        ...

    def rows(self, url: str, query: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of ``query`` on ``url``; raises ``SqlQueryError`` when it cannot run."""
        ...

    def dispose(self) -> None:
        """Release the connections (the run is over)."""
        ...


class SqlCheckJudge:
    """A deterministic judge running one ``sql_checks`` entry for one session.

    It runs in a worker thread (``blocking``): a database round trip must not
    stall the other cases' judges.
    """

    kind = "deterministic"
    blocking = True

    def __init__(self, check: SqlCheck, databases: SqlPort, url: str, session_id: str, name: str) -> None:
        self.check = check
        self.databases = databases
        self.url = url
        self.session_id = session_id
        self.name = name

    def __call__(self, context: Context) -> Judgment:
        values = {"session_id": self.session_id, **self.check.params}
        try:
            wanted = self.databases.parameters(self.check.query)
        except Exception as exc:  # a query the SQL parser refuses is the check's error, not the run's
            return Judgment.errored(f"query failed: {type(exc).__name__}: {exc}", exception=exc, judge=self.name)
        missing = sorted(wanted - set(values))
        if missing:
            return Judgment.errored(
                f"query needs parameter(s) {', '.join(missing)}; give them in 'params'", judge=self.name
            )
        try:
            rows = self.databases.rows(self.url, self.check.query, {k: values[k] for k in wanted})
        except SqlQueryError as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            return Judgment.errored(f"query failed: {exc}", exception=cause, judge=self.name)
        checks = expectation_checks(self.check.expect, rows)
        failed = [c for c in checks if not c.passed]
        metadata = {
            "query": self.check.query,
            "rows": len(rows),
            "value": _plain(rows[0][0]) if rows and rows[0] else None,
        }
        if failed:
            return Judgment.failed(
                0.0, "; ".join(c.message for c in failed), checks=checks, judge=self.name, metadata=metadata
            )
        return Judgment.passed(
            1.0, "; ".join(c.message for c in checks), checks=checks, judge=self.name, metadata=metadata
        )


def expectation_checks(expect: SqlExpect, rows: Sequence[tuple[Any, ...]]) -> list[Check]:
    """One Check per expectation; with none given, the query must return at least one row."""
    checks: list[Check] = []
    count = len(rows)
    value = rows[0][0] if rows and rows[0] else None
    if expect.rows is not None:
        checks.append(Check("rows", count == expect.rows, f"{count} row(s), expected {expect.rows}"))
    if expect.min_rows is not None:
        checks.append(
            Check("min_rows", count >= expect.min_rows, f"{count} row(s), expected at least {expect.min_rows}")
        )
    if expect.max_rows is not None:
        checks.append(
            Check("max_rows", count <= expect.max_rows, f"{count} row(s), expected at most {expect.max_rows}")
        )
    if expect.equals is not None:
        checks.append(Check("equals", value == expect.equals, f"value {value!r}, expected {expect.equals!r}"))
    if expect.min is not None or expect.max is not None:
        number = _number(value)
        if number is None:
            checks.append(Check("range", False, f"value {value!r} is not a number"))
        else:
            if expect.min is not None:
                checks.append(Check("min", number >= expect.min, f"value {number:g}, expected at least {expect.min:g}"))
            if expect.max is not None:
                checks.append(Check("max", number <= expect.max, f"value {number:g}, expected at most {expect.max:g}"))
    if expect.contains is not None:
        found = value is not None and expect.contains in str(value)
        checks.append(
            Check("contains", found, f"value {value!r} {'contains' if found else 'lacks'} {expect.contains!r}")
        )
    if not checks:
        checks.append(Check("rows", count > 0, f"{count} row(s), expected at least one"))
    return checks


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _plain(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)
