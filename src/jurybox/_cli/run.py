"""``jurybox run``: run agent suites, judge every case, stream results to the store, print reports."""

from __future__ import annotations

import gc
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox import cli, runs
from jurybox._cli import run_executor as executors
from jurybox._cli import startup
from jurybox._cli.common import dashboard_hint
from jurybox._cli.otel_option import OtelEndpointOption, otel_exporter
from jurybox._cli.reports import print_written
from jurybox._cli.run_calibrations import run_calibrations
from jurybox._cli.run_experiments import check_variant_output, experiment_request, print_experiments
from jurybox._cli.run_fleet import (
    CacheOption,
    JudgeEndpointOption,
    NoCacheOption,
    RefreshCacheOption,
    fleet_and_cache,
    use_cache_mode,
)
from jurybox._cli.run_help import grouped
from jurybox._cli.run_messages import (
    print_cache_only,
    print_intro,
    print_notice,
    print_outro,
    print_plan,
    servers_answer,
)
from jurybox._cli.run_otel import RunExport
from jurybox._cli.run_regression import print_regression_verdict
from jurybox._cli.run_views import build_report
from jurybox.agents import TargetConfigError
from jurybox.engine import RecordTally, RunResult
from jurybox.executors import ExecutorError
from jurybox.report import FORMATS, CalibratedJudge, LiveTally, check_report_output, write_reports
from jurybox.store import StoreError
from jurybox.suites import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT, JudgeModelError, Suite, SuiteError

if TYPE_CHECKING:
    from jurybox._cli.progress import RichProgress
    from jurybox.store import Store

EXIT_OK = 0
EXIT_NOT_PASSED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
DEFAULT_CONSOLE_ROWS = 50
"""The console table of a bigger run shows this many cases, failing first (the files have them all)."""


@dataclass(frozen=True)
class RunRequest:
    """Everything ``jurybox run`` was asked to do."""

    suites: tuple[Path, ...]
    judge_model: str | None = None
    concurrency: int | None = None
    formats: tuple[str, ...] = ("console",)
    output: str | None = None
    dry_run: bool = False
    selectors: tuple[str, ...] = ()
    store: str | None = None
    no_store: bool = False
    resume: str | None = None
    timeout: float | None = None
    retries: int | None = None
    judge_timeout: float | None = None
    judge_retries: int | None = None
    progress: bool = True
    rows: int = DEFAULT_CONSOLE_ROWS
    workers: int = 1
    executor: str = "local"
    ray_address: str | None = None
    actors: int | None = None
    preflight: bool = True
    verbose: bool = False
    stored_suites: tuple[str, ...] = ()  # --suite NAME: suites kept in the store
    base_dir: Path | None = None  # where relative paths resolve (None: each suite file's folder)
    variants: tuple[str, ...] = ()  # --variant NAME: only these variants of a suite with variants:
    fail_on_regression: bool = False  # a regression against the baseline is the exit code
    otel_endpoint: str | None = None  # --otel-endpoint: runs, cases and judgments sent as OTLP spans


StoredSuiteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--suite",
        help="Run this suite as kept in the store (--store) instead of files; repeatable. "
        "Relative paths resolve against the current directory.",
        show_default=False,
    ),
]


class UsageProblemError(Exception):
    """The command line asks for something impossible; exit code 2 with this message."""


def register(app: typer.Typer) -> None:
    """Add ``jurybox run`` to the CLI."""
    app.command(name="run")(grouped(run))  # --help in panels (run_help.py)


