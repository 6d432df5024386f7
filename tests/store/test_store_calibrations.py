"""Calibrations in the store: filed by judge key, found by key and by name, newest first; revision 0005."""

from __future__ import annotations

from datetime import datetime

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from jurybox.store import Store, StoredCalibration, StoreError, open_store
from jurybox.store._engine import SCHEMA_HEAD, create_store_engine, known_revisions, stored_revisions


def _identity(name: str = "strict", key: str = "k1") -> dict[str, object]:
    return {"name": name, "kind": "llm", "model": "fake:grader", "template_hash": "abc", "settings": {}, "key": key}


FIGURES = {"kind": "binary", "n": 6, "tpr": 0.75, "tnr": 1.0, "positives": 4, "negatives": 2, "kappa": 0.62}
CALIBRATION = {"identity": {"name": "strict"}, "disagreements": [{"id": "q6", "reasoning": "no unit \u00e9\x00"}]}


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", "jurybox.store:migrations")
    config.attributes["connection"] = connection
    return config


def test_calibrations_come_at_revision_0005() -> None:
    assert "0005_calibrations" in known_revisions()


def test_a_calibration_round_trips(store: Store) -> None:
    saved = store.calibrations.save(_identity(), figures=FIGURES, calibration=CALIBRATION, dataset="labels.jsonl")

    found = store.calibrations.latest("k1")
    assert isinstance(found, StoredCalibration) and found.id == saved
    assert (found.key, found.name, found.dataset) == ("k1", "strict", "labels.jsonl")
    assert found.identity == _identity() and found.figures == FIGURES
    assert found.figure("tpr") == 0.75 and found.figure("kind") is None and found.figure("missing") is None
    # NUL cannot live in PostgreSQL text: it is replaced, the rest kept.
    assert found.calibration["disagreements"][0]["reasoning"] == "no unit \u00e9\ufffd"
    assert isinstance(found.created_at, datetime) and found.created_at.tzinfo is not None
    assert store.calibrations.get(saved) == found
    assert store.calibrations.latest("other") is None
    with pytest.raises(StoreError, match="no calibration 999"):
        store.calibrations.get(999)


def test_the_newest_calibration_wins_and_names_find_every_key(store: Store) -> None:
    first = store.calibrations.save(_identity(), figures=FIGURES, calibration={}, dataset="a.jsonl")
    second = store.calibrations.save(_identity(), figures={**FIGURES, "tpr": 0.9}, calibration={}, dataset="b.jsonl")
    changed = store.calibrations.save(_identity(key="k2"), figures=FIGURES, calibration={}, dataset="c.jsonl")
    store.calibrations.save(_identity("lenient", "k3"), figures=FIGURES, calibration={}, dataset="c.jsonl")

    latest = store.calibrations.latest("k1")
    assert latest is not None and latest.id == second and latest.figure("tpr") == 0.9
    assert [c.id for c in store.calibrations.find("strict")] == [changed, second, first]
    assert [c.name for c in store.calibrations.find(limit=2)] == ["lenient", "strict"]
    assert len(store.calibrations.find()) == 4


def test_an_identity_without_key_or_name_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="key and a name"):
        store.calibrations.save({"name": "x"}, figures={}, calibration={}, dataset="d")


def test_notes_are_merged_into_a_runs_config(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {}}, config={"workers": 1})
    store.runs.update_config(run_id, {"calibrations": [{"judge": "strict", "status": "corrected"}]})

    assert store.runs.get(run_id).config == {"workers": 1, "calibrations": [{"judge": "strict", "status": "corrected"}]}
    with pytest.raises(StoreError, match="unknown run"):
        store.runs.update_config("nope", {"x": 1})


def test_a_0004_store_upgrades_to_0005_and_keeps_its_runs(store_url: str) -> None:
    with open_store(store_url) as store:
        run_id = store.runs.begin("suite", cases={"a": {}})
        with store.engine.begin() as connection:
            command.downgrade(_config(connection), "0004_dashboard_indexes")
    engine = create_store_engine(store_url)
    with engine.connect() as connection:
        assert stored_revisions(connection) == ("0004_dashboard_indexes",)
        assert not inspect(connection).has_table("calibrations")
    engine.dispose()

    with open_store(store_url) as store:
        assert store.runs.get(run_id).suite == "suite"
        assert store.calibrations.find() == []
        store.calibrations.save(_identity(), figures=FIGURES, calibration={}, dataset="d")
        assert store.calibrations.latest("k1") is not None
        with store.engine.connect() as connection:
            assert stored_revisions(connection) == (SCHEMA_HEAD,)
