"""The regression verdict ``jurybox run`` prints when a run ends: the same check as ``jurybox gate``.

A run whose suite has earlier runs in the store is compared with their baseline
(``Store.check_regressions``, the gate's policy) and says so in one line:
"Regression detected: ..." or "No regression against ...". With no earlier run there
is nothing to compare with and nothing is printed. ``--fail-on-regression`` makes a
regression the exit code; without it the exit code stays the cases' verdict, and
``jurybox gate`` is the CI gate. The store keeps each regression as a lesson when
the run finishes; the check here only reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from jurybox.store import MetricCheck, RunCheck, StoreError

if TYPE_CHECKING:
    from jurybox.store import Store


def regression_lines(check: RunCheck) -> list[tuple[str, str]]:
    """What to print about a run's check, as (style, line); empty when it had no baseline at all."""
    if all(metric.baseline_runs == 0 for metric in check.metrics):
        return []
    lines: list[tuple[str, str]] = []
    for metric in check.regressions:
        lines.append(("bold red", "Regression detected: " + _drop(metric)))
    for metric in check.warnings:
        lines.append(
            ("yellow", f"Possible regression (warm-up, {metric.baseline_runs} earlier run(s)): " + _drop(metric))
        )
    if check.regressions:
        lines.append(
            (
                "",
                f"Kept as a lesson (`jurybox lessons --suite {check.run.suite}`); "
                f"`jurybox gate {check.run.suite}` fails on it.",
            )
        )
    elif not check.warnings:
        runs = max(metric.baseline_runs for metric in check.metrics)
        lines.append(("green", f"No regression against the baseline of {runs} earlier run(s)."))
    return lines


def _drop(metric: MetricCheck) -> str:
    return (
        f"{metric.metric} {metric.current.value:.1%} vs baseline {metric.baseline or 0:.1%} "
        f"over {metric.baseline_runs} run(s), a {metric.drop or 0:.1%} relative drop "
        f"(threshold {metric.threshold:.0%})"
    )


def print_regression_verdict(store: Store, run_id: str, status: Console) -> bool:
    """Print the run's regression verdict; True when it regressed.

    The check only reads (the store wrote the run's lessons when it finished), so no
    regression is kept twice. A store that cannot answer costs the verdict, never the run.
    """
    try:
        check = store.check_regressions(run_id, record_lessons=False)
    except StoreError as exc:
        status.print(f"[yellow]warning:[/] cannot compare the run with its baseline: {escape(str(exc))}")
        return False
    for style, line in regression_lines(check):
        status.print(escape(line), style=style or None, highlight=False, soft_wrap=True)
    return bool(check.regressions)
