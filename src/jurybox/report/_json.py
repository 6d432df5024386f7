"""The JSON report: the whole run at full fidelity, and the reader that loads it back.

Layout (``schema_version`` 1; a reader refuses a newer version rather than half-reading it):

    {"schema_version": 1, "generator": "jurybox <version>",
     "suite", "run_id", "status", "started_at", "finished_at", "judge_model",
     "planned", "notes", "skipped_tiers", "metadata",
     "totals": {"cases", "by_status": {"pass", "fail", "error", "abstain"}, "pass_rate",
                "tokens", "tokens_unknown", "cost", "cost_unknown", "judge_calls",
                "judge_cache_hits", "duration", "case_time", "degraded_judgments", "degraded_cases",
                "tiers": {tier: {"ran", "passed", "decided", "rate"}},
                "skipped_tiers": {tier: {"reason", "cases"}},
                "calls": {"agent": {"attempts", "retries", "failures"},
                          "judge": {"calls", "attempts", "retries", "failures", "cache_hits"},
                          "judge@<endpoint URL>": {"calls", "errors"}  (a judge fleet, per endpoint)}},
     "calibrations": [{"judge", "key", "status", "passed", "decided", "observed", "corrected", "low",
                       "high", "tpr", "tnr", "calibration_id", "calibrated_at", "dataset", "text"}],
     "cases": [{"case", "status", "score" (the deciding judge's), "pass_mark", "reason", "tier", "degraded", "skipped",
                "duration", "tokens", "cost", "judge_calls", "tags", "error", "started_at",
                "metadata", "judgment": <Judgment.to_dict()>, "context": <Context.to_dict()> | null,
                "rounds": [{"index", "prompt", "follow_ups": [{"question", "reply"}],
                            "context", "judgment"}]}]}

Unknown numbers (tokens, cost, score, pass rate) are ``null``, never 0. ``calibrations``
(the LLM judges with a stored calibration) is there only when the run has any.

Text layout: the envelope (run fields, totals) is indented; each ``cases[]`` entry is
one line, ``json.dumps(case, ensure_ascii=False)`` without indent, so a big report
greps and diffs a case per line. ``indent=None`` puts the whole document on one line.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from jurybox.core import (
    BooleanScore,
    CaseRecord,
    CategoricalScore,
    Check,
    Context,
    ErrorInfo,
    Judgment,
    NumericScore,
    RoundRecord,
    Score,
    Status,
    read_json,
    to_jsonable,
)
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._case import CaseSummary
from jurybox.report._formats import ReportFormat, register_report_format
from jurybox.report._model import RunReport, Totals

SCHEMA_VERSION = 1
"""Version of the JSON report layout; bumped on any change a reader must know about."""


def to_json(report: RunReport, *, indent: int | None = 2) -> str:
    """The whole run as JSON: totals, and per case its judgment tree, checks, context and rounds.

    Args:
        report: The run.
        indent: Indent of the envelope (run fields and totals); each case is one
            compact line of the ``cases`` array whatever the indent. ``None`` writes
            the whole document on one line.
    """
    return "".join(iter_json(report, indent=indent))


def iter_json(report: RunReport, *, indent: int | None = 2) -> Iterator[str]:
    """``to_json`` in pieces, one per case, so a big run is written without holding its whole text.

    With an indent, the envelope is pretty-printed and each case is one line
    inside ``cases`` (``json.dumps`` of the case without indent), so a big report
    greps and diffs a case per line and is encoded by the C encoder; ``indent=None``
    gives exactly ``json.dumps`` of the whole report.

    A streamed report whose totals are not known yet spools its case lines to a
    temporary file (in ``$TMPDIR``, about the size of the report) while one pass
    over the store adds the totals up; see ``RunReport.tally_cases``.
    """
    if report.tallied:
        before, after = _envelope(report, indent)
        yield before
        wrote = False
        for line in _case_lines(report.cases, indent):
            wrote = True
            yield line
        yield _closing(after, indent, wrote)
        return
    # A streamed report whose totals are not known yet: the totals go before the cases, so one
    # pass over the store encodes the cases into a temporary file while adding the totals up,
    # instead of one pass for the totals and a second for the cases.
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n") as spool:
        wrote = False
        for line in _case_lines(report.tally_cases(), indent):
            wrote = True
            spool.write(line)
        before, after = _envelope(report, indent)
        yield before
        spool.seek(0)
        while chunk := spool.read(_SPOOL_CHUNK):
            yield chunk
        yield _closing(after, indent, wrote)


_SPOOL_CHUNK = 1 << 20
"""Characters read back from the spooled case lines at a time."""


def _envelope(report: RunReport, indent: int | None) -> tuple[str, str]:
    """The document with an empty ``cases`` list, cut inside that list: the cases go between the two parts."""
    head = {
        "schema_version": SCHEMA_VERSION,
        "generator": f"jurybox {_jurybox_version()}",
        "suite": report.suite,
        "run_id": report.run_id,
        "status": report.status,
        "started_at": _iso(report.started_at),
        "finished_at": _iso(report.finished_at),
        "judge_model": report.judge_model,
        "planned": report.planned,
        "notes": list(report.notes),
        "skipped_tiers": dict(report.skipped_tiers),
        "metadata": dict(report.metadata),
        "totals": _totals(report.totals),
    }
    if report.calibrations:  # only then: a run with no calibrated judge keeps the report it always had
        head["calibrations"] = [judge.to_dict() for judge in report.calibrations]
    document = _dumps({**to_jsonable(head), "cases": []}, indent)
    cut = document.rindex("[]") + 1
    return document[:cut], document[cut:]


def _case_lines(summaries: Iterable[CaseSummary], indent: int | None) -> Iterator[str]:
    """Each case's text with what goes before it: a separator after the first, and its indent."""
    inner = "" if indent is None else "\n" + " " * (2 * indent)
    separator = ", " if indent is None else ","
    lead = inner
    for summary in summaries:
        yield lead + _encode_case(summary.record, summary.reason, summary.tier, summary.degraded, summary.skipped)
        lead = separator + inner


