"""docs/seeds.md lists every promise of the five seed documents; no row without a test that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "seeds.md"
ROW = re.compile(r"^\| (?P<number>\d\.\d+) \| (?P<promise>[^|]+) \| (?P<where>.+) \| `(?P<test>tests/[^`]+\.py)` \|$")


def _rows() -> list[re.Match[str]]:
    lines = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if re.match(r"^\| \d\.\d+ \|", line)]
    rows = [ROW.match(line) for line in lines]
    assert all(rows), [line for line, row in zip(lines, rows, strict=True) if row is None]
    return [row for row in rows if row is not None]


def test_every_promise_names_a_test_file_that_exists() -> None:
    rows = _rows()
    missing = [f"{row['number']}: {row['test']}" for row in rows if not (ROOT / row["test"]).is_file()]
    assert not missing, f"rows naming a test file that does not exist: {missing}"


def test_the_table_covers_the_five_seeds_and_numbers_are_unique() -> None:
    rows = _rows()
    numbers = [row["number"] for row in rows]
    assert len(numbers) == len(set(numbers))
    assert {number.split(".")[0] for number in numbers} == {"0", "1", "2", "3", "4"}
    assert len(rows) >= 85


def test_every_deliberate_difference_is_marked_and_tested() -> None:
    differs = [row for row in _rows() if row["promise"].startswith("*differs*")]
    assert differs and all((ROOT / row["test"]).is_file() for row in differs)
