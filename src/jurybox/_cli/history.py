"""Run-history commands: ``history``, ``gate``, ``store import/export``, and ``compare`` (from compare.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurybox._cli.common import StoreOption, console, fail, money, opened_store, pct
from jurybox._cli.compare import compare
from jurybox._cli.gate_significance import gate_methods, print_significance
from jurybox._cli.layout import print_fitted, stacked_row
from jurybox.runs import import_suite
from jurybox.stats import ALPHA
from jurybox.store import (
    MetricCheck,
    RegressionPolicy,
    RunCheck,
    RunInfo,
    Store,
    check_significance,
    export_suite_file,
)

EXIT_REGRESSION = 1

_STATE_STYLE = {"ok": "green", "regression": "bold red", "warning": "yellow", "warmup": "cyan"}


def _fractions(items: Sequence[str], option: str) -> dict[str, float]:
    """Parse ``NAME=0.15`` or ``NAME=15%`` options."""
    parsed: dict[str, float] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip() or not raw.strip():
            raise typer.BadParameter(
                f"{item!r}: expected NAME=FRACTION, e.g. llm_judge=0.2 or llm_judge=20%", param_hint=option
            )
        text = raw.strip()
        try:
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise typer.BadParameter(f"{item!r}: {text!r} is not a number", param_hint=option) from None
        parsed[name.strip()] = value
    return parsed


def _policy(
    store: Store, window: int | None, thresholds: Sequence[str], targets: Sequence[str], baseline: str | None = None
) -> RegressionPolicy:
    try:
        return store.policy.with_overrides(
            window=window,
            thresholds=_fractions(thresholds, "--threshold"),
            targets=_fractions(targets, "--target"),
            baseline=baseline,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _state_text(check: MetricCheck) -> Text:
    label = {"warmup": "warm-up", "warning": "warning (warm-up)"}.get(check.state, check.state)
    return Text(label, style=_STATE_STYLE[check.state])


_CHECK_COLUMNS = ("metric", "current", "baseline", "drop", "threshold", "target", "state")


def _print_check(out: Console, result: RunCheck) -> None:
    """The gate's metrics: a table when it fits, else one block per metric (nothing cut at 80 columns)."""
    table = Table(title=f"{result.run.suite} · run {result.run.id}", title_justify="left")
    for column in _CHECK_COLUMNS:
        table.add_column(column, justify="left" if column in ("metric", "state") else "right", no_wrap=True)
    stacked = []
    for check in result.metrics:
        cells = _check_cells(check)
        table.add_row(*cells)
        head = Text(check.metric, style="bold") + Text(" · ") + cells[-1]
        labelled = [
            Text(f"{name} ", style="dim") + cell for name, cell in zip(_CHECK_COLUMNS[1:-1], cells[1:-1], strict=True)
        ]
        stacked.append(stacked_row(head, labelled))
    print_fitted(out, table, stacked)


def _check_cells(check: MetricCheck) -> list[Text]:
    baseline = "-" if check.baseline is None else f"{check.baseline:.1%} ({check.baseline_runs} runs)"
    target = Text("-")
    if check.target is not None:
        met = check.target_met
        target = Text(f"{check.target:.0%} {'met' if met else 'missed'}", style="green" if met else "yellow")
    return [
        Text(check.metric),
        Text(f"{check.current.value:.1%} ({check.current.passed}/{check.current.total})"),
        Text(baseline),
        Text(pct(check.drop)),
        Text(f"{check.threshold:.0%}"),
        target,
        _state_text(check),
    ]