def _closing(after: str, indent: int | None, wrote: bool) -> str:
    """What follows the last case: the indent of the list's ``]`` (when there were cases), and the rest."""
    outer = "" if indent is None or not wrote else "\n" + " " * indent
    return outer + after


def _dumps(value: Any, indent: int | None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)


def _encode_case(record: CaseRecord, reason: str, tier: str | None, degraded: bool, skipped: Mapping[str, str]) -> str:
    """One case as one line: its values encoded directly, through ``to_jsonable`` only where needed.

    The encoder hands what it cannot encode itself (a read-only mapping, a datetime,
    a set, an enum) to ``to_jsonable``, so a case's plain data is never copied. A
    value it refuses outright (NaN, a dict key of another type) sends the whole case
    through ``to_jsonable``. A ``True``, ``False`` or ``None`` dict key is written
    ``"true"``/``"false"``/``"null"`` (JSON's rule), as the store writes it, so a
    report streamed back from the store and one built from the records in memory
    are the same text.
    """
    case = _case_data(record, reason, tier, degraded, dict(skipped))
    try:
        return _CASE_ENCODER.encode(case)
    except (TypeError, ValueError):
        return _CASE_ENCODER.encode(to_jsonable(case))


def from_json(text: str, *, source: str = "<json>") -> RunReport:
    """Load a report written by ``to_json``.

    Raises:
        ValueError: on malformed JSON, a newer ``schema_version``, or a bad field; the
            message names the source and the field path (e.g. ``cases[2].judgment.status``).
    """
    try:
        data = read_json(text, max_nodes=None, source=source)  # as big as its run: only its depth is limited
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    reader = _Reader(source)
    root = reader.mapping(data, "")
    schema = root.get("schema_version")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise ValueError(f"{source}: schema_version: missing or not an integer ({schema!r}); not a jurybox report")
    if schema > SCHEMA_VERSION:
        raise ValueError(
            f"{source}: schema_version {schema} is newer than this jurybox reads ({SCHEMA_VERSION}); upgrade jurybox"
        )
    cases = reader.list(root.get("cases"), "cases")
    # Required: a report that lost its status must not read as a completed run (RunReport checks the value).
    status: Any = reader.string(root.get("status"), "status")
    try:
        return RunReport(
            suite=reader.string(root.get("suite"), "suite"),
            run_id=reader.string(root.get("run_id"), "run_id"),
            records=[reader.record(item, f"cases[{i}]") for i, item in enumerate(cases)],
            started_at=reader.moment(root.get("started_at"), "started_at"),
            finished_at=reader.moment(root.get("finished_at"), "finished_at"),
            judge_model=reader.optional_string(root.get("judge_model"), "judge_model"),
            status=status,
            notes=[reader.string(n, f"notes[{i}]") for i, n in enumerate(reader.list(root.get("notes", []), "notes"))],
            skipped_tiers={
                str(k): str(v) for k, v in reader.mapping(root.get("skipped_tiers", {}), "skipped_tiers").items()
            },
            planned=root.get("planned"),
            metadata=reader.mapping(root.get("metadata", {}), "metadata"),
            calibrations=[
                CalibratedJudge.from_dict(reader.mapping(item, f"calibrations[{i}]"))
                for i, item in enumerate(reader.list(root.get("calibrations", []), "calibrations"))
            ],
        )
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(source):
            raise
        raise ValueError(f"{source}: {exc}") from exc


