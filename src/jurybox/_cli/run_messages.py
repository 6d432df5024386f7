"""What ``jurybox run`` prints around its report: the ``--dry-run`` plan, the intro line and the outro."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurybox.suites import HOW_TO_ENABLE, TIER_LLM, TIERS, RunPlan, RunResult


def print_plan(plan: RunPlan, console: Console) -> None:
    """The ``--dry-run`` listing: every case, its judges per tier (with their pass marks) and its judge calls."""
    suite = plan.suite
    table = Table(
        title=f"{suite.name}: {len(plan.cases)} case(s) (dry run)",
        caption="≥ n: the judge's pass mark (its entry's threshold, else the round's, case's or suite's "
        "for the judges that take it, else its own default; see jurybox judges)",
        show_lines=False,
    )
    table.add_column("case")
    table.add_column("tags")
    table.add_column("rounds", justify="right")
    for tier in TIERS:
        table.add_column(tier)
    table.add_column("judge calls", justify="right")
    for case_plan in plan.cases:
        case = case_plan.case
        cells = []
        marks = case_plan.thresholds
        for tier in TIERS:
            names = [_with_mark(key, marks) for key in case_plan.tiers.get(tier, [])]
            if tier == TIER_LLM and case_plan.skipped:
                names = [*names, *(f"{_with_mark(key, marks)} (SKIPPED)" for key in case_plan.skipped)]
            cells.append(escape("\n".join(names)) or "-")
        calls = (
            f"{case_plan.min_calls}-{case_plan.max_calls}"
            if case_plan.min_calls != case_plan.max_calls
            else str(case_plan.max_calls)
        )
        table.add_row(escape(case.name), escape(", ".join(case.tags)), str(len(case.rounds)), *cells, calls)
    console.print(table)
    console.print(_estimate_line(plan), highlight=False)
    if plan.skipped_judges:
        console.print(
            f"[yellow]LLM tier SKIPPED[/] ({plan.skipped_judges} LLM judge(s) would not run): {HOW_TO_ENABLE}"
        )


def _with_mark(key: str, marks: dict[str, float]) -> str:
    mark = marks.get(key)
    return key if mark is None else f"{key} ≥{mark:g}"


def print_intro(plan: RunPlan, status: Console, resume: str | None) -> None:
    what = f"resuming run {resume} of" if resume else "running"
    status.print(
        f"{what} [bold]{escape(plan.suite.name)}[/]: {len(plan.cases)} case(s). {_estimate_line(plan)}",
        highlight=False,
    )
    if plan.skipped_judges:
        status.print(
            f"[yellow]LLM tier SKIPPED[/]: no judge model configured; {plan.skipped_judges} LLM judge(s) will not run "
            f"and those cases are decided by the other tiers. {HOW_TO_ENABLE}",
            highlight=False,
        )


def print_outro(result: RunResult, status: Console, *, resume_command: str | None = None) -> None:
    spend = result.spend
    cost = f"${spend.cost:.4f}" + (
        f" (+{spend.unpriced_calls} call(s) with unknown price)" if spend.unpriced_calls else ""
    )
    tokens = f"{spend.tokens:,}" + (
        f" (+{spend.unmetered_calls} call(s) with unknown usage)" if spend.unmetered_calls else ""
    )
    status.print(
        f"run {result.run_id}: {result.status}; judge calls {spend.calls}, judge tokens {tokens}, cost {cost}",
        highlight=False,
    )
    if result.status not in ("interrupted", "failed"):
        return
    if resume_command is None:
        status.print("results were kept in memory only (--no-store): run it again to judge every case", highlight=False)
    else:
        # One line however narrow the terminal, so it can be copied and pasted as it is.
        status.print(f"finish it with: {resume_command} --resume {result.run_id}", highlight=False, soft_wrap=True)


def _estimate_line(plan: RunPlan) -> str:
    model = plan.suite.judge_model or "none"
    calls = f"{plan.min_calls}-{plan.max_calls}" if plan.min_calls != plan.max_calls else str(plan.max_calls)
    cost = plan.estimated_cost()
    money = "unknown price" if cost is None else f"~${cost:.4f}"
    return f"Judge model: {model}; judge calls: {calls} (estimated cost at most {money})."