def history(
    suite: Annotated[
        str | None, typer.Argument(help="Suite name (optional when the store has runs of one suite only).")
    ] = None,
    store_url: StoreOption = None,
    limit: Annotated[int, typer.Option(help="How many recent runs to show.")] = 20,
) -> None:
    """Show a suite's trend: pass rate per run overall and per judge tier, with each run's gate state."""
    out = console()
    with opened_store(store_url) as store:
        suite = suite or _only_suite(store)
        runs = store.runs.newest(suite, limit=limit)
        if not runs:
            fail(f"no runs of suite {suite!r} in store {store.url}")
        rows: list[tuple[RunInfo, RunCheck | None]] = []
        for run in reversed(runs):  # oldest first reads as a trend
            check = store.check_regressions(run.id, record_lessons=False) if run.finished else None
            rows.append((run, check))
    tiers = sorted({m.metric for _, c in rows if c for m in c.metrics} - {"overall"})
    table = Table(title=f"History of {suite} (oldest first)", title_justify="left")
    for column in ("run", "started (UTC)", "status", "cases", "overall", *tiers, "cost", "gate"):
        left = column in ("run", "started (UTC)", "status", "gate")
        # Ids and times stay whole (they are copied into `compare`); the gate text may wrap.
        table.add_column(column, justify="left" if left else "right", no_wrap=column != "gate")
    stacked = []
    for run, check in rows:
        by_metric = {m.metric: m for m in check.metrics} if check else {}
        started, cases, cost = f"{run.started_at:%Y-%m-%d %H:%M}", f"{run.recorded}/{run.planned}", money(run.cost)
        rates: list[Text] = []
        for metric in ("overall", *tiers):
            found = by_metric.get(metric)
            if found is None:
                rates.append(Text(pct(run.pass_rate) if metric == "overall" and check is None else "-"))
            else:
                style = _STATE_STYLE[found.state] if found.state != "ok" else ""
                rates.append(Text(pct(found.current.value), style=style))
        table.add_row(run.id, started, run.status, cases, *rates, cost, _gate_cell(check))
        head = Text(run.id, style="bold") + Text(f" · {started} · {run.status} · {cases} cases · gate ")
        labelled = [Text(f"{m} ", style="dim") + rate for m, rate in zip(("overall", *tiers), rates, strict=True)]
        stacked.append(stacked_row(head + _gate_cell(check), [*labelled, Text("cost ", style="dim") + Text(cost)]))
    print_fitted(out, table, stacked)


def _only_suite(store: Store) -> str:
    """The one suite the store has runs of; a usage error naming them when there are none or several."""
    names = store.runs.suite_names(limit=11)
    if len(names) == 1:
        return names[0]
    if not names:
        fail(f"no runs in store {store.url}: run a suite first (jurybox run SUITE.yaml)")
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    fail(f"the store has runs of several suites ({shown}): name one, e.g. jurybox history {names[0]}")


def _gate_cell(check: RunCheck | None) -> Text:
    if check is None:
        return Text("not completed", style="dim")
    if check.regressions:
        return Text("regression: " + ", ".join(m.metric for m in check.regressions), style="bold red")
    if check.warmup_targets_missed:  # fails the gate: during warm-up the targets gate
        return Text("below target: " + ", ".join(m.metric for m in check.warmup_targets_missed), style="bold red")
    if check.warnings:
        return Text("warning: " + ", ".join(m.metric for m in check.warnings), style="yellow")
    if check.warming_up:
        return Text("warm-up", style="cyan")
    return Text("ok", style="green")


