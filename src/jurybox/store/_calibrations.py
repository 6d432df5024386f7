"""Calibrations: judges measured against human labels, kept under their identity's key.

``jurybox calibrate`` files each judge's calibration here; a run's report looks
its judges up by key (``latest``) to correct their pass rates, and
by name (``calibrations(name)``) to tell a judge whose prompt or model changed
since it was calibrated. The store keeps plain JSON and never imports the
calibrate package: the caller hands it the identity, the figures and the whole
calibration already as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Row

from jurybox.store._cases import now
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable
from jurybox.store._models import as_utc
from jurybox.store._repository import Repository
from jurybox.store._schema import calibrations_table

JsonMap = Mapping[str, Any]
"""A JSON object as the store takes it: plain keys and values, no calibrate types."""


@dataclass(frozen=True)
class StoredCalibration:
    """One judge's calibration as the store keeps it.

    Attributes:
        id: Its row id.
        key: The judge identity's key (same prompt, model and settings: same key).
        name: The judge's name when it was calibrated.
        identity: Who the judge is: kind, model, template hash, settings (JSON).
        figures: The numbers lists and corrections read: ``tpr``, ``tnr``, ``positives``
            (human-pass rows), ``negatives`` (human-fail rows), ``kappa``, ``n``... (JSON).
        calibration: The judge's whole calibration (intervals, slices, disagreements) as JSON.
        dataset: The labelled set it was measured on.
        created_at: When it was stored (UTC).
    """

    id: int
    key: str
    name: str
    identity: Mapping[str, Any] = field(default_factory=dict)
    figures: Mapping[str, Any] = field(default_factory=dict)
    calibration: Mapping[str, Any] = field(default_factory=dict)
    dataset: str = ""
    created_at: datetime | None = None

    def figure(self, name: str) -> float | None:
        """A number of ``figures`` (``tpr``, ``tnr``, ``kappa``...), or None when it has none."""
        value = self.figures.get(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class CalibrationRepository(Repository):
    """The ``calibrations`` table (``store.calibrations``): one row per judge per calibration, newest wins."""

    def save(self, identity: JsonMap, *, figures: JsonMap, calibration: JsonMap, dataset: str) -> int:
        """Store one judge's calibration under ``identity["key"]`` and ``identity["name"]``; return its id.

        Raises:
            ValueError: the identity has no key or no name.
        """
        key, name = identity.get("key"), identity.get("name")
        if not isinstance(key, str) or not key or not isinstance(name, str) or not name:
            raise ValueError(f"a calibration's identity needs a key and a name, got key={key!r}, name={name!r}")
        with self._write() as connection:
            inserted = connection.execute(
                calibrations_table.insert()
                .values(
                    judge_key=key,
                    judge_name=name,
                    identity=db_jsonable(dict(identity)),
                    figures=db_jsonable(dict(figures)),
                    calibration=db_jsonable(dict(calibration)),
                    dataset=db_jsonable(dataset),
                    created_at=now(),
                )
                .returning(calibrations_table.c.id)
            )
            return int(inserted.scalar_one())

    def get(self, calibration_id: int) -> StoredCalibration:
        """The calibration with this id.

        Raises:
            StoreError: no such calibration.
        """
        with self._read() as connection:
            row = connection.execute(
                select(calibrations_table).where(calibrations_table.c.id == calibration_id)
            ).one_or_none()
        if row is None:
            raise StoreError(f"no calibration {calibration_id} in store {self.url}")
        return _stored(row)

    def latest(self, key: str) -> StoredCalibration | None:
        """The newest calibration filed under ``key``, or None."""
        found = self._newest(calibrations_table.c.judge_key == key, limit=1)
        return found[0] if found else None

    def find(self, name: str | None = None, *, limit: int | None = 50) -> list[StoredCalibration]:
        """Calibrations newest first, of the judge called ``name`` when given."""
        where = calibrations_table.c.judge_name == name if name is not None else None
        return self._newest(where, limit=limit)

    def _newest(self, where: Any, *, limit: int | None) -> list[StoredCalibration]:
        query = select(calibrations_table).order_by(
            calibrations_table.c.created_at.desc(), calibrations_table.c.id.desc()
        )
        if where is not None:
            query = query.where(where)
        if limit is not None:
            query = query.limit(limit)
        with self._read() as connection:
            return [_stored(row) for row in connection.execute(query)]


def _stored(row: Row[Any]) -> StoredCalibration:
    return StoredCalibration(
        id=row.id,
        key=row.judge_key,
        name=row.judge_name,
        identity=dict(row.identity or {}),
        figures=dict(row.figures or {}),
        calibration=dict(row.calibration or {}),
        dataset=row.dataset,
        created_at=as_utc(row.created_at),
    )
