"""Run-history commands: ``compare``, ``history``, ``lessons``, ``gate`` and ``store import/export``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurybox.store import (
    MetricCheck,
    RegressionPolicy,
    RunCheck,
    RunInfo,
    Store,
    StoreError,
    SuiteFileError,
    compare_runs,
    export_suite_file,
    import_suite_file,
    open_store,
)

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store URL (sqlite:///path.db or postgresql+psycopg://...). Default: $JURYBOX_STORE, "
        "else sqlite:///.jurybox/jurybox.db.",
        show_default=False,
    ),
]
"""The ``--store`` option of every command that reads a store (``jurybox serve`` takes it from here)."""

EXIT_REGRESSION = 1
EXIT_USAGE = 2

_STATE_STYLE = {"ok": "green", "regression": "bold red", "warning": "yellow", "warmup": "cyan"}


def _console() -> Console:
    # Built per command so test runners that swap stdout capture the output.
    return Console(highlight=False, soft_wrap=False)


@contextmanager
def _opened(url: str | None) -> Iterator[Store]:
    """Open the store, turning store errors into a clear message and exit code 2."""
    try:
        store = open_store(url)
    except StoreError as exc:
        _fail(str(exc))
    try:
        yield store
    except (StoreError, SuiteFileError) as exc:
        _fail(str(exc))
    finally:
        store.close()


def _fail(message: str) -> NoReturn:
    _console().print(Text(f"error: {message}", style="bold red"))
    raise typer.Exit(EXIT_USAGE)


def _pct(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


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


def _policy(store: Store, window: int | None, thresholds: Sequence[str], targets: Sequence[str]) -> RegressionPolicy:
    try:
        return store.policy.with_overrides(
            window=window,
            thresholds=_fractions(thresholds, "--threshold"),
            targets=_fractions(targets, "--target"),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _state_text(check: MetricCheck) -> Text:
    label = {"warmup": "warm-up", "warning": "warning (warm-up)"}.get(check.state, check.state)
    return Text(label, style=_STATE_STYLE[check.state])


def _check_table(result: RunCheck) -> Table:
    table = Table(title=f"{result.run.suite} · run {result.run.id}", title_justify="left")
    for column in ("metric", "current", "baseline", "drop", "threshold", "target", "state"):
        table.add_column(column, justify="left" if column in ("metric", "state") else "right")
    for check in result.metrics:
        baseline = "-" if check.baseline is None else f"{check.baseline:.1%} ({check.baseline_runs} runs)"
        target: Text | str = "-"
        if check.target is not None:
            met = check.target_met
            target = Text(f"{check.target:.0%} {'met' if met else 'missed'}", style="green" if met else "yellow")
        table.add_row(
            check.metric,
            f"{check.current.value:.1%} ({check.current.passed}/{check.current.total})",
            baseline,
            _pct(check.drop),
            f"{check.threshold:.0%}",
            target,
            _state_text(check),
        )
    return table


def compare(
    run_a: Annotated[str, typer.Argument(help="The earlier run: id, unique id prefix or 'last'.")],
    run_b: Annotated[str, typer.Argument(help="The later run: id, unique id prefix or 'last'.")],
    store_url: StoreOption = None,
    limit: Annotated[int, typer.Option(help="Rows shown per table.")] = 20,
) -> None:
    """Compare two runs: cases that flipped, score deltas, new errors, cost and latency."""
    console = _console()
    with _opened(store_url) as store:
        result = compare_runs(store, run_a, run_b)
    a, b = result.run_a, result.run_b
    summary = Table(title="Runs", title_justify="left")
    summary.add_column("")
    summary.add_column(f"A {a.id}", justify="right")
    summary.add_column(f"B {b.id}", justify="right")
    summary.add_column("change", justify="right")
    rate_change = None if a.pass_rate is None or b.pass_rate is None else b.pass_rate - a.pass_rate
    summary.add_row("suite", a.suite, b.suite, "")
    summary.add_row("status", a.status, b.status, "")
    summary.add_row("cases", str(a.recorded), str(b.recorded), f"{b.recorded - a.recorded:+d}")
    summary.add_row("pass rate", _pct(a.pass_rate), _pct(b.pass_rate), _points(rate_change))
    summary.add_row("errors", str(a.errored), str(b.errored), f"{b.errored - a.errored:+d}")
    summary.add_row("cost", _money(a.cost), _money(b.cost), _money_delta(result.cost_delta))
    summary.add_row("tokens", _int(a.tokens), _int(b.tokens), _int_delta(a.tokens, b.tokens))
    for label, la, lb in (
        ("latency mean", result.latency_a.mean, result.latency_b.mean),
        ("latency p95", result.latency_a.p95, result.latency_b.p95),
    ):
        delta = None if la is None or lb is None else lb - la
        summary.add_row(label, _seconds(la), _seconds(lb), "-" if delta is None else f"{delta:+.2f}s")
    console.print(summary)

    flipped = result.flipped
    if flipped:
        table = Table(title=f"Flipped ({len(flipped)})", title_justify="left")
        for column in ("case", "A", "B", "", "reason in B"):
            table.add_column(column)
        for change in flipped[:limit]:
            assert change.before is not None and change.after is not None
            arrow = Text("fixed", style="green") if change.fixed else Text("broke", style="bold red")
            reason = change.after.error or change.after.reasoning
            table.add_row(change.case, change.before.status.value, change.after.status.value, arrow, _short(reason))
        console.print(table)
    else:
        console.print("No case flipped between pass and not-pass.")

    errors = result.new_errors
    if errors:
        table = Table(title=f"New errors ({len(errors)})", title_justify="left")
        table.add_column("case")
        table.add_column("error")
        for change in errors[:limit]:
            assert change.after is not None
            table.add_row(change.case, _short(change.after.error or change.after.reasoning))
        console.print(table)

    moved = result.score_changes
    if moved:
        table = Table(title=f"Score changes ({len(moved)}, largest first)", title_justify="left")
        for column in ("case", "A", "B", "delta"):
            table.add_column(column, justify="left" if column == "case" else "right")
        for change in moved[:limit]:
            assert change.before is not None and change.after is not None
            delta = change.score_delta or 0.0
            table.add_row(
                change.case,
                f"{change.before.score:.2f}",
                f"{change.after.score:.2f}",
                Text(f"{delta:+.2f}", style="green" if delta > 0 else "red"),
            )
        console.print(table)
    if result.only_in_a:
        console.print(f"Only in A ({len(result.only_in_a)}): {', '.join(result.only_in_a[:limit])}")
    if result.only_in_b:
        console.print(f"Only in B ({len(result.only_in_b)}): {', '.join(result.only_in_b[:limit])}")


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f} pts"


def _money_delta(value: float | None) -> str:
    return "-" if value is None else f"{'+' if value >= 0 else '-'}${abs(value):.4f}"


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _int_delta(a: int | None, b: int | None) -> str:
    return "-" if a is None or b is None else f"{b - a:+,}"


def _short(text: str | None, limit: int = 100) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def history(
    suite: Annotated[str, typer.Argument(help="Suite name.")],
    store_url: StoreOption = None,
    limit: Annotated[int, typer.Option(help="How many recent runs to show.")] = 20,
) -> None:
    """Show a suite's trend: pass rate per run overall and per judge tier, with each run's gate state."""
    console = _console()
    with _opened(store_url) as store:
        runs = store.runs(suite, limit=limit)
        if not runs:
            _fail(f"no runs of suite {suite!r} in store {store.url}")
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
    for run, check in rows:
        by_metric = {m.metric: m for m in check.metrics} if check else {}
        cells: list[Text | str] = [
            run.id,
            f"{run.started_at:%Y-%m-%d %H:%M}",
            run.status,
            f"{run.recorded}/{run.planned}",
        ]
        for metric in ("overall", *tiers):
            found = by_metric.get(metric)
            if found is None:
                cells.append(_pct(run.pass_rate) if metric == "overall" and check is None else "-")
            else:
                cells.append(
                    Text(_pct(found.current.value), style=_STATE_STYLE[found.state] if found.state != "ok" else "")
                )
        cells.append(_money(run.cost))
        cells.append(_gate_cell(check))
        table.add_row(*cells)
    console.print(table)


def _gate_cell(check: RunCheck | None) -> Text:
    if check is None:
        return Text("not completed", style="dim")
    if check.regressions:
        return Text("regression: " + ", ".join(m.metric for m in check.regressions), style="bold red")
    if check.warnings:
        return Text("warning: " + ", ".join(m.metric for m in check.warnings), style="yellow")
    if check.warming_up:
        return Text("warm-up", style="cyan")
    return Text("ok", style="green")


def lessons(
    suite: Annotated[str | None, typer.Option(help="Only lessons of this suite.")] = None,
    topic: Annotated[str | None, typer.Option(help="Only lessons about this tier, case or word.")] = None,
    limit: Annotated[int, typer.Option(help="How many lessons, newest first.")] = 10,
    store_url: StoreOption = None,
) -> None:
    """List what regressions taught: suite, tier, baseline, current score and the failing cases."""
    console = _console()
    with _opened(store_url) as store:
        found = store.lessons(suite, topic=topic, limit=limit)
    if not found:
        console.print("No lessons yet: no regression has been found.")
        return
    for lesson in found:
        when = f"{lesson.created_at:%Y-%m-%d %H:%M}" if lesson.created_at else ""
        console.rule(Text(f"{lesson.suite} · {lesson.metric} · run {lesson.run_id} · {when}", style="bold"))
        console.print(Text(lesson.text))


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
        bool, typer.Option("--fail-under-target", help="Also exit 1 when a metric misses its target.")
    ] = False,
    store_url: StoreOption = None,
) -> None:
    """Exit 1 when a run regressed against its suite's baseline (for CI); 0 otherwise, 2 on usage errors."""
    console = _console()
    with _opened(store_url) as store:
        policy = _policy(store, window, threshold or [], target or [])
        if run is not None:
            info = store.resolve_run(run, suite=suite)
        else:
            found = store.runs(suite, status="completed", limit=1)
            if not found:
                where = f"suite {suite!r}" if suite else "any suite"
                _fail(f"no completed run of {where} in store {store.url}; nothing to gate")
            info = found[0]
        result = store.check_regressions(info.id, policy)
    console.print(_check_table(result))
    if info.status != "completed":
        console.print(Text(f"note: run {info.id} is {info.status}, not completed.", style="yellow"))
    failed = False
    for check in result.regressions:
        failed = True
        console.print(
            Text(
                f"REGRESSION {check.metric}: {check.current.value:.1%} vs baseline {check.baseline or 0:.1%} "
                f"over {check.baseline_runs} runs, a {check.drop or 0:.1%} relative drop "
                f"(threshold {check.threshold:.0%}).",
                style="bold red",
            )
        )
    for check in result.warnings:
        console.print(
            Text(
                f"warning {check.metric}: {check.drop or 0:.1%} below a baseline of only {check.baseline_runs} "
                f"run(s) (warm-up: {policy.window} needed); not failing.",
                style="yellow",
            )
        )
    for check in result.targets_missed:
        console.print(
            Text(f"target missed {check.metric}: {check.current.value:.1%} < {check.target:.0%}", style="yellow")
        )
        failed = failed or fail_under_target
    if result.regressions:
        console.print(f"Each regression is kept as a lesson: see `jurybox lessons --suite {info.suite}`.")
    if failed:
        console.print(Text("gate: FAILED", style="bold red"))
        raise typer.Exit(EXIT_REGRESSION)
    console.print(Text("gate: passed" + (" (warm-up)" if result.warming_up else ""), style="green"))


store_app = typer.Typer(help="Move cases between suite files and the store.", no_args_is_help=True)


@store_app.command("export")
def export_command(
    suite: Annotated[str, typer.Argument(help="Suite to export.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="YAML file to write.")],
    store_url: StoreOption = None,
) -> None:
    """Write a suite's current cases to a suite file ({name, agent, defaults, cases})."""
    with _opened(store_url) as store:
        count = export_suite_file(store, suite, output)
    _console().print(f"Exported {count} case(s) of {suite} to {output}.")


@store_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="Suite file (YAML) to import.")],
    store_url: StoreOption = None,
) -> None:
    """Import a suite file: new and edited cases get a version; cases no longer in the file are retired."""
    with _opened(store_url) as store:
        name, counts = import_suite_file(store, file)
    _console().print(
        f"Imported {name}: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['unchanged']} unchanged, {counts['retired']} retired."
    )


def register(app: typer.Typer) -> None:
    """Add the run-history commands to the ``jurybox`` app."""
    app.command()(compare)
    app.command()(history)
    app.command()(lessons)
    app.command()(gate)
    app.add_typer(store_app, name="store")
