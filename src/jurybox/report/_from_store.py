"""A RunReport of a run kept in the store: for `jurybox report RUN_ID`, the dashboard and resumed runs."""

from __future__ import annotations

from jurybox.core import RunStatus
from jurybox.report._model import RunReport
from jurybox.store import Store


def report_from_store(store: Store, run_id: str, *, notes: tuple[str, ...] = ()) -> RunReport:
    """The report of a stored run: every case recorded so far, resumed parts included.

    A run the store still shows as running (its process was killed, or it is
    still going) is reported as ``interrupted``: the report covers what finished
    and says how many planned cases have no result.

    Raises:
        StoreError: no run with this id.
    """
    info = store.get_run(run_id)
    status: RunStatus = (
        "completed" if info.status == "completed" else "failed" if info.status == "failed" else "interrupted"
    )
    metadata = {
        key: value for key, value in (("git_commit", info.git_commit), ("agent_version", info.agent_version)) if value
    }
    return RunReport(
        suite=info.suite,
        run_id=info.id,
        records=store.records(run_id),  # read on each pass: flat memory for any run size
        started_at=info.started_at,
        finished_at=info.finished_at,
        judge_model=info.judge_model,
        status=status,
        notes=notes,
        planned=info.planned,
        metadata=metadata,
    )