def run(
    suites: Annotated[list[Path] | None, typer.Argument(help="Suite YAML files.", show_default=False)] = None,
    stored_suites: StoredSuiteOption = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model",
            help="The LLM tier's judge: ollama:llama3.1, openai:gpt-4o-mini, provider:model@URL or "
            "http://host:port/v1#model. Default: the suite's judge_model, then $JURYBOX_JUDGE_MODEL; none: skipped.",
        ),
    ] = None,
    judge_endpoints: JudgeEndpointOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    refresh_cache: RefreshCacheOption = False,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-j", min=1, max=MAX_CONCURRENCY, help="Cases in flight at once (default 8)."),
    ] = None,
    formats: Annotated[
        list[str] | None,
        typer.Option("--format", "-f", help=f"Report format, repeatable: {', '.join(FORMATS)}. Default: console."),
    ] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="File or directory for file formats; '-' for stdout.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List cases, judges, tiers and judge calls; run nothing.")
    ] = False,
    selectors: Annotated[
        list[str] | None,
        typer.Option("--filter", "-k", help="Only cases with this name, tag or name glob (repeatable)."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option("--store", help="Store URL (default $JURYBOX_STORE or sqlite:///.jurybox/jurybox.db)."),
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Keep results in memory only.")] = False,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="RUN_ID (or a unique prefix), or 'last': judge only the cases it is missing."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, max=MAX_TIMEOUT, help="Seconds per case (overrides the suite)."),
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option("--retries", min=0, max=MAX_RETRIES, help="Extra attempts after an agent crash or hang."),
    ] = None,
    judge_timeout: Annotated[
        float | None,
        typer.Option(
            "--judge-timeout",
            min=0.001,
            max=MAX_TIMEOUT,
            help="Seconds per judge-model attempt (overrides the suite's judge_timeout).",
        ),
    ] = None,
    judge_retries: Annotated[
        int | None,
        typer.Option(
            "--judge-retries",
            min=0,
            max=MAX_RETRIES,
            help="Retries after a judge-model fault: 5xx, 429, timeout, empty reply (overrides judge_retries).",
        ),
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show the live progress bar.")] = True,
    otel_endpoint: OtelEndpointOption = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            "-w",
            min=1,
            max=256,
            help="Processes that run the cases, each every N-th case (default 1): for big suites, "
            "when one core cannot keep up.",
        ),
    ] = 1,
    executor: executors.ExecutorOption = executors.ExecutorChoice.local,
    ray_address: executors.RayAddressOption = None,
    actors: executors.ActorsOption = None,
    rows: Annotated[
        int,
        typer.Option(
            "--rows",
            min=0,
            help=f"Console table: at most this many cases, failing first (default {DEFAULT_CONSOLE_ROWS}; 0: all).",
        ),
    ] = DEFAULT_CONSOLE_ROWS,
    preflight: Annotated[
        bool,
        typer.Option(
            "--preflight/--no-preflight",
            help="Check every model server (connection, key) before the first case; stop if one fails, "
            "unless the response cache can answer for it.",
        ),
    ] = True,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Console: list every passing case with its reasoning, not just names."),
    ] = False,
    variants: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            help="Run only this variant of a suite with variants: (repeatable; default: all).",
            show_default=False,
        ),
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when the run regressed against its baseline (as `jurybox gate` would).",
        ),
    ] = False,
) -> None:
    """Run agent suites: each case's conversation is judged by a cascade of tiers.

    Deterministic judges run first, the offline similarity judge next and LLM
    judges last, so an early failure spends no tokens. Exit code: 0 when every
    case passed, 1 when any failed, errored or could not be decided (or, with
    --fail-on-regression, the run regressed against its baseline), 2 for a
    bad suite or command line or a model server that cannot be reached, 130 when
    interrupted (resume with --resume last). Ends with the regression verdict.
    """
    use_cache_mode(no_cache, refresh_cache)
    startup.mark("imports")
    judge_model = fleet_and_cache(judge_model, judge_endpoints, cache)
    request = RunRequest(
        suites=tuple(suites or ()),
        stored_suites=tuple(stored_suites or ()),
        judge_model=judge_model,
        concurrency=concurrency,
        formats=tuple(formats or ("console",)),
        output=output,
        dry_run=dry_run,
        selectors=tuple(selectors or ()),
        store=store,
        no_store=no_store,
        resume=resume,
        timeout=timeout,
        retries=retries,
        judge_timeout=judge_timeout,
        judge_retries=judge_retries,
        progress=progress,
        rows=rows,
        workers=workers,
        executor=executor.value,
        ray_address=ray_address,
        actors=actors,
        preflight=preflight,
        verbose=verbose,
        variants=tuple(variants or ()),
        fail_on_regression=fail_on_regression,
        otel_endpoint=otel_endpoint,
    )
    raise typer.Exit(execute(request))


def execute(request: RunRequest, *, console: Console | None = None, status: Console | None = None) -> int:
    """Do what ``jurybox run`` was asked and return the exit code.

    Args:
        request: The parsed command line.
        console: Where the console report goes (default stdout).
        status: Where notices, the plan and the progress bar go (default stderr).
    """
    console = console or Console()
    status = status or Console(stderr=True)
    try:
        _check_request(request)
        # The judge server's check starts as soon as its model is read, while the cases are built.
        checking = request.preflight and not request.dry_run
        prepared = runs.prepare(_service_request(request), tune_gc=True, check_servers=checking)
        if cli.owns_process():
            # The loaded suites live as long as the process (main() froze the modules already): left
            # out of every later collection, the report's included.
            gc.freeze()
        check_variant_output(prepared, request.output)
        startup.mark("suites read")
    except runs.NoCasesError as exc:
        status.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_USAGE
    except (UsageProblemError, runs.RunRequestError, SuiteError, JudgeModelError, StoreError, OSError) as exc:
        status.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    with prepared:
        return _execute(prepared, request, console, status)


