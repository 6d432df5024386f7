"""Cases kept in a JSON Lines file (``cases_file:``), read a line at a time so a run of any size holds none of them.

A suite of a million cases does not fit in memory once built (a built case,
with its judges, costs kilobytes), and nothing in a run needs them all at once:
the runner hands cases to its executor one by one. So a suite's ``cases_file``
stays on disk. ``StreamedCases`` is the suite's case sequence: the inline cases
first, then each line of the file, parsed and built when the run reaches it
and dropped once judged. Views of it (a ``--filter``, the cases a resume still
needs, every N-th case for a worker process) are lazy too.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, overload

from jurybox.core import InputLimitError, read_json
from jurybox.suites._case import Case, name_matches
from jurybox.suites._case_file_check import BackgroundCheck
from jurybox.suites._errors import Problem, SuiteError

MAX_LINE_BYTES = 1024 * 1024
"""The longest case line read: a case is a prompt, its judges and a reference, not a data set."""


@dataclass(frozen=True, slots=True)
class CaseLine:
    """One case of a cases file, as written: where it is, its JSON text and its name.

    What travels to a Ray actor for a streamed case: the actor builds it (a built case holds
    judges and model clients that cannot be sent).
    """

    file: str
    line: int
    text: str
    name: str


@dataclass(frozen=True, slots=True)
class PlanTotals:
    """What the load's check pass counted over the file's cases (those not marked ``skip``)."""

    cases: int = 0
    lines: int = 0
    """Cases in the file, ``skip`` ones included."""
    min_calls: int = 0
    max_calls: int = 0
    skipped_judges: int = 0


@dataclass
class CaseFile:
    """A suite's cases file and how to turn one of its lines into a case.

    Args:
        path: The JSON Lines file.
        build: Builds one parsed line into a case (raises ``SuiteError`` naming the line).
        spec: One parsed line as the store keeps it (the case's normalised definition).
        stamp: The file's size and modification time when it was checked; a run refuses a file changed since.
    """

    path: Path
    build: Callable[[CaseLine, dict[str, Any]], Case]
    spec: Callable[[dict[str, Any]], Mapping[str, Any]]
    stamp: tuple[int, int] | None = None
    totals: PlanTotals | None = None
    """Counted by the check pass for the whole file (None when the suite was loaded unchecked, as in an actor)."""
    samples: tuple[Case, ...] = ()
    """One built case per distinct set of judges, for what needs to see the suite's judges (calibration, preflight)."""
    pending: BackgroundCheck | None = None
    """The check pass still running in a child process (``check_cases_file="background"``); None once settled."""
    counted: tuple[int, int] | None = None
    """(cases not marked ``skip``, lines) counted without building while ``pending`` runs."""
    estimate: PlanTotals | None = None
    """The totals of the lines checked before the run started (the first ``PREFIX_LINES``), while ``pending`` runs."""
    problems: tuple[Problem, ...] = ()
    """What the background check found (set by ``settle``)."""

    def settle(self) -> tuple[Problem, ...]:
        """Wait for the background check (if any), take its totals and samples; its problems.

        Call it on the thread that builds cases (the samples are built here). Idempotent.
        """
        pending = self.pending
        if pending is None:
            return self.problems
        outcome = pending.wait()
        self.pending = None
        self.problems = tuple(outcome.problems)
        if isinstance(outcome.totals, PlanTotals) and not outcome.problems:
            samples = []
            for line in outcome.samples:
                assert isinstance(line, CaseLine)
                samples.append(self.build_line(line))
            self.samples = tuple(samples)
            self.totals = outcome.totals
        return self.problems

    def lines(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every non-blank line.

        Raises:
            SuiteError: the file cannot be read, is not UTF-8, changed since it was checked, or has an overlong line.
        """
        name = str(self.path)
        try:
            if self.stamp is not None and _stamp(self.path) != self.stamp:
                raise SuiteError.at(name, None, "", "the cases file changed since the suite was loaded; run again")
            handle = self.path.open("rb")
        except OSError as exc:
            raise SuiteError.at(name, None, "", f"cannot read cases file: {exc}") from exc
        with handle:
            for number, raw in enumerate(handle, start=1):
                if len(raw) > MAX_LINE_BYTES:
                    raise SuiteError.at(name, number, "", f"a case line is over {MAX_LINE_BYTES // 1024} KB; split it")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise SuiteError.at(name, number, "", f"not UTF-8 text ({exc.reason})") from exc
                if text.strip():
                    yield number, text

    def parse(self, number: int, text: str) -> dict[str, Any]:
        """One line's case mapping.

        Raises:
            SuiteError: the line is not a JSON object, or is nested too deep.
        """
        name = str(self.path)
        try:
            data = read_json(text)
        except InputLimitError as exc:
            raise SuiteError.at(name, number, "", str(exc)) from None
        except ValueError as exc:
            raise SuiteError.at(name, number, "", f"invalid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SuiteError.at(name, number, "", "each line of a cases file is one case: a JSON object with 'name'")
        return data

    def line_of(self, number: int, text: str, data: Mapping[str, Any]) -> CaseLine:
        raw_name = data.get("name")
        return CaseLine(str(self.path), number, text, raw_name if isinstance(raw_name, str) else "")

    def build_line(self, line: CaseLine) -> Case:
        """Build a case sent as a line (a Ray actor's work)."""
        return self.build(line, self.parse(line.line, line.text))


def file_stamp(path: Path) -> tuple[int, int]:
    """The size and modification time a run checks the cases file against."""
    return _stamp(path)


def _stamp(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


def _wanted(data: Mapping[str, Any], selectors: Sequence[str]) -> bool:
    if data.get("skip") is True:
        return False
    if not selectors:
        return True
    name = data.get("name")
    tags = data.get("tags")
    tag_list = [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
    return isinstance(name, str) and any(name_matches(name, tag_list, s) for s in selectors)


@dataclass(frozen=True)
class _View:
    """Which cases of the sequence a view keeps: a selection, names to leave out, every N-th."""

    selectors: tuple[str, ...] | None = None
    """None: every case, ``skip`` ones included (the suite's own list); a tuple: ``Suite.select``'s rule."""
    excluded: Collection[str] = frozenset()
    included: Collection[str] | None = None
    """Only these names (the plan of a resumed run), in the file's order."""
    also: tuple[str, ...] | None = None
    """With ``included``: the cases these selectors choose too (the rest of a plan the store did not get whole)."""
    start: int = 0
    step: int = 1


@dataclass(frozen=True)
class StreamedCases(Sequence[Case]):
    """A suite's cases: the inline ones, then those of its cases file, built one at a time as they are reached.

    Iterating builds each streamed case and keeps none; ``len`` counts without building (the
    check pass's count, or one pass that only parses). Indexing walks the sequence: it is for
    tests and small suites, not for a run's loop.
    """

    inline: tuple[Case, ...]
    file: CaseFile
    view: _View = field(default_factory=_View)
    _count: list[int] = field(default_factory=list, compare=False, repr=False)

    # -- views -------------------------------------------------------------------------------------

    def select(self, selectors: Iterable[str] = ()) -> StreamedCases:
        """The cases not marked ``skip`` that match any selector (``Suite.select``), lazily."""
        return StreamedCases(self.inline, self.file, _View(tuple(selectors)))

    def excluding(self, names: Collection[str]) -> StreamedCases:
        """This view without the named cases (those a resumed run already has)."""
        if not names:
            return self
        return StreamedCases(self.inline, self.file, replace(self.view, excluded=names))

    def only(self, names: Collection[str], *, also: Iterable[str] | None = None) -> StreamedCases:
        """The named cases, in the suite's order, ``skip`` or not (a resumed run's plan).

        With ``also``, the cases ``select(also)`` chooses too: a resumed run whose plan was not
        stored whole is its stored plan and the rest of the selection it was started with.
        """
        return StreamedCases(self.inline, self.file, _View(included=names, also=None if also is None else tuple(also)))

    def _strided(self, start: int, step: int) -> StreamedCases:
        view = self.view
        # Counted from this view's count when it is known (a worker's share must not walk the file to count it).
        count = [max(0, -(-(self._count[0] - start) // step))] if self._count else []
        return StreamedCases(
            self.inline, self.file, replace(view, start=view.start + start * view.step, step=view.step * step), count
        )

    @property
    def whole_selection(self) -> bool:
        """True for ``Suite.select()`` with no selector: every case not marked ``skip``, nothing left out."""
        return self.view == _View(())

    # -- walking -----------------------------------------------------------------------------------

    def items(self) -> Iterator[Case | CaseLine]:
        """Each case of the view, unbuilt when it is a line of the file (what the Ray driver sends)."""
        for item, _ in self._walk(build=False):
            yield item

    def names(self) -> Iterator[str]:
        for item, _ in self._walk(build=False):
            yield item.name

    def specs(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(name, definition as stored) of each case: the run's plan, without building a judge."""
        for item, data in self._walk(build=False):
            yield (item.name, item.spec) if isinstance(item, Case) else (item.name, self.file.spec(data))

    def __iter__(self) -> Iterator[Case]:
        for item, _ in self._walk(build=True):
            assert isinstance(item, Case)
            yield item

    def _walk(self, *, build: bool) -> Iterator[tuple[Case | CaseLine, dict[str, Any]]]:
        view = self.view
        excluded, included, selectors, also = view.excluded, view.included, view.selectors, view.also
        position = 0
        nothing: dict[str, Any] = {}
        for case in self.inline:
            if (
                case.name in excluded
                or (
                    included is not None
                    and case.name not in included
                    and (also is None or not _inline_wanted(case, also))
                )
                or (selectors is not None and not _inline_wanted(case, selectors))
            ):
                continue
            if _on_stride(position, view):
                yield case, nothing
            position += 1
        file = self.file
        for number, text in file.lines():
            data = file.parse(number, text)
            name = data.get("name")
            if (
                name in excluded
                or (included is not None and name not in included and (also is None or not _wanted(data, also)))
                or (selectors is not None and not _wanted(data, selectors))
            ):
                continue
            if _on_stride(position, view):
                line = file.line_of(number, text, data)
                yield (file.build(line, data) if build else line), data
            position += 1

    # -- Sequence ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        if not self._count:
            totals = self.file.totals
            counted = (totals.cases, totals.lines) if totals is not None else self.file.counted
            if self.view == _View(()) and counted is not None:
                self._count.append(sum(1 for c in self.inline if not c.skip) + counted[0])
            elif self.view == _View() and counted is not None:
                self._count.append(len(self.inline) + counted[1])
            else:
                self._count.append(sum(1 for _ in self._walk(build=False)))
        return self._count[0]

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Case]: ...

    def __getitem__(self, index: int | slice) -> Case | Sequence[Case]:
        if isinstance(index, slice):
            start, stop, step = index.start or 0, index.stop, index.step or 1
            if stop is None and start >= 0 and step > 0:
                return self._strided(start, step)  # cases[i::n], a worker process's share: lazy
            return tuple(self)[index]
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError("case index out of range")
        found = next(itertools.islice(iter(self), index, None), None)
        if found is None:
            raise IndexError("case index out of range")
        return found

    def __contains__(self, value: object) -> bool:
        return isinstance(value, Case) and any(name == value.name for name in self.names())

    def __bool__(self) -> bool:
        return next(self.names(), None) is not None


def _on_stride(position: int, view: _View) -> bool:
    return position >= view.start and (position - view.start) % view.step == 0


def _inline_wanted(case: Case, selectors: Sequence[str]) -> bool:
    return not case.skip and (not selectors or any(case.matches(s) for s in selectors))


def case_specs(cases: Sequence[Case]) -> Mapping[str, Mapping[str, Any]] | Iterator[tuple[str, Mapping[str, Any]]]:
    """A run's plan for the store: name -> definition, or for a cases file (name, definition) pairs read lazily."""
    if isinstance(cases, StreamedCases):
        return cases.specs()
    return {case.name: case.spec for case in cases}


def remaining_cases(cases: Sequence[Case], done: Collection[str]) -> Sequence[Case]:
    """The cases a run still has to judge: all of them but ``done`` (a lazy view for a cases file)."""
    if isinstance(cases, StreamedCases):
        return cases.excluding(done)
    return [case for case in cases if case.name not in done] if done else cases
