"""What ``jurybox run`` shows of a plan and a run: the ``--dry-run`` plan, the LLM-tier notes, the RunReport."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from jurybox._cli.layout import fits
from jurybox.core import CaseRecord, Status
from jurybox.engine import LLM_SKIP_REASON, LLM_SKIPPED, RunResult
from jurybox.report import CalibratedJudge, LiveTally, RunReport
from jurybox.suites import HOW_TO_ENABLE, TIER_LLM, TIERS, CasePlan, RunPlan, Suite

CAPTION = (
    "≥ n: the judge's pass mark (its entry's threshold, else the round's, case's or suite's "
    "for the judges that take it, else its own default; see jurybox judges)"
)


def plan_view(plan: RunPlan, console: Console) -> RenderableType:
    """The ``--dry-run`` listing: a table when it fits the console, else one block per case."""
    table = _plan_table(plan)
    if fits(console, table):
        return table
    blocks: list[RenderableType] = [Text(_title(plan), style="bold italic")]
    for case_plan in plan.cases:
        case = case_plan.case
        head = Text(case.name, style="bold")
        details = [f"{len(case.rounds)} round(s)", f"judge calls {_calls(case_plan.min_calls, case_plan.max_calls)}"]
        if case.tags:
            details.insert(0, " ".join(f"#{tag}" for tag in case.tags))
        head.append(" · " + " · ".join(details), style="dim")
        tiers = [
            Text.assemble((f"{tier}: ", "dim"), names.replace("\n", ", "))
            for tier, names in zip(TIERS, _tier_cells(case_plan), strict=True)
            if names != "-"
        ]
        blocks.append(Group(head, Padding(Group(*tiers), (0, 0, 0, 4), expand=False)))
    blocks.append(Text(CAPTION, style="dim italic"))
    return Group(*blocks)


def _title(plan: RunPlan) -> str:
    return f"{plan.suite.name}: {len(plan.cases)} case(s) (dry run)"


def _plan_table(plan: RunPlan) -> Table:
    table = Table(title=_title(plan), caption=CAPTION, show_lines=False)
    # The name is what a person types after --filter: whole or not at all.
    table.add_column("case", no_wrap=True)
    table.add_column("tags", overflow="fold")
    table.add_column("rounds", justify="right", no_wrap=True)
    for tier in TIERS:
        table.add_column(tier, overflow="fold")
    table.add_column("judge calls", justify="right", no_wrap=True)
    for case_plan in plan.cases:
        case = case_plan.case
        table.add_row(
            Text(case.name),
            Text(", ".join(case.tags)),
            str(len(case.rounds)),
            *(Text(cell) for cell in _tier_cells(case_plan)),
            _calls(case_plan.min_calls, case_plan.max_calls),
        )
    return table


def _tier_cells(case_plan: CasePlan) -> list[str]:
    marks = case_plan.thresholds
    cells = []
    for tier in TIERS:
        names = [_with_mark(key, marks) for key in case_plan.tiers.get(tier, [])]
        if tier == TIER_LLM and case_plan.skipped:
            names = [*names, *(f"{_with_mark(key, marks)} (SKIPPED)" for key in case_plan.skipped)]
        cells.append("\n".join(names) or "-")
    return cells


def _with_mark(key: str, marks: dict[str, float]) -> str:
    mark = marks.get(key)
    return key if mark is None else f"{key} ≥{mark:g}"


def _calls(low: int, high: int) -> str:
    return f"{low}-{high}" if low != high else str(high)


def llm_skip_note(records: Iterable[CaseRecord]) -> str:
    """What the skipped LLM tier cost the run, case by case.

    ``LLM tier SKIPPED: 3 case(s) would have had LLM judges; 2 decided by their other judges
    (2 PASS); 1 ABSTAIN (only LLM judges, not judged); <how to enable>``.
    """
    decided: Counter[Status] = Counter()
    not_judged = 0
    for record in records:
        if record.metadata.get("llm_tier") != LLM_SKIPPED and record.judgment.metadata.get("llm_tier") != LLM_SKIPPED:
            continue
        if record.status is Status.ABSTAIN and not record.judgment.children:
            not_judged += 1  # the runner's own ABSTAIN: no judge but the skipped LLM ones
        else:
            decided[record.status] += 1
    total = sum(decided.values()) + not_judged
    parts = [f"LLM tier SKIPPED: {total} case(s) would have had LLM judges"]
    if decided:
        counts = ", ".join(f"{decided[s]} {s.value.upper()}" for s in Status if decided[s])
        parts.append(f"{sum(decided.values())} decided by their other judges ({counts})")
    if not_judged:
        parts.append(f"{not_judged} ABSTAIN (only LLM judges, not judged)")
    # The one place a run says how to configure a judge model (the intro and the cases do not repeat it).
    return "; ".join([*parts, f"{LLM_SKIP_REASON}; {HOW_TO_ENABLE}"])


def llm_skip_plan(plan: RunPlan) -> str:
    """Before a run: ``12 LLM judge(s) in 10 case(s) will not run: 9 are decided by their other judges, 1 ABSTAIN``."""
    if plan.estimated:  # a big cases file still being checked: no pass that builds every case
        return f"about {plan.skipped_judges} LLM judge(s) will not run"
    cases = [case_plan for case_plan in plan.cases if case_plan.skipped]
    alone = sum(1 for case_plan in cases if not any(case_plan.tiers.values()))
    text = f"{plan.skipped_judges} LLM judge(s) in {len(cases)} case(s) will not run"
    parts = []
    if len(cases) - alone:
        parts.append(f"{len(cases) - alone} will be decided by their other judges")
    if alone:
        parts.append(f"{alone} with only LLM judges will be ABSTAIN (not judged)")
    return text + (": " + ", ".join(parts) if parts else "")


def cache_note(calls: int, cache_hits: int) -> str | None:
    """Say so when the judge model was not asked at all: every verdict is a cached one (None otherwise).

    A run whose judge server is down passes from the cache just the same; after a change to
    the judge (its prompt, its server, its model) this is the line that explains an unchanged result.
    """
    if not calls or cache_hits < calls:
        return None
    return (
        f"every judge call ({calls}) was answered from the response cache: the judge model was not asked "
        "(it need not even be running); --refresh-cache asks it again, --no-cache ignores the cache"
    )


def build_report(
    result: RunResult, suite: Suite, calibrations: Sequence[CalibratedJudge] = (), *, tally: LiveTally | None = None
) -> RunReport:
    """The RunReport of a run (the whole run, when it was resumed), with its judges' calibration notes.

    ``tally``: the run's totals added up as its cases finished; used unless the store may hold other
    records than it saw (a resumed run, a failed write, a worker process that ended early).
    """
    notes = []
    skipped = {}
    if result.llm_skipped:
        skipped[TIER_LLM] = LLM_SKIP_REASON
        notes.append(llm_skip_note(result.records))
    if result.resumed:
        notes.append(f"resumed run: {result.resumed} case(s) were judged before the restart and are included")
    cached = cache_note(result.spend.calls, result.spend.cache_hits)
    if cached is not None:
        notes.append(cached)
    notes.extend(result.worker_errors)
    if result.store_errors:
        notes.append(
            f"{len(result.store_errors)} result(s) could not be written to the store: {result.store_errors[0]}"
        )
    return RunReport(
        suite=result.suite,
        run_id=result.run_id,
        records=result.records,
        started_at=result.started_at,
        finished_at=result.finished_at,
        judge_model=result.judge_model,
        status="interrupted"
        if result.status == "interrupted"
        else "failed"
        if result.status == "failed"
        else "completed",
        notes=notes,
        skipped_tiers=skipped,
        planned=result.total_cases,
        metadata={"suite_file": str(suite.path)},
        calibrations=calibrations,
        tally=None if result.resumed or result.store_errors or result.worker_errors else tally,
    )
