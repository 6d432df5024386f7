"""The live progress bar of ``jurybox run``: cases done, pass/fail so far, judge calls, tokens, cost, ETA."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column

from jurybox.core import CaseRecord, Status
from jurybox.models import Spend
from jurybox.report import cost_text, judge_calls_text

WIDE = 120
"""From this many columns the bar also shows the suite name and the judge spend."""


class RichProgress:
    """A ProgressSink drawing one rich progress bar per suite.

    Updated once per finished case (never per judge call), and redrawn by
    rich's own refresh thread a few times a second, so it costs the run nothing.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._counts = {status: 0 for status in Status}

    def start(self, suite: str, total: int, done: int) -> None:
        self._counts = {status: 0 for status in Status}
        self._progress = Progress(
            *self._columns(self.console.width),
            console=self.console,
            transient=False,
            refresh_per_second=4,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            suite,
            total=total,
            completed=done,
            passed=0,
            failed=0,
            errors=0,
            abstained=0,
            calls="0",
            tokens=0,
            cost="$0.00",
        )

    @staticmethod
    def _columns(width: int) -> list[ProgressColumn]:
        """The bar's columns for a terminal ``width`` wide: never squeezed until a count is cut with ``…``.

        From WIDE columns: suite, bar, done/total, verdict counts, judge calls, tokens and cost, ETA.
        Narrower (a CI log at 80): the suite name is in the line above, the spend in the run's last
        line, so the bar keeps the counts a person watches, in short words.
        """
        counts = (
            "[green]{task.fields[passed]} pass[/] [red]{task.fields[failed]} fail[/] "
            "[magenta]{task.fields[errors]} error[/] [yellow]{task.fields[abstained]} abstain[/]"
        )
        if width >= WIDE:
            return [
                TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True, max_width=30)),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                TextColumn(counts, table_column=Column(no_wrap=True)),
                TextColumn(
                    "judge calls {task.fields[calls]} {task.fields[tokens]} tok {task.fields[cost]}",
                    table_column=Column(no_wrap=True),
                ),
                TimeRemainingColumn(compact=True),
            ]
        return [
            BarColumn(bar_width=10),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TextColumn(counts, table_column=Column(no_wrap=True)),
            TimeRemainingColumn(compact=True),
        ]

    def case_done(self, record: CaseRecord, spend: Spend) -> None:
        if self._progress is None or self._task is None:
            return
        self._counts[record.status] += 1
        cost = cost_text(spend.cost, spend.unpriced_calls)  # the report's wording: unknown is never $0
        self._progress.update(
            self._task,
            advance=1,
            passed=self._counts[Status.PASS],
            failed=self._counts[Status.FAIL],
            errors=self._counts[Status.ERROR],
            abstained=self._counts[Status.ABSTAIN],
            # Cache hits only once there are some: the bar must fit 120 columns.
            calls=judge_calls_text(spend.calls, spend.cache_hits or None),
            tokens=spend.tokens,
            cost=cost,
        )

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
        self._progress = None
        self._task = None
