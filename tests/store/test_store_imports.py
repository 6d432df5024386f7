"""The store is plain SQLAlchemy Core: importing it or opening a store never loads the ORM (megabytes per run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jurybox.store import open_store

PROBE = """
import sys
import jurybox.store
assert "sqlalchemy.orm" not in sys.modules, "import jurybox.store loaded sqlalchemy.orm"
with jurybox.store.open_store(sys.argv[1]) as store:
    run = store.runs.latest()
    assert run is not None and store.results.read_all(run.id) == []
print("sqlalchemy.orm" in sys.modules)
"""


def test_importing_and_opening_a_store_does_not_load_the_orm(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:  # created and migrated here: Alembic may load what it likes
        store.runs.begin("suite", cases={"a": {}})
    out = subprocess.run([sys.executable, "-c", PROBE, url], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
