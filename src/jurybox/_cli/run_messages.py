"""What ``jurybox run`` prints around its report: the ``--dry-run`` plan, the model servers that do not
answer, the run service's notices, the intro line and the outro."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from jurybox._cli.run_views import llm_skip_plan, plan_view
from jurybox.engine import RunResult, WorkerPlacement
from jurybox.models import cache_only_line
from jurybox.report import cost_text, judge_calls_text
from jurybox.runs import Notice, Preflight
from jurybox.suites import HOW_TO_ENABLE, RunPlan

NODE_ID_SHOWN = 12
"""Hex digits of a Ray node id the summary shows (``ray list nodes`` shows it whole)."""


def print_plan(plan: RunPlan, console: Console) -> None:
    """The ``--dry-run`` listing: every case, its judges per tier (with their pass marks) and its judge calls."""
    console.print(plan_view(plan, console))
    console.print(escape(_estimate_line(plan)), highlight=False, emoji=False)
    if plan.skipped_judges:
        console.print(
            f"[yellow]LLM tier SKIPPED[/] ({plan.skipped_judges} LLM judge(s) would not run): {HOW_TO_ENABLE}"
        )


def servers_answer(checked: Preflight, status: Console) -> bool:
    """Print what the check before the run found: one error line per model server that stops the run, else a
    note per judge server that is down but stood in for by the response cache; whether the run goes on."""
    for line in checked.problems:
        status.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True, emoji=False)
    if checked.problems:
        status.print(
            "(a judge server that is down is stood in for by the response cache only when the cache is on and "
            "holds replies; skip this check with --no-preflight)",
            highlight=False,
        )
        return False
    for line in checked.lines():
        status.print(f"[yellow]note:[/] {escape(line)}", highlight=False, soft_wrap=True, emoji=False)
    return True


def print_cache_only(checked: Preflight, result: RunResult, status: Console) -> None:
    """After a run that went on without its judge server: how many judge calls the response cache answered."""
    spend = result.spend
    for model in checked.cache_only:
        line = cache_only_line(model.url, model.problem, hits=spend.cache_hits, calls=spend.calls)
        status.print(escape(line), highlight=False, soft_wrap=True, emoji=False)


def print_notice(notice: Notice, status: Console) -> None:
    """What the run service says as it opens the store: a lock it waits for, a run it cannot resume."""
    if notice.kind == "waiting":
        status.print(f"waiting: {escape(notice.text)}", highlight=False)
    elif notice.kind == "note":
        status.print(f"[yellow]note:[/] {escape(notice.text)}")
    else:
        status.print(escape(notice.text))


def print_intro(plan: RunPlan, status: Console, resume: str | None) -> None:
    what = f"resuming run {resume} of" if resume else "running"
    status.print(
        f"{what} [bold]{escape(plan.suite.name)}[/]: {len(plan.cases)} case(s). {escape(_estimate_line(plan))}",
        highlight=False,
        emoji=False,
    )
    if plan.skipped_judges:
        status.print(
            f"[yellow]LLM tier SKIPPED[/]: no judge model configured; {escape(llm_skip_plan(plan))} "
            "(how to configure one: in the notes at the end)",
            highlight=False,
        )


def print_outro(
    result: RunResult, status: Console, *, resume_command: str | None = None, resume_id: str | None = None
) -> None:
    """The run's last lines: its id and spend, and how to finish it when it did not (``resume_id``: an
    experiment's id, which finishes all its variants; default the run's own)."""
    spend = result.spend
    tokens = f"{spend.tokens:,}" + (
        f" (+{spend.unmetered_calls} call(s) with unknown usage)" if spend.unmetered_calls else ""
    )
    calls = judge_calls_text(spend.calls, spend.cache_hits)
    cost = cost_text(spend.cost, spend.unpriced_calls)
    status.print(
        f"run {result.run_id}: {result.status}; judge calls {calls}, judge tokens {tokens}, cost {cost}",
        highlight=False,
    )
    for line in placement_lines(result.placement):
        status.print(escape(line), highlight=False, soft_wrap=True)
    if result.status not in ("interrupted", "failed"):
        return
    if resume_command is None:
        status.print("results were kept in memory only (--no-store): run it again to judge every case", highlight=False)
    else:
        # One line however narrow the terminal, so it can be copied and pasted as it is.
        finish = resume_id or result.run_id
        status.print(f"finish it with: {resume_command} --resume {finish}", highlight=False, soft_wrap=True)


def placement_lines(placement: Sequence[WorkerPlacement]) -> list[str]:
    """Where the run's actors ran: a count, then one line per node with its actors, their process and cases."""
    if not placement:
        return []
    by_node: dict[tuple[str, str], list[WorkerPlacement]] = {}
    for worker in placement:
        by_node.setdefault((worker.node, worker.address), []).append(worker)
    nodes = len(by_node)
    lines = [f"{len(placement)} actor(s) on {nodes} node(s):"]
    for (node, address), workers in by_node.items():
        where = f"node {node[:NODE_ID_SHOWN] or '?'}" + (f" ({address})" if address else "")
        shown = ", ".join(f"{w.worker} (pid {w.pid}, {w.cases:,} cases)" for w in workers)
        lines.append(f"  {where}: {shown}")
    return lines


def _estimate_line(plan: RunPlan) -> str:
    """The judge model (and the server it is at), the judge calls and what is known of their cost."""
    model = plan.suite.judge_model or "none"
    where = getattr(plan.suite.model, "printable_url", None) if plan.suite.model is not None else None
    if isinstance(where, str) and where:
        model = f"{model} at {where}"  # printable_url: never a user:password or a query's key
    calls = f"{plan.min_calls}-{plan.max_calls}" if plan.min_calls != plan.max_calls else str(plan.max_calls)
    if plan.estimated:  # scaled from a big cases file's first lines, the rest being checked as the run starts
        calls = f"about {calls}"
    if plan.max_calls == 0:
        return f"Judge model: {model}; judge calls: 0."
    cost = plan.estimated_cost()
    if cost is not None:
        return f"Judge model: {model}; judge calls: {calls} (estimated cost at most ~${cost:.4f})."
    priced = plan.suite.judge_model or "the judges' own models"
    return (
        f"Judge model: {model}; judge calls: {calls}; price unknown for {priced}: add it to "
        "[tool.jurybox.prices] in pyproject.toml to see the cost."
    )