def _execute(prepared: runs.PreparedRun, request: RunRequest, console: Console, status: Console) -> int:
    if prepared.skipped:  # `jurybox run suites/*.yaml -k smoke`: the suites without a smoke case are not an error
        left_out = runs.NoCasesError(prepared.skipped, request.selectors)
        status.print(f"skipped: {escape(str(left_out))}", highlight=False)
    if request.dry_run:
        try:
            prepared.settle()  # a big cases file's check, still running: the plan is its totals
        except SuiteError as exc:
            status.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            return EXIT_USAGE
        for planned in prepared.suites:
            print_plan(planned.plan, console)
        return EXIT_OK
    # An unreachable judge would cost every case its retries; find out once, in a second or two
    # (a judge server that is down but whose replies are cached lets the run go on from the cache).
    if request.preflight and not request.no_store:
        # A phase of its own: the store's import (SQLAlchemy's) is most of what the check's phase took
        # when the servers were checked while the suites loaded.
        prepared.load_store_code()
        startup.mark("store code loaded")
    checked = prepared.preflight() if request.preflight else None
    if checked is not None:
        # Its own phase: the wait for the checks started while the suites loaded, and any others.
        startup.mark("servers checked")
        if not servers_answer(checked, status):
            return EXIT_USAGE
    try:
        prepared.open(lambda notice: print_notice(notice, status))
        startup.mark("store opened")
    except (StoreError, runs.RunRequestError) as exc:
        status.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_USAGE
    codes: list[int] = []
    otel = otel_exporter(request.otel_endpoint, errors=status)
    export = RunExport(otel) if otel is not None else None
    if request.verbose:  # how long the command took to reach its first case (benchmarks/whole_process.py)
        status.print(startup.summary(), highlight=False, soft_wrap=True)  # one line, whatever the width

    def starting(planned: runs.PlannedSuite) -> RichProgress | None:
        # A resumed run's intro shows what it planned, not the suite's selection now.
        print_intro(planned.plan, status, planned.resume)
        if not (request.progress and status.is_terminal):
            return None
        from jurybox._cli.progress import RichProgress  # rich's progress machinery: only for a terminal

        return RichProgress(status)

    tallies: dict[int, LiveTally] = {}

    def tallying(planned: runs.PlannedSuite) -> RecordTally:
        # The report's totals, added up as the cases finish: no pass over the store to count them after;
        # and the cases' spans, sent as they finish.
        tally = tallies[id(planned)] = LiveTally()
        return export.tally(planned, tally) if export is not None else tally

    def finished(planned: runs.PlannedSuite, result: RunResult) -> None:
        # An experiment's variants are read side by side at the end, not as one long table each.
        shown = request if planned.experiment is None else experiment_request(request)
        slot = planned.experiment
        resume = (slot.id, slot.suite) if slot is not None and slot.id is not None else None
        tally = tallies.pop(id(planned), None)
        codes.extend(
            _report(planned.suite, result, shown, prepared.store, console, status, experiment=resume, tally=tally)
        )
        if checked is not None:
            print_cache_only(checked, result, status)
        if export is not None:
            export.finished(planned, result)

    try:
        prepared.run(starting=starting, finished=finished, tallying=tallying)
    except SuiteError as exc:  # a big cases file's bad lines, found while its run had started: it stopped
        status.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        if prepared.store is not None:
            status.print("the run stopped there; fix the file and run it again", highlight=False)
        return EXIT_USAGE
    except (runs.RunRequestError, StoreError, TargetConfigError, ExecutorError) as exc:
        status.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_USAGE
    finally:
        if export is not None:
            export.close()
            sent = export.summary()
            if sent is not None:
                status.print(escape(sent), highlight=False, soft_wrap=True)
    print_experiments(prepared, request.formats, request.output, console, status)
    if prepared.store is not None:  # the last line: where to read every case and judgment of these runs
        status.print(
            f"see the results in the dashboard: {dashboard_hint(prepared.store.url)}", highlight=False, soft_wrap=True
        )
    return max(codes, key=lambda code: (code == EXIT_INTERRUPTED, code))