def record_to_dict(record: CaseRecord) -> dict[str, Any]:
    """One case record as JSON-ready data (the ``cases[]`` entry without derived fields)."""
    data: dict[str, Any] = to_jsonable(_record_data(record))
    return data


def _record_data(record: CaseRecord) -> dict[str, Any]:
    """``record_to_dict`` before ``to_jsonable``: the record's values as they are."""
    return {
        "case": record.case,
        "status": record.status.value,
        "score": record.score,
        "pass_mark": record.pass_mark,
        "duration": record.duration,
        "tokens": record.tokens,
        "cost": record.cost,
        "judge_calls": record.judge_calls,
        "tags": list(record.tags),
        "error": record.error,
        "started_at": _iso(record.started_at),
        "metadata": dict(record.metadata),
        "judgment": record.judgment.to_dict(),
        "context": record.context.to_dict() if record.context is not None else None,
        "rounds": [
            {
                "index": r.index,
                "prompt": r.prompt,
                "follow_ups": [{"question": q, "reply": a} for q, a in r.follow_ups],
                "context": r.context.to_dict(),
                "judgment": r.judgment.to_dict(),
            }
            for r in record.rounds
        ],
    }


def _case_data(
    record: CaseRecord, reason: str, tier: str | None, degraded: bool, skipped: dict[str, str]
) -> dict[str, Any]:
    """``_case`` before ``to_jsonable``."""
    return _with_derived(_record_data(record), reason, tier, degraded, skipped)


def _with_derived(data: dict[str, Any], reason: str, tier: str | None, degraded: bool, skipped: Any) -> dict[str, Any]:
    # Derived fields go right after the verdict so a reader of the raw file sees them first.
    return {
        "case": data.pop("case"),
        "status": data.pop("status"),
        "score": data.pop("score"),
        "pass_mark": data.pop("pass_mark"),
        "reason": reason,
        "tier": tier,
        "degraded": degraded,
        "skipped": skipped,
        **data,
    }


