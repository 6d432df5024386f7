"""Which cases a resumed run judges: the ones it planned, as the suite defines them now."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.suites import Case, StreamedCases, Suite


def resumable_cases(suite: Suite, planned: Sequence[str], run_id: str) -> Sequence[Case]:
    """The cases a resumed run judges: the ones it planned, in plan order, as the suite defines them now.

    Not the suite's whole selection: a run planned with ``--filter`` stays that run.

    Raises:
        ValueError: the suite no longer has some planned case (the run could never be completed).
    """
    if isinstance(suite.cases, StreamedCases):
        return _resumable_streamed(suite.cases, planned, run_id, suite.name)
    by_name = {case.name: case for case in suite.cases}
    gone = [name for name in planned if name not in by_name]
    if gone:
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        raise ValueError(
            f"run {run_id} planned case(s) suite {suite.name!r} no longer has: {shown}; "
            "it cannot be finished (start a new run)"
        )
    return tuple(by_name[name] for name in planned)


def _resumable_streamed(cases: StreamedCases, planned: Sequence[str], run_id: str, suite: str) -> StreamedCases:
    """A resumed run's cases of a suite with a cases file: the planned names, as the file has them now."""
    wanted = set(planned)  # a resume holds the plan's names (about 100 bytes a case); a fresh run holds none
    chosen = cases.only(wanted)
    if len(chosen) != len(wanted):
        gone = sorted(wanted.difference(chosen.names()))
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        raise ValueError(
            f"run {run_id} planned case(s) suite {suite!r} no longer has: {shown}; "
            "it cannot be finished (start a new run)"
        )
    return chosen