def gate(
    suite: Annotated[str | None, typer.Argument(help="Suite whose latest completed run is gated.")] = None,
    run: Annotated[str | None, typer.Option("--run", help="Gate this run (id, prefix or 'last') instead.")] = None,
    window: Annotated[int | None, typer.Option(help="Baseline window in runs (default 5).")] = None,
    threshold: Annotated[
        list[str] | None,
        typer.Option(help="Regression threshold as a relative drop, e.g. llm_judge=0.2 or '*=15%'. Repeatable."),
    ] = None,
    target: Annotated[
        list[str] | None, typer.Option(help="Target pass rate, e.g. deterministic=0.95. Repeatable.")
    ] = None,
    fail_under_target: Annotated[
        bool,
        typer.Option("--fail-under-target", help="Exit 1 when a metric misses its target after warm-up too."),
    ] = False,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="Earlier runs that may enter the baseline: passing (completed and meeting every target; "
            "the default), completed, or all (interrupted and failed runs too).",
        ),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option(
            "--method",
            help="threshold (a relative drop against the baseline mean; the default), significance (a drop "
            "larger than the noise, cases paired with the baseline runs' outcomes) or both. Repeatable.",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of --method significance.")] = ALPHA,
    store_url: StoreOption = None,
) -> None:
    """Exit 1 when a run regressed against its baseline, or missed a target while warming up; 0 otherwise.

    Warm-up: fewer than --window earlier runs in the baseline; with nothing to compare
    with, the targets (deterministic 95%, llm_operations 80%, llm_judge 70%) gate instead.
    With --method significance a metric regresses only when its drop is significant at
    --alpha; one it cannot tell about is "inconclusive" (with the cases it would need)
    and does not fail. Exit code 2 on usage errors.
    """
    methods = gate_methods(method or [])
    if not 0.0 < alpha < 1.0:
        raise typer.BadParameter(f"must be strictly between 0 and 1, got {alpha}", param_hint="--alpha")
    out = console()
    with opened_store(store_url, writes=True) as store:  # a regression is written as a lesson
        policy = _policy(store, window, threshold or [], target or [], baseline)
        if run is not None:
            info = store.runs.resolve(run, suite=suite)
        else:
            found = store.runs.newest(suite, status="completed", limit=1)
            if not found:
                where = f"suite {suite!r}" if suite else "any suite"
                fail(f"no completed run of {where} in store {store.url}; nothing to gate")
            info = found[0]
        result = store.check_regressions(info.id, policy) if "threshold" in methods else None
        tested = check_significance(store, info.id, policy, alpha=alpha) if "significance" in methods else None
    if result is not None:
        _print_check(out, result)
    if info.status != "completed":
        out.print(Text(f"note: run {info.id} is {info.status}, not completed.", style="yellow"))
    failed = False
    if result is not None:
        failed = _threshold_verdict(out, result, info, policy, fail_under_target)
    if tested is not None:
        failed = print_significance(out, tested) or failed
    if failed:
        out.print(Text("gate: FAILED", style="bold red"))
        raise typer.Exit(EXIT_REGRESSION)
    warming = (result is not None and result.warming_up) or (tested is not None and not tested.baseline)
    out.print(Text("gate: passed" + (" (warm-up)" if warming else ""), style="green"))


def _threshold_verdict(
    out: Console, result: RunCheck, info: RunInfo, policy: RegressionPolicy, fail_under_target: bool
) -> bool:
    """Seed 003's rule: print its findings (its table is printed before); True when it fails the gate."""
    failed = False
    for check in result.regressions:
        failed = True
        out.print(
            Text(
                f"REGRESSION {check.metric}: {check.current.value:.1%} vs baseline {check.baseline or 0:.1%} "
                f"over {check.baseline_runs} runs, a {check.drop or 0:.1%} relative drop "
                f"(threshold {check.threshold:.0%}).",
                style="bold red",
            )
        )
    for check in result.warnings:
        out.print(
            Text(
                f"warning {check.metric}: {check.drop or 0:.1%} below a baseline of only {check.baseline_runs} "
                f"run(s) (warm-up: {policy.window} needed); not failing.",
                style="yellow",
            )
        )
    for check in result.targets_missed:
        # While warming up there is no baseline to fall below: the target is the only bar, so it gates.
        gating = fail_under_target or check in result.warmup_targets_missed
        why = " (warm-up: no full baseline yet, so the target gates)" if check in result.warmup_targets_missed else ""
        out.print(
            Text(
                f"target missed {check.metric}: {check.current.value:.1%} < {check.target:.0%}{why}",
                style="bold red" if gating else "yellow",
            )
        )
        failed = failed or gating
    if result.regressions:
        out.print(f"Each regression is kept as a lesson: see `jurybox lessons --suite {info.suite}`.")
    return failed


store_app = typer.Typer(help="Move cases between suite files and the store.", no_args_is_help=True)


@store_app.command("export")
def export_command(
    suite: Annotated[str, typer.Argument(help="Suite to export.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="YAML file to write.")],
    store_url: StoreOption = None,
) -> None:
    """Write a suite's current cases to a suite file ({name, agent, defaults, cases})."""
    with opened_store(store_url) as store:
        count = export_suite_file(store, suite, output)
    console().print(f"Exported {count} case(s) of {suite} to {output}.")


@store_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="Suite file (YAML) to import.")],
    store_url: StoreOption = None,
) -> None:
    """Import a suite file: new and edited cases get a version; cases no longer in the file are retired."""
    with opened_store(store_url, writes=True) as store:
        name, counts = import_suite(store, file)
    console().print(
        f"Imported {name}: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['unchanged']} unchanged, {counts['retired']} retired."
    )


def register(app: typer.Typer) -> None:
    """Add the run-history commands to the ``jurybox`` app."""
    app.command()(compare)
    app.command()(history)
    app.command()(gate)
    app.add_typer(store_app, name="store")
