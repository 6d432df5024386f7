"""A suite's ``cases_file``: the check pass that builds each line once (and keeps none), and the lazy case list.

``load_suite`` checks a cases file the way it checks inline cases, so a typo on
line 900,000 is reported before the run starts rather than an hour into it:
every line is parsed, validated and built, then dropped. What the pass keeps is
small whatever the count: the plan's totals, one built case per distinct set of
judges (for passes over the suite's judges) and a 64-bit hash of each name to
find duplicates (8 bytes a case, freed when the pass ends).
"""

from __future__ import annotations

import itertools
import json
import os
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from jurybox.suites._build import JudgeBuilder
from jurybox.suites._case import Case
from jurybox.suites._case_file import CaseFile, CaseLine, PlanTotals, StreamedCases, file_stamp
from jurybox.suites._case_file_check import (
    BACKGROUND_BYTES,
    PREFIX_LINES,
    BackgroundCheck,
    CheckOutcome,
    count_cases,
)
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._plan import case_plan
from jurybox.suites._spec import CaseModel, SuiteModel
from jurybox.suites._yaml import Located, PathKey, format_path

MAX_PROBLEMS = 50
"""Problems of a cases file reported at most (then a count of the rest): enough to fix a pattern."""
MAX_SAMPLES = 20
"""Distinct sets of judges a cases file's sample keeps a case for."""
_BUCKETS = 256

BuildCase = Callable[..., Case | None]
"""``_build_case`` of the loader: (builder, spec, index, case model, path=...) -> the case or None."""


def streamed_cases(
    doc: Located,
    spec: SuiteModel,
    builder: JudgeBuilder,
    folder: Path,
    inline: tuple[Case, ...],
    build_case: BuildCase,
    *,
    check: bool | Literal["background"],
    llm_enabled: bool,
) -> tuple[StreamedCases | None, list[Problem]]:
    """The suite's case list with its cases file, and the file's problems (after a check pass when ``check``).

    ``check="background"``: a file over ``BACKGROUND_BYTES`` has its first lines checked now and
    the whole of it in a forked child while the run starts (``CaseFile.pending``, ``settle()``).
    """
    assert spec.cases_file is not None
    path = folder / spec.cases_file
    if not path.is_file():
        line = doc.line_of(("cases_file",))
        return None, [Problem(doc.file, line, "cases_file", f"no such cases file: {path}")]

    def build(line: CaseLine, data: dict[str, Any]) -> Case:
        return _build_line(builder, spec, build_case, line, data)

    def definition(data: dict[str, Any]) -> Mapping[str, Any]:
        return CaseModel.model_validate(data).model_dump(mode="json", exclude_defaults=True)

    file = CaseFile(path, build, definition)
    if not check:
        return StreamedCases(inline, file), []
    stamp = file_stamp(path)
    if check == "background" and stamp[0] >= BACKGROUND_BYTES and fork_available():
        return _background(file, stamp, inline, llm_enabled=llm_enabled)
    totals, samples, _, problems = _check(file, inline, llm_enabled=llm_enabled)
    checked = replace(file, stamp=stamp, totals=totals, samples=samples)
    return StreamedCases(inline, checked), problems


def _background(
    file: CaseFile, stamp: tuple[int, int], inline: tuple[Case, ...], *, llm_enabled: bool
) -> tuple[StreamedCases, list[Problem]]:
    """The first lines checked now (their problems reported before anything runs), the whole file in a child."""
    stamped = replace(file, stamp=stamp)
    first, samples, _, problems = _check(stamped, inline, llm_enabled=llm_enabled, limit=PREFIX_LINES)
    if problems:
        return StreamedCases(inline, stamped), problems

    def whole() -> CheckOutcome:
        totals, _, lines, found = _check(stamped, inline, llm_enabled=llm_enabled)
        return CheckOutcome(totals, lines, found)

    counted = count_cases(file.path, _skipped)
    pending = BackgroundCheck(whole, file.path)
    return StreamedCases(
        inline, replace(stamped, samples=samples, pending=pending, counted=counted, estimate=first)
    ), []


