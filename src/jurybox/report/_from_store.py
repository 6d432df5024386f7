"""A RunReport of a run kept in the store: for `jurybox report RUN_ID`, the dashboard and resumed runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybox.core import RunStatus
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._model import RunReport

if TYPE_CHECKING:
    from jurybox.store import Store

CALIBRATIONS_KEY = "calibrations"
"""Where a run's config keeps its judges' calibration notes (``CalibratedJudge.to_dict()`` each)."""


def report_from_store(store: Store, run_id: str, *, notes: tuple[str, ...] = ()) -> RunReport:
    """The report of a stored run: every case recorded so far, resumed parts included.

    The run's calibration notes are the ones stored with it (``CALIBRATIONS_KEY``).
    A run the store still shows as running (its process was killed, or it is
    still going) is reported as ``interrupted``: the report covers what finished
    and says how many planned cases have no result.

    Raises:
        StoreError: no run with this id.
    """
    info = store.runs.get(run_id)
    status: RunStatus = (
        "completed" if info.status == "completed" else "failed" if info.status == "failed" else "interrupted"
    )
    metadata = {
        key: value for key, value in (("git_commit", info.git_commit), ("agent_version", info.agent_version)) if value
    }
    return RunReport(
        suite=info.suite,
        run_id=info.id,
        records=store.results.records(run_id),  # read on each pass: flat memory for any run size
        started_at=info.started_at,
        finished_at=info.finished_at,
        judge_model=info.judge_model,
        status=status,
        notes=notes,
        planned=info.planned,
        metadata=metadata,
        calibrations=stored_calibrations(info.config.get(CALIBRATIONS_KEY)),
    )


def stored_calibrations(value: Any) -> list[CalibratedJudge]:
    """The calibration notes kept in a run's config; an entry that does not read back is left out.

    They are notes about the run, not its results: one written by another jurybox
    version must not keep the run's report from being shown.
    """
    notes = []
    for item in value if isinstance(value, list) else []:
        try:
            notes.append(CalibratedJudge.from_dict(item))
        except (AttributeError, TypeError, ValueError):
            continue
    return notes
