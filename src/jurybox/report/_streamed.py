"""A streamed report's cases, and the failing-first order every report lists them in.

A report read from the store (``StoredRecords``) keeps no case in memory: its
summaries are made as the records are read (``StreamedSummaries``), and its
failing-first listing is rebuilt from one byte per case, its ``attention_rank``
(``RankedSummaries``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import overload

from jurybox.core import Status
from jurybox.report._case import CaseSummary, summarize_case
from jurybox.store import StoredRecords

PASS_RANK = 4
"""The ``attention_rank`` of a plain pass (not degraded): the last group, the commonest case."""


def attention_rank(case: CaseSummary) -> int:
    """Where a case goes in a failing-first listing: FAIL 0, ERROR 1, ABSTAIN 2, degraded PASS 3, PASS 4."""
    return rank_of(case.status, case.degraded)


def rank_of(status: Status, degraded: bool) -> int:
    """``attention_rank`` of a case with this status, degraded or not."""
    rank = _ATTENTION_RANK.get(status)
    if rank is not None:
        return rank
    return 3 if degraded else PASS_RANK


_ATTENTION_RANK = {Status.FAIL: 0, Status.ERROR: 1, Status.ABSTAIN: 2}


class StreamedSummaries(Sequence[CaseSummary]):
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


class RankedSummaries(Sequence[CaseSummary]):
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
