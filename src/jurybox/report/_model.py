"""What every report renders: one run's records plus the totals derived from them.

The renderers never recompute anything: they read ``RunReport``, its ``totals``
and the ``CaseSummary`` of each case, so the console, JSON, JUnit, Markdown and
HTML reports can never disagree about a count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from itertools import islice
from types import MappingProxyType
from typing import Literal, get_args, overload

from jurybox.core import Judgment, Status
from jurybox.store import CaseRecord, RoundRecord, StoredRecords

RunStatus = Literal["completed", "interrupted", "failed"]
"""How a run ended: every case finished, stopped early (Ctrl-C), or the runner itself failed."""

RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)

SKIPPED_TIERS_KEY = "skipped_tiers"
"""``CaseRecord.metadata`` key: a mapping tier name -> why the runner left that tier out."""

_STATUS_ORDER = (Status.PASS, Status.FAIL, Status.ERROR, Status.ABSTAIN)


@dataclass(frozen=True)
class SkippedTier:
    """A judge tier that did not run for some cases.

    Attributes:
        tier: The tier's name, e.g. ``"llm_judge"``.
        reason: Why it did not run (e.g. no judge model configured, and how to configure one).
        cases: How many cases would have used it.
    """

    tier: str
    reason: str
    cases: int


@dataclass(frozen=True)
class TierRate:
    """How one cascade tier did over the run.

    Attributes:
        tier: The tier's name (key of a top-level child of a cascade verdict).
        ran: Verdicts this tier gave (one per case, or per round for multi-round cases).
        passed: How many of them were PASS. ABSTAIN and ERROR count as not passed.
        decided: How many case or round verdicts this tier settled (``decided_by``).
    """

    tier: str
    ran: int
    passed: int
    decided: int

    @property
    def rate(self) -> float | None:
        """``passed / ran``, or None when the tier never ran (never a made-up 0)."""
        return self.passed / self.ran if self.ran else None


@dataclass(frozen=True)
class CaseSummary:
    """The facts about one case that every renderer shows.

    Attributes:
        record: The underlying record (full fidelity).
        reason: Why the case got its verdict: the error for ERROR, else the reasoning.
        tier: The tier that decided (``decided_by``), or None when no cascade decided.
        degraded: True when any verdict in the case (rounds included) came from a fallback policy.
        skipped: Tier name -> why it did not run for this case; covers tiers the runner
            left out (``metadata["skipped_tiers"]``) and tiers a cascade did not need.
        degraded_judgments: How many individual judge verdicts in the case were degraded.
    """

    record: CaseRecord
    reason: str
    tier: str | None
    degraded: bool
    skipped: Mapping[str, str]
    degraded_judgments: int

    @property
    def name(self) -> str:
        return self.record.case

    @property
    def status(self) -> Status:
        return self.record.status

    @property
    def score(self) -> float | None:
        return self.record.score

    @property
    def ok(self) -> bool:
        return self.record.status is Status.PASS


@dataclass(frozen=True)
class Totals:
    """Run-level figures derived from the records.

    Attributes:
        cases: Number of case records.
        by_status: Count per status (all four keys always present).
        pass_rate: PASS / cases, or None for an empty run.
        tokens: Sum of the known token counts, or None when no case reported any.
        tokens_unknown: Cases whose token count is unknown.
        cost: Sum of the known costs in USD, or None when no case's cost is known.
        cost_unknown: Cases whose cost is unknown; a report shows them, never as 0.
        judge_calls: Model calls made by judges.
        duration: Wall time of the run in seconds (finished - started), else the sum of case times.
        case_time: Sum of the case durations in seconds.
        tiers: Per-tier pass rates, in first-seen order.
        degraded_judgments: Individual judge verdicts produced by a fallback policy.
        degraded_cases: Cases with at least one degraded verdict.
        skipped_tiers: Tiers left out for some cases, with the reason (not tiers a cascade did not need).
    """

    cases: int
    by_status: Mapping[Status, int]
    pass_rate: float | None
    tokens: int | None
    tokens_unknown: int
    cost: float | None
    cost_unknown: int
    judge_calls: int
    duration: float | None
    case_time: float
    tiers: Mapping[str, TierRate]
    degraded_judgments: int
    degraded_cases: int
    skipped_tiers: Mapping[str, SkippedTier]

    @property
    def passed(self) -> int:
        return self.by_status[Status.PASS]

    @property
    def failed(self) -> int:
        return self.by_status[Status.FAIL]

    @property
    def errored(self) -> int:
        return self.by_status[Status.ERROR]

    @property
    def abstained(self) -> int:
        return self.by_status[Status.ABSTAIN]

    @property
    def not_passed(self) -> int:
        """FAIL + ERROR + ABSTAIN: every case that is not a pass."""
        return self.cases - self.passed


@dataclass(frozen=True)
class RunReport:
    """One run of one suite, ready to render.

    Build it from what the runner produced (or what ``Store.run_records`` returns
    for a finished or resumed run); everything else is derived.

    Attributes:
        suite: Suite name.
        run_id: The store's run id.
        records: One record per case that finished, in suite order.
        started_at: When the run started.
        finished_at: When it ended (None while unknown).
        judge_model: The judge model spec (e.g. ``"openai:gpt-4o-mini"``), None when none was configured.
        status: ``"completed"``, ``"interrupted"`` (stopped early; the report covers what
            finished) or ``"failed"``.
        notes: Run-level messages shown prominently, e.g. why a tier was skipped and how to enable it.
        skipped_tiers: Tier name -> reason for tiers the runner left out for the whole run;
            merged with each case's ``metadata["skipped_tiers"]``.
        planned: How many cases the run was meant to judge, when known (shows what an
            interrupted run is missing).
        metadata: Anything else worth keeping (agent version, git commit...); shown in JSON and HTML.
    """

    suite: str
    run_id: str
    records: Sequence[CaseRecord]
    started_at: datetime | None = None
    finished_at: datetime | None = None
    judge_model: str | None = None
    status: RunStatus = "completed"
    notes: Sequence[str] = ()
    skipped_tiers: Mapping[str, str] = field(default_factory=dict)
    planned: int | None = None
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in RUN_STATUSES:
            raise ValueError(f"RunReport.status must be one of {', '.join(RUN_STATUSES)}; got {self.status!r}")
        records: Sequence[CaseRecord]
        if isinstance(self.records, StoredRecords):
            # Read from the store on each pass: a report of any size renders in flat memory.
            records = self.records
            names: Iterable[str] = records.names()
        else:
            records = tuple(self.records)
            for index, record in enumerate(records):
                if not isinstance(record, CaseRecord):
                    raise TypeError(f"RunReport.records[{index}] is a {type(record).__name__}, not a CaseRecord")
            names = (r.case for r in records)
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            # A resumed run that wrote a case twice would otherwise be counted twice.
            raise ValueError(f"RunReport has more than one record for case(s): {', '.join(duplicates)}")
        if self.planned is not None and self.planned < len(records):
            raise ValueError(f"RunReport.planned is {self.planned} but there are {len(records)} records")
        object.__setattr__(self, "records", records)
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "skipped_tiers", MappingProxyType(dict(self.skipped_tiers)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def streamed(self) -> bool:
        """True when the records are read from the store on each pass instead of held in memory."""
        return isinstance(self.records, StoredRecords)

    @cached_property
    def cases(self) -> Sequence[CaseSummary]:
        """A summary per record, in record order (computed on each pass for a streamed report)."""
        if isinstance(self.records, StoredRecords):
            return _Summaries(self.records)
        return tuple(summarize_case(record) for record in self.records)

    @cached_property
    def totals(self) -> Totals:
        if isinstance(self.records, StoredRecords):
            return self._streamed_tally[0]
        return compute_totals(self)

    @cached_property
    def _streamed_tally(self) -> tuple[Totals, bytes]:
        # One pass over the store gives the totals and the failing-first rank of every case.
        tally = _Tally(self)
        for summary in self.cases:
            tally.add(summary)
        return tally.totals(), bytes(tally.ranks)

    @property
    def tallied(self) -> bool:
        """True when the totals and the failing-first order are known without another pass over the cases."""
        return not self.streamed or "_streamed_tally" in self.__dict__

    def tally_cases(self) -> Iterator[CaseSummary]:
        """``cases``, adding up the totals and the failing-first order on the way.

        A renderer that needs the totals only after the cases (the JSON report,
        spooling its case lines) iterates this instead of ``cases``: a streamed
        report then reads the store once, not once for the totals and once more
        for the cases. The totals are kept only when the pass runs to the end.
        """
        tally = _Tally(self)
        for summary in self.cases:
            tally.add(summary)
            yield summary
        if self.streamed:
            # cached_property keeps its value in the instance dict: the pass just made is that value.
            self.__dict__.setdefault("_streamed_tally", (tally.totals(), bytes(tally.ranks)))

    @property
    def ok(self) -> bool:
        """True when the run completed, judged at least one case, every case passed and none is missing.

        A run that judged nothing (a filter that matched no case) is not ok: a CI
        gate must not pass on an empty run. Nor is a completed run with planned
        cases that have no record (a result the store failed to write).
        """
        return (
            self.status == "completed"
            and bool(self.records)
            and not self.missing
            and self.totals.passed == len(self.records)
        )

    @property
    def missing(self) -> int | None:
        """Planned cases with no record (an interrupted run), or None when the plan is unknown."""
        return None if self.planned is None else self.planned - len(self.records)

    def notices(self) -> list[str]:
        """Run-level messages for the top of a report: an incomplete run, skipped tiers, the notes.

        A skipped tier whose reason a note already states is not repeated.
        """
        notices = []
        if self.status != "completed":
            text = f"run {self.status}: this report covers the {len(self.records)} case(s) that finished"
            if self.missing:
                text += f"; {self.missing} of {self.planned} planned case(s) have no result"
            notices.append(text)
        elif self.missing:
            notices.append(f"results lost: {self.missing} of {self.planned} planned case(s) have no result")
        for skipped in self.totals.skipped_tiers.values():
            if not any(skipped.reason in note for note in self.notes):
                count = f" for {skipped.cases} case(s)" if skipped.cases else ""
                notices.append(f"{skipped.tier} tier skipped{count}: {skipped.reason}")
        notices.extend(self.notes)
        return notices

    def failing_first(self) -> Sequence[CaseSummary]:
        """Cases ordered FAIL, ERROR, ABSTAIN, degraded PASS, PASS; suite order within each group."""
        return self._failing_first

    @cached_property
    def _failing_first(self) -> Sequence[CaseSummary]:
        # Kept: several renderers ask, and ranking a streamed report is a pass over the store.
        if isinstance(self.records, StoredRecords):
            return _Ranked(self.records, self._streamed_tally[1])
        return tuple(sorted(self.cases, key=attention_rank))


def attention_rank(case: CaseSummary) -> int:
    """Where a case goes in a failing-first listing: FAIL 0, ERROR 1, ABSTAIN 2, degraded PASS 3, PASS 4."""
    rank = _ATTENTION_RANK.get(case.status)
    if rank is not None:
        return rank
    return 3 if case.degraded else 4


_ATTENTION_RANK = {Status.FAIL: 0, Status.ERROR: 1, Status.ABSTAIN: 2}


class _Summaries(Sequence[CaseSummary]):
    """Case summaries of a streamed report, made as the records are read (none kept)."""

    def __init__(self, records: StoredRecords) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CaseSummary]:
        return map(summarize_case, self._records)

    @overload
    def __getitem__(self, index: int) -> CaseSummary: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CaseSummary]: ...

    def __getitem__(self, index: int | slice) -> CaseSummary | Sequence[CaseSummary]:
        if isinstance(index, slice):
            return [summarize_case(record) for record in self._records[index]]
        return summarize_case(self._records[index])


class _Ranked(Sequence[CaseSummary]):
    """A streamed report's cases in failing-first order, from a byte per case (its rank).

    Iterating reads the store once per rank present, rebuilding only that rank's
    records; a slice (the console's first N) is one pass that rebuilds only the
    cases in it. A 100,000-case run is ordered in no more memory than a small one.
    """

    def __init__(self, records: StoredRecords, ranks: bytes) -> None:
        self._records = records
        self._ranks = ranks

    def __len__(self) -> int:
        return len(self._ranks)

    def __iter__(self) -> Iterator[CaseSummary]:
        names = self._records.names()
        for rank in sorted(set(self._ranks)):
            yield from map(summarize_case, self._records.only([names[p] for p in self._positions(rank)]))

    def _positions(self, rank: int) -> Iterator[int]:
        """Positions (suite order) of the cases of one rank."""
        position = self._ranks.find(rank)
        while position >= 0:
            yield position
            position = self._ranks.find(rank, position + 1)

    def _order(self) -> Iterator[int]:
        """Every position, failing first."""
        for rank in sorted(set(self._ranks)):
            yield from self._positions(rank)

    @overload
    def __getitem__(self, index: int) -> CaseSummary: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CaseSummary]: ...

    def __getitem__(self, index: int | slice) -> CaseSummary | Sequence[CaseSummary]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            positions = list(islice(self._order(), start, stop, step))
            return self._summaries(positions)
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"index {index} out of range for {len(self)} case(s)")
        return self._summaries([next(islice(self._order(), position, None))])[0]

    def _summaries(self, positions: list[int]) -> list[CaseSummary]:
        names = self._records.names()
        found = {record.case: record for record in self._records.only([names[p] for p in positions])}
        # A record deleted from the store since the ranking pass is left out, not an error.
        return [summarize_case(found[names[p]]) for p in positions if names[p] in found]


def own_verdict(record: CaseRecord, round_: RoundRecord) -> bool:
    """True when a round has a verdict of its own, not just the case verdict again.

    A single-round case usually stores its one verdict both as the case verdict
    and as the round's; reports show and count it once.
    """
    return round_.judgment is not record.judgment and round_.judgment != record.judgment


def case_judgments(record: CaseRecord) -> Iterator[tuple[str, Judgment]]:
    """Every verdict of a case with a path: the case tree, then each round's own tree under ``round<N>``."""
    yield from record.judgment.walk()
    for round_ in record.rounds:
        if own_verdict(record, round_):
            yield from round_.judgment.walk(f"round{round_.index + 1}")


def tier_verdicts(record: CaseRecord) -> list[tuple[str, Judgment, bool]]:
    """(tier, tier verdict, decided) for each cascade tier that ran in a case.

    A tier is the key of a top-level child of a verdict whose ``decided_by`` is
    set. The case verdict is used when it is a cascade; otherwise each round's
    verdict that is one, so a multi-round case contributes one verdict per round.
    """
    roots: list[Judgment] = []
    if record.judgment.decided_by is not None:
        roots.append(record.judgment)
    else:
        roots.extend(r.judgment for r in record.rounds if r.judgment.decided_by is not None)
    return [(name, child, root.decided_by == name) for root in roots for name, child in root.children.items()]


def skipped_tiers(record: CaseRecord) -> dict[str, str]:
    """Tiers that did not run for a case, with why.

    Two sources: the runner's ``metadata["skipped_tiers"]`` (a tier left out, e.g.
    no judge model) and a cascade's ``metadata["skipped"]`` (tiers after the one
    that decided, so never needed). The runner's reason wins when both name a tier.
    """
    result: dict[str, str] = {}
    roots = [record.judgment, *(r.judgment for r in record.rounds)]
    for root in roots:
        not_needed = root.metadata.get("skipped")
        if root.decided_by is not None and isinstance(not_needed, list | tuple):
            for tier in not_needed:
                result.setdefault(str(tier), f"not needed: {root.decided_by} decided")
    configured = record.metadata.get(SKIPPED_TIERS_KEY)
    if isinstance(configured, Mapping):
        result.update({str(tier): str(reason) for tier, reason in configured.items()})
    return result


def summarize_case(record: CaseRecord) -> CaseSummary:
    """The facts about one case that every renderer shows."""
    # A cascade or jury marks itself degraded when a member was; count members, flag the case.
    degraded = False
    degraded_leaves = 0
    for _, judgment in case_judgments(record):
        if judgment.degraded:
            degraded = True
            degraded_leaves += not judgment.children
    return CaseSummary(
        record=record,
        reason=case_reason(record),
        tier=record.judgment.decided_by,
        degraded=degraded,
        skipped=MappingProxyType(skipped_tiers(record)),
        degraded_judgments=degraded_leaves,
    )


def case_reason(record: CaseRecord) -> str:
    """Why a case got its verdict: the runner's error for an ERROR case, else ``explain(judgment)``.

    A case that did not pass while the agent was still asking a clarifying question says so:
    its reply was a question, not an answer, and nothing (no scripted follow-up, no judge
    model to write one, or the max_follow_ups bound) answered it.
    """
    reason = record.error if record.status is Status.ERROR and record.error else explain(record.judgment)
    if record.status is Status.PASS:
        return reason
    asking = [r.index + 1 for r in record.rounds if r.context.metadata.get("unanswered_question") is True]
    if asking:
        where = "round " + ", ".join(map(str, asking))
        reason += (
            f" (in {where} the agent asked a clarifying question that was not answered: give the case "
            "follow_ups, a judge model to write the reply, or a higher max_follow_ups)"
        )
    return reason


def explain(judgment: Judgment) -> str:
    """Why a verdict is what it is, in the words of whoever decided it.

    For a cascade, the reasoning of the judges in the deciding tier that agree
    with the verdict (a cascade's own reasoning says only *that* a tier
    decided); for a jury of plain judges, that of the members that agree;
    otherwise the verdict's own reasoning, or its error.
    """
    tier = judgment.children.get(judgment.decided_by) if judgment.decided_by else None
    if tier is not None:
        leaves = [(path, j) for path, j in tier.walk() if path and not j.children]
    elif judgment.children and all(not child.children for child in judgment.children.values()):
        # A jury of plain judges: its own reasoning is a tally ("all 2 judge(s) passed").
        leaves = list(judgment.children.items())
    else:
        leaves = []
    agreeing = [(path, j) for path, j in leaves if j.status is judgment.status and j.reasoning]
    if agreeing:
        return "; ".join(f"{j.judge or path}: {j.reasoning}" for path, j in agreeing)
    if judgment.reasoning:
        return judgment.reasoning
    if judgment.error is not None:
        return f"{judgment.error.type}: {judgment.error.message}"
    return ""


def compute_totals(report: RunReport) -> Totals:
    """Derive the run-level figures from the case records, in one pass (one store read when streamed)."""
    tally = _Tally(report)
    for summary in report.cases:
        tally.add(summary)
    return tally.totals()


class _Tally:
    """The run-level figures, added up one case at a time; also each case's ``attention_rank``, in order."""

    def __init__(self, report: RunReport) -> None:
        self.report = report
        self.by_status = dict.fromkeys(_STATUS_ORDER, 0)
        self.cases = 0
        self.tokens = self.tokens_known = 0
        self.cost = 0.0
        self.cost_known = self.judge_calls = self.degraded_judgments = self.degraded_cases = 0
        self.case_time = 0.0
        self.tiers: dict[str, list[int]] = {}
        self.skipped_reasons = dict(report.skipped_tiers)
        self.skipped_counts = dict.fromkeys(report.skipped_tiers, 0)
        self.ranks = bytearray()

    def add(self, summary: CaseSummary) -> None:
        record = summary.record
        self.cases += 1
        self.by_status[record.status] += 1
        if record.tokens is not None:
            self.tokens += record.tokens
            self.tokens_known += 1
        if record.cost is not None:
            self.cost += record.cost
            self.cost_known += 1
        self.case_time += record.duration
        self.judge_calls += record.judge_calls
        self.degraded_judgments += summary.degraded_judgments
        self.degraded_cases += summary.degraded
        self.ranks.append(attention_rank(summary))
        for tier, verdict, decided in tier_verdicts(record):
            counts = self.tiers.setdefault(tier, [0, 0, 0])
            counts[0] += 1
            counts[1] += verdict.status is Status.PASS
            counts[2] += decided
        configured = record.metadata.get(SKIPPED_TIERS_KEY)
        if isinstance(configured, Mapping):
            for tier, reason in configured.items():
                self.skipped_reasons.setdefault(str(tier), str(reason))
                self.skipped_counts[str(tier)] = self.skipped_counts.get(str(tier), 0) + 1

    def totals(self) -> Totals:
        report, cases, by_status = self.report, self.cases, self.by_status
        tokens_known, cost_known, tiers = self.tokens_known, self.cost_known, self.tiers
        skipped_reasons, skipped_counts = self.skipped_reasons, self.skipped_counts
        if report.started_at is not None and report.finished_at is not None:
            duration: float | None = max(0.0, (report.finished_at - report.started_at).total_seconds())
        else:
            duration = self.case_time if cases else None
        return Totals(
            cases=cases,
            by_status=MappingProxyType(by_status),
            pass_rate=by_status[Status.PASS] / cases if cases else None,
            tokens=self.tokens if tokens_known else None,
            tokens_unknown=cases - tokens_known,
            cost=self.cost if cost_known else None,
            cost_unknown=cases - cost_known,
            judge_calls=self.judge_calls,
            duration=duration,
            case_time=self.case_time,
            tiers=MappingProxyType({tier: TierRate(tier, *counts) for tier, counts in tiers.items()}),
            degraded_judgments=self.degraded_judgments,
            degraded_cases=self.degraded_cases,
            skipped_tiers=MappingProxyType(
                {tier: SkippedTier(tier, skipped_reasons[tier], skipped_counts[tier]) for tier in skipped_reasons}
            ),
        )
