"""Which stored run a request finishes (``RunRequest.resume``), and the cases it planned.

A run id (or a unique prefix) names one run, which must be of the suite; ``last``
takes the suite's latest unfinished run, or starts a new one when there is none.
A run resumes the cases it planned, whatever the suite file says now; a case it
planned that the suite no longer has is refused here, before anything runs. A run
killed before its plan was stored whole also resumes the rest of the selection it
was started with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from jurybox.engine import resumable_cases
from jurybox.runs._request import RESUME_LAST, RunRequestError
from jurybox.suites import Case, Suite

if TYPE_CHECKING:
    from jurybox.store import Store


@dataclass(frozen=True)
class Notice:
    """Something the service tells the person who started the run; it does not stop the run.

    Attributes:
        kind: ``waiting`` (the store is locked by another process), ``note`` (worth a look)
            or ``info``.
        text: One line, plain text.
    """

    kind: Literal["waiting", "note", "info"]
    text: str


Notify = Callable[[Notice], None]


def resume_point(
    store: Store, suite: Suite, resume: str | None, notify: Notify
) -> tuple[str | None, Sequence[Case] | None]:
    """The run of ``suite`` to resume and the cases it planned ((None, None): a new run).

    Raises:
        RunRequestError: the run is another suite's, or planned a case the suite no longer has.
        StoreError: no run has that id (or the prefix names several).
    """
    run_id = _run_to_resume(store, suite, resume, notify)
    if run_id is None:
        return None, None
    planned = store.results.planned(run_id)
    progress = store.runs.plan_progress(run_id)
    # Killed while its plan was written (a big plan is written as the run goes): the rest is its selection's.
    rest = None if progress.complete else progress.selectors
    if not planned and rest is None:  # a run stored before runs kept their plan
        return run_id, None
    try:
        return run_id, resumable_cases(suite, planned, run_id, rest=rest)
    except ValueError as exc:
        raise RunRequestError(str(exc)) from exc


def _run_to_resume(store: Store, suite: Suite, resume: str | None, notify: Notify) -> str | None:
    if resume is None:
        return None
    if resume == RESUME_LAST:
        found = store.runs.latest(suite.name, unfinished=True)
        if found is None:
            notify(Notice("info", f"no unfinished run of suite {suite.name!r} to resume; starting a new run"))
            return None
        return found.id
    info = store.runs.resolve(resume, suite=suite.name)
    if info.suite != suite.name:
        raise RunRequestError(f"run {info.id} is a run of suite {info.suite!r}, not {suite.name!r}")
    if info.judge_model != suite.judge_model:
        notify(
            Notice(
                "note",
                f"run {info.id} started with judge model {info.judge_model or 'none'}; "
                f"the rest is judged with {suite.judge_model or 'none'}",
            )
        )
    return info.id