def _totals(totals: Totals) -> dict[str, Any]:
    return {
        "cases": totals.cases,
        "by_status": {status.value: count for status, count in totals.by_status.items()},
        "pass_rate": totals.pass_rate,
        "tokens": totals.tokens,
        "tokens_unknown": totals.tokens_unknown,
        "cost": totals.cost,
        "cost_unknown": totals.cost_unknown,
        "judge_calls": totals.judge_calls,
        "judge_cache_hits": totals.judge_cache_hits,
        "duration": totals.duration,
        "case_time": totals.case_time,
        "degraded_judgments": totals.degraded_judgments,
        "degraded_cases": totals.degraded_cases,
        "tiers": {
            name: {
                "ran": t.ran,
                "passed": t.passed,
                "decided": t.decided,
                "rate": t.rate,
                "target": t.target,
                "target_met": t.target_met,
            }
            for name, t in totals.tiers.items()
        },
        "skipped_tiers": {name: {"reason": s.reason, "cases": s.cases} for name, s in totals.skipped_tiers.items()},
        "calls": {who: dict(counts) for who, counts in totals.calls.items()},
    }


_CASE_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=to_jsonable)
"""What ``json.dumps(case, ensure_ascii=False, allow_nan=False)`` gives, with ``to_jsonable`` for other types."""


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _jurybox_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~40 ms to import: only a JSON report asks

    try:
        return version("jurybox")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