def _check_request(request: RunRequest) -> None:
    """What only the command line can get wrong: report formats and files, and executor flags."""
    try:  # the formats and --output write_reports would refuse, here rather than after a long run
        check_report_output(request.formats, request.output)
    except ValueError as exc:
        raise UsageProblemError(str(exc)) from exc
    several = len(request.suites) + len(request.stored_suites) > 1
    if several and request.output not in (None, "-") and Path(request.output).suffix:
        raise UsageProblemError("with several suites, --output must be a directory (one report file per suite)")


def _service_request(request: RunRequest) -> runs.RunRequest:
    """What the run service is asked: the command line without its reports and display."""
    service = runs.RunRequest(
        suites=request.suites,
        stored_suites=request.stored_suites,
        judge_model=request.judge_model,
        concurrency=request.concurrency,
        selectors=request.selectors,
        timeout=request.timeout,
        retries=request.retries,
        judge_timeout=request.judge_timeout,
        judge_retries=request.judge_retries,
        store=request.store,
        no_store=request.no_store,
        resume=request.resume,
        workers=request.workers,
        executor=request.executor,
        executor_options=executors.executor_settings(request),
        base_dir=request.base_dir,
        variants=request.variants,
    )
    problem = executors.executor_problem(request)
    if problem is not None:
        raise UsageProblemError(problem)
    return service


def _report(
    suite: Suite,
    result: RunResult,
    request: RunRequest,
    store: Store | None,
    console: Console,
    status: Console,
    *,
    experiment: tuple[str, str] | None = None,
    tally: LiveTally | None = None,
) -> list[int]:
    """Write and print one suite's reports and its last lines; its exit codes."""
    codes = []
    report = build_report(result, suite, _calibrations(store, suite, result, status), tally=tally)
    try:
        rows = request.rows or None
        written = write_reports(
            report,
            request.formats,
            request.output,
            console=console,
            console_rows=rows,
            console_verbose=request.verbose,
        )
        print_written(report, written, status)  # the summary and every file written, whatever the formats
    except (ValueError, OSError) as exc:
        status.print(f"[red]error:[/] cannot write the report: {escape(str(exc))}")
        codes.append(EXIT_USAGE)
    # The run id even when a report failed: the results are in the store.
    # An experiment's variant is finished with the whole experiment: its id, and the suite's own name.
    resume_id, name = experiment if experiment is not None else (None, suite.name)
    command = _resume_command(suite, request, stored=store is not None, name=name)
    print_outro(result, status, resume_command=command, resume_id=resume_id)
    if result.status == "interrupted":
        codes.append(EXIT_INTERRUPTED)
    else:
        codes.append(EXIT_OK if result.ok else EXIT_NOT_PASSED)
    if store is not None and result.status == "completed":
        regressed = print_regression_verdict(store, result.run_id, status)
        if regressed and request.fail_on_regression:
            codes.append(EXIT_NOT_PASSED)
    return codes


def _calibrations(store: Store | None, suite: Suite, result: RunResult, status: Console) -> list[CalibratedJudge]:
    """The run's calibrated judges; a store that fails here costs the notes, never the run's report."""
    if store is None:
        return []
    try:
        return run_calibrations(store, suite, result.run_id, result.records)
    except StoreError as exc:
        status.print(f"[yellow]warning:[/] cannot read the judges' calibrations: {escape(str(exc))}")
        return []


def _resume_command(suite: Suite, request: RunRequest, *, stored: bool, name: str | None = None) -> str | None:
    """The command that finishes this suite's run (but its --resume), ready to paste; None when nothing was stored."""
    if not stored:
        return None
    stored_name = name or suite.name
    parts = ["jurybox", "run", *(["--suite", stored_name] if request.stored_suites else [str(suite.path)])]
    if request.store is not None:
        parts += ["--store", request.store]
    if request.judge_model is not None:
        parts += ["--judge-model", str(request.judge_model)]
    for variant in request.variants:
        parts += ["--variant", variant]
    # The rest is judged and reported as the run began (the reports cover the whole run).
    for option, value in (
        ("--concurrency", request.concurrency),
        ("--timeout", request.timeout),
        ("--retries", request.retries),
        ("--workers", request.workers if request.workers > 1 else None),
        *executors.executor_resume_args(request),
        ("--output", request.output),
    ):
        if value is not None:
            parts += [option, str(value)]
    if request.formats != ("console",):
        for fmt in request.formats:
            parts += ["--format", fmt]
    # Printed to the terminal and CI logs: a password in a URL is not.
    return _PASSWORD.sub(r"\g<user>:***@", shlex.join(parts))


# The password of a URL's user:password@ part (a store URL, a judge model's base URL).
_PASSWORD = re.compile(r"(?P<user>[A-Za-z][\w+.-]*://[^\s/:@]+):[^\s/@]+@")
