"""A run's records read back from the store batch by batch, so a report of 100,000 cases runs in flat memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from itertools import islice
from typing import Any, TypeVar, cast, overload

from jurybox.core import CaseRecord, Status
from jurybox.store._models import CaseOutcome


class StoredRecords(Sequence[CaseRecord]):
    """The records of one stored run as a sequence that reads the store on every pass.

    Only the case names and statuses stay in memory; iterating streams the
    judgment trees from the store ``batch`` rows at a time. Which cases belong
    is fixed when the sequence is made: a record written later (another process
    resuming the run) does not appear halfway through a report.

    Indexing is a scan (reports iterate; they do not index), so prefer ``for``.

    Args:
        outcomes: The run's case summaries in plan order (``store.results.outcomes``).
        stream: Called with a set of case names, yields the full records of those cases
            (at least) in the same order (``store.results.stream``); records of other
            cases need not be rebuilt.
        cases: Only these cases (None: every recorded case).
    """

    def __init__(
        self,
        outcomes: Sequence[CaseOutcome],
        stream: Callable[[Collection[str]], Iterator[CaseRecord]],
        *,
        cases: Collection[str] | None = None,
    ) -> None:
        kept = [o for o in outcomes if cases is None or o.case in cases]
        self._names = tuple(o.case for o in kept)
        self._statuses = tuple(o.status for o in kept)
        self._stream = stream

    def names(self) -> tuple[str, ...]:
        """The case names, in order."""
        return self._names

    def status_counts(self) -> Counter[Status]:
        """How many records have each status, without reading any judgment tree."""
        return Counter(self._statuses)

    def only(self, names: Collection[str]) -> Iterator[CaseRecord]:
        """The records of these cases (of this sequence), in order, in one pass that rebuilds no other record.

        The pass stops as soon as every one was read.
        """
        wanted = set(names).intersection(self._names)
        return self._read(wanted) if wanted else iter(())

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[CaseRecord]:
        return self._read(set(self._names))

    def _read(self, wanted: set[str]) -> Iterator[CaseRecord]:
        seen: set[str] = set()
        for record in self._stream(wanted):
            if record.case in wanted and record.case not in seen:
                seen.add(record.case)
                yield record
                if len(seen) == len(wanted):
                    return

    @overload
    def __getitem__(self, index: int) -> CaseRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CaseRecord]: ...

    def __getitem__(self, index: int | slice) -> CaseRecord | Sequence[CaseRecord]:
        return scan_item(self, index)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredRecords | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equality reads the store; such a sequence is no dict key

    def __repr__(self) -> str:
        return f"StoredRecords({len(self)} case(s))"


class RunRecords(StoredRecords):
    """Every record of one stored run, holding nothing per case: not even names (a run may have a million).

    Counts come from the database; which records belong is fixed when the sequence is made
    (results written later, by a process resuming the run, are left out by their id).

    Args:
        results: The store's result repository (``store.results``): counts, names and the records.
        run_id: The run.
        batch: Results read at a time on each pass.
    """

    def __init__(self, results: Any, run_id: str, *, batch: int) -> None:
        self._results = results
        self._run_id = run_id
        self._batch = batch
        snapshot: tuple[int, Counter[Status], int] = results.run_snapshot(run_id)
        self._count, self._counts, self._up_to = snapshot

    def names(self) -> tuple[str, ...]:
        """The case names, in order (read when asked: a ranking of the worst cases needs them)."""
        return tuple(self._results.iter_names(self._run_id, up_to=self._up_to))

    def status_counts(self) -> Counter[Status]:
        return Counter(self._counts)

    def only(self, names: Collection[str]) -> Iterator[CaseRecord]:
        wanted = set(names)
        if not wanted:
            return iter(())
        records = self._results.stream(self._run_id, batch=self._batch, cases=wanted, up_to=self._up_to)
        return cast(Iterator[CaseRecord], records)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[CaseRecord]:
        records = self._results.stream(self._run_id, batch=self._batch, up_to=self._up_to)
        return cast(Iterator[CaseRecord], records)

    def __repr__(self) -> str:
        return f"RunRecords({self._run_id}: {len(self)} case(s))"


T = TypeVar("T")


def scan_item(items: Sequence[T], index: int | slice) -> T | list[T]:
    """``items[index]`` for a sequence that can only be iterated: a scan, stopping as soon as it can."""
    if isinstance(index, slice):
        start, stop, step = index.indices(len(items))
        return list(islice(iter(items), start, stop, step))
    position = index + len(items) if index < 0 else index
    if not 0 <= position < len(items):
        raise IndexError(f"index {index} out of range for {len(items)} case(s)")
    return next(islice(iter(items), position, None))