class _Reader:
    """Typed access to loaded JSON; every error names the source and the field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> ValueError:
        return ValueError(f"{self.source}: {path or '<root>'}: {message}")

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {type(value).__name__}")
        return value

    def list(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {type(value).__name__}")
        return value

    def optional_string(self, value: Any, path: str) -> str | None:
        return None if value is None else self.string(value, path)

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(path, f"expected a number, got {value!r}")
        return value  # an int stays an int, so a report re-written from its JSON is byte-identical

    def optional_number(self, value: Any, path: str) -> float | None:
        return None if value is None else self.number(value, path)

    def moment(self, value: Any, path: str) -> datetime | None:
        if value is None:
            return None
        try:
            return datetime.fromisoformat(self.string(value, path))
        except ValueError as exc:
            raise self.fail(path, f"not an ISO date-time: {value!r}") from exc

    def record(self, value: Any, path: str) -> CaseRecord:
        data = self.mapping(value, path)
        tokens = data.get("tokens")
        if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)):
            raise self.fail(f"{path}.tokens", f"expected an integer or null, got {tokens!r}")
        judge_calls = data.get("judge_calls", 0)
        if isinstance(judge_calls, bool) or not isinstance(judge_calls, int):
            raise self.fail(f"{path}.judge_calls", f"expected an integer, got {judge_calls!r}")
        context = data.get("context")
        return CaseRecord(
            case=self.string(data.get("case"), f"{path}.case"),
            judgment=self.judgment(data.get("judgment"), f"{path}.judgment"),
            rounds=tuple(
                self.round(item, f"{path}.rounds[{i}]")
                for i, item in enumerate(self.list(data.get("rounds", []), f"{path}.rounds"))
            ),
            context=None if context is None else self.context(context, f"{path}.context"),
            duration=self.number(data.get("duration", 0.0), f"{path}.duration"),
            tokens=tokens,
            cost=self.optional_number(data.get("cost"), f"{path}.cost"),
            judge_calls=judge_calls,
            tags=tuple(
                self.string(t, f"{path}.tags[{i}]")
                for i, t in enumerate(self.list(data.get("tags", []), f"{path}.tags"))
            ),
            error=self.optional_string(data.get("error"), f"{path}.error"),
            started_at=self.moment(data.get("started_at"), f"{path}.started_at"),
            metadata=self.mapping(data.get("metadata", {}), f"{path}.metadata"),
        )

    def round(self, value: Any, path: str) -> RoundRecord:
        data = self.mapping(value, path)
        index = data.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise self.fail(f"{path}.index", f"expected an integer, got {index!r}")
        follow_ups = []
        for i, item in enumerate(self.list(data.get("follow_ups", []), f"{path}.follow_ups")):
            exchange = self.mapping(item, f"{path}.follow_ups[{i}]")
            follow_ups.append(
                (
                    self.string(exchange.get("question"), f"{path}.follow_ups[{i}].question"),
                    self.string(exchange.get("reply"), f"{path}.follow_ups[{i}].reply"),
                )
            )
        return RoundRecord(
            index=index,
            prompt=self.string(data.get("prompt"), f"{path}.prompt"),
            context=self.context(data.get("context"), f"{path}.context"),
            judgment=self.judgment(data.get("judgment"), f"{path}.judgment"),
            follow_ups=tuple(follow_ups),
        )

    def context(self, value: Any, path: str) -> Context:
        try:
            return Context.from_dict(self.mapping(value, path))
        except (TypeError, ValueError) as exc:
            raise self.fail(path, str(exc)) from exc

    def judgment(self, value: Any, path: str) -> Judgment:
        data = self.mapping(value, path)
        try:
            status = Status(str(data.get("status")))
        except ValueError as exc:
            valid = ", ".join(s.value for s in Status)
            raise self.fail(f"{path}.status", f"{data.get('status')!r} is not one of {valid}") from exc
        error = data.get("error")
        children = self.mapping(data.get("children", {}), f"{path}.children")
        checks = []
        for i, item in enumerate(self.list(data.get("checks", []), f"{path}.checks")):
            check = self.mapping(item, f"{path}.checks[{i}]")
            passed = check.get("passed")
            if not isinstance(passed, bool):
                raise self.fail(f"{path}.checks[{i}].passed", f"expected true or false, got {passed!r}")
            checks.append(
                Check(
                    name=self.string(check.get("name"), f"{path}.checks[{i}].name"),
                    passed=passed,
                    message=self.string(check.get("message", ""), f"{path}.checks[{i}].message"),
                )
            )
        try:
            return Judgment(
                status,
                score=self.score(data.get("score"), f"{path}.score"),
                reasoning=self.string(data.get("reasoning", ""), f"{path}.reasoning"),
                checks=tuple(checks),
                judge=self.string(data.get("judge", ""), f"{path}.judge"),
                confidence=self.optional_number(data.get("confidence"), f"{path}.confidence"),
                degraded=bool(data.get("degraded", False)),
                error=None if error is None else self.error(error, f"{path}.error"),
                children={name: self.judgment(child, f"{path}.children.{name}") for name, child in children.items()},
                decided_by=self.optional_string(data.get("decided_by"), f"{path}.decided_by"),
                metadata=self.mapping(data.get("metadata", {}), f"{path}.metadata"),
            )
        except (TypeError, ValueError) as exc:
            if str(exc).startswith(self.source):
                raise
            raise self.fail(path, str(exc)) from exc

    def error(self, value: Any, path: str) -> ErrorInfo:
        data = self.mapping(value, path)
        return ErrorInfo(
            type=self.string(data.get("type"), f"{path}.type"),
            message=self.string(data.get("message"), f"{path}.message"),
            traceback=self.string(data.get("traceback", ""), f"{path}.traceback"),
        )

    def score(self, value: Any, path: str) -> Score | None:
        if value is None:
            return None
        data = self.mapping(value, path)
        kind = data.get("kind")
        try:
            if kind == "boolean":
                return BooleanScore(data["value"])
            if kind == "numeric":
                return NumericScore(
                    self.number(data.get("value"), f"{path}.value"),
                    min=self.number(data.get("min", 0.0), f"{path}.min"),
                    max=self.number(data.get("max", 1.0), f"{path}.max"),
                )
            if kind == "categorical":
                return CategoricalScore(
                    self.string(data.get("value"), f"{path}.value"),
                    categories=self.mapping(data.get("categories"), f"{path}.categories"),
                )
        except (KeyError, TypeError, ValueError) as exc:
            raise self.fail(path, str(exc)) from exc
        raise self.fail(f"{path}.kind", f"{kind!r} is not one of boolean, numeric, categorical")


register_report_format(
    "json", ReportFormat(".json", iter_json), summary="every case, verdict tree and total (reads back with from_json)"
)
