"""Which cases a resumed run judges: the ones it planned, as the suite defines them now.

A run killed while its plan was still being written (a big plan is written as the run
goes, see ``_plan_writer``) planned more than the store holds: the rest of its plan is
the selection it was started with, less the cases already planned, and its resume
writes that rest as it goes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from jurybox.suites import Case, StreamedCases, Suite


def resumable_cases(
    suite: Suite, planned: Sequence[str], run_id: str, *, rest: Sequence[str] | None = None
) -> Sequence[Case]:
    """The cases a resumed run judges: the ones it planned, in plan order, as the suite defines them now.

    Not the suite's whole selection: a run planned with ``--filter`` stays that run.

    Args:
        suite: The suite as it is now.
        planned: The names of the run's stored plan, in plan order.
        run_id: The run (for messages).
        rest: When the store holds only part of the plan: the selectors the run was started with
            (the cases they choose that ``planned`` lacks follow it). None: ``planned`` is the whole plan.

    Raises:
        ValueError: the suite no longer has some planned case (the run could never be completed).
    """
    if isinstance(suite.cases, StreamedCases):
        return _resumable_streamed(suite.cases, planned, run_id, suite.name, rest)
    by_name = {case.name: case for case in suite.cases}
    _refuse_gone([name for name in planned if name not in by_name], run_id, suite.name)
    chosen = tuple(by_name[name] for name in planned)
    return chosen if rest is None else chosen + tuple(unplanned_cases(suite, rest, planned))


def unplanned_cases(suite: Suite, selectors: Sequence[str], planned: Collection[str]) -> Sequence[Case]:
    """The rest of a plan the store did not get whole: the cases ``selectors`` choose, less those ``planned``."""
    chosen = suite.select(selectors)
    if isinstance(chosen, StreamedCases):
        return chosen.excluding(planned if isinstance(planned, set | frozenset) else set(planned))
    known = set(planned)
    return tuple(case for case in chosen if case.name not in known)


def _resumable_streamed(
    cases: StreamedCases, planned: Sequence[str], run_id: str, suite: str, rest: Sequence[str] | None
) -> StreamedCases:
    """A resumed run's cases of a suite with a cases file: the planned names, as the file has them now."""
    wanted = set(planned)  # a resume holds the plan's names (about 100 bytes a case); a fresh run holds none
    kept = cases.only(wanted)
    if len(kept) != len(wanted):
        _refuse_gone(sorted(wanted.difference(kept.names())), run_id, suite)
    return kept if rest is None else cases.only(wanted, also=rest)


def _refuse_gone(gone: Sequence[str], run_id: str, suite: str) -> None:
    if gone:
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        raise ValueError(
            f"run {run_id} planned case(s) suite {suite!r} no longer has: {shown}; "
            "it cannot be finished (start a new run)"
        )