def _skipped(raw: bytes) -> bool:
    """Whether a raw line is a case marked ``skip: true`` (a line that does not parse is not)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("skip") is True


def fork_available() -> bool:
    """True where a check can run in a forked child (Linux, macOS)."""
    return hasattr(os, "fork")


def _build_line(
    builder: JudgeBuilder, spec: SuiteModel, build_case: BuildCase, line: CaseLine, data: dict[str, Any]
) -> Case:
    """One line of the cases file, validated and built.

    Raises:
        SuiteError: what is wrong with it, at its file and line.
    """
    try:
        model = CaseModel.model_validate(data)
    except ValidationError as exc:
        raise SuiteError([_problem(line, error) for error in exc.errors()]) from None
    if model.trials is not None:  # each trial is a case of the plan: a streamed plan cannot hold them yet
        raise SuiteError([Problem(line.file, line.line, "trials", "trials: are not supported in a cases_file yet")])
    outer, before = builder.doc, len(builder.problems)
    builder.doc = Located(data, {(): line.line}, line.file)  # every field of the case is on its line
    try:
        case = build_case(builder, spec, 0, model, path=())
    finally:
        builder.doc = outer
    found = builder.problems[before:]
    del builder.problems[before:]
    if found or case is None:
        raise SuiteError(found or [Problem(line.file, line.line, "", "the case could not be built")])
    return case


def _problem(line: CaseLine, error: Any) -> Problem:
    path: PathKey = tuple(part for part in error["loc"] if isinstance(part, str | int))
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    elif error["type"] == "missing":
        message = "required field is missing"
    return Problem(line.file, line.line, format_path(path), message.removeprefix("Value error, "))


def _check(
    file: CaseFile, inline: tuple[Case, ...], *, llm_enabled: bool, limit: int | None = None
) -> tuple[PlanTotals, tuple[Case, ...], tuple[CaseLine, ...], list[Problem]]:
    """Build every line once (the first ``limit``): the plan's totals, a sample of judges (as cases and
    as lines), and every problem (up to a limit)."""
    problems: list[Problem] = []
    more = 0
    cases = lines = fewest = most = skipped = 0
    samples: dict[tuple[tuple[str, str, str], ...], tuple[Case, CaseLine]] = {}
    hashes = _NameHashes()
    for case in inline:
        hashes.add(case.name)
    numbered = file.lines() if limit is None else itertools.islice(file.lines(), limit)
    for number, text in numbered:
        lines += 1
        try:
            data = file.parse(number, text)
            line = file.line_of(number, text, data)
            case = file.build(line, data)
        except SuiteError as exc:
            room = MAX_PROBLEMS - len(problems)
            problems.extend(exc.problems[:room])
            more += max(0, len(exc.problems) - room)
            continue
        hashes.add(case.name)
        signature = tuple((j.tier, j.key, j.label) for j in case.judges)
        if signature not in samples and len(samples) < MAX_SAMPLES:
            samples[signature] = (case, line)
        if case.skip:
            continue
        cases += 1
        plan = case_plan(case, llm_enabled=llm_enabled)
        fewest += plan.min_calls
        most += plan.max_calls
        skipped += len(plan.skipped)
    if more:
        problems.append(Problem(str(file.path), None, "", f"and {more} more problem(s) in this file"))
    problems.extend(_duplicates(file, inline, hashes.colliding(), limit))
    kept = samples.values()
    totals = PlanTotals(cases, lines, fewest, most, skipped)
    return totals, tuple(case for case, _ in kept), tuple(line for _, line in kept), problems


class _NameHashes:
    """Each name's hash in 256 buckets of 8-byte integers: duplicates found at 8 bytes a name, not a set of names."""

    def __init__(self) -> None:
        self._buckets = [array("q") for _ in range(_BUCKETS)]

    def add(self, name: str) -> None:
        value = hash(name)
        self._buckets[value % _BUCKETS].append(value)

    def colliding(self) -> set[int]:
        """Hashes seen more than once (a duplicate name, or rarely two names with one hash)."""
        found: set[int] = set()
        for bucket in self._buckets:
            seen: set[int] = set()  # one bucket at a time: 1/256 of the names
            for value in bucket:
                if value in seen:
                    found.add(value)
                seen.add(value)
        return found


def _duplicates(file: CaseFile, inline: Iterable[Case], colliding: set[int], limit: int | None = None) -> list[Problem]:
    """A problem for each name given twice (a second pass, over the few names whose hashes collided)."""
    if not colliding:
        return []
    first: dict[str, str] = {}
    problems: list[Problem] = []
    for case in inline:
        if hash(case.name) in colliding:
            first.setdefault(case.name, f"the suite file, line {case.line}")
    for number, text in file.lines() if limit is None else itertools.islice(file.lines(), limit):
        try:
            name = file.parse(number, text).get("name")
        except SuiteError:
            continue
        if not isinstance(name, str) or hash(name) not in colliding:
            continue
        if name in first:
            if len(problems) < MAX_PROBLEMS:
                problems.append(
                    Problem(str(file.path), number, "name", f"duplicate case name {name!r} (first at {first[name]})")
                )
        else:
            first[name] = f"line {number}"
    return problems
