"""The browser's small LRU cache, and which runs' figures may be kept in it.

Aggregates over a run that is final (completed, interrupted or failed, with a
finish time) do not change until the run is resumed, which reopens it and
clears ``finished_at``. So they are kept keyed by the run id *and* its status
and finish time: a resumed-and-finished run gets a new key, never a stale
entry. A running run is always read live.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from jurybox.store._runs import FINAL_STATUSES

T = TypeVar("T")


def is_final(run: Any) -> bool:
    """True when ``run`` (a ``RunInfo`` or a ``runs`` row) is finished: its figures no longer change."""
    return run.status in FINAL_STATUSES and run.finished_at is not None


def final_key(run: Any) -> tuple[Any, ...]:
    """The part of a cache key that names ``run`` as it is now (a resumed run gets a new one)."""
    return (run.id, run.status, run.finished_at)


class LruCache:
    """A thread-safe LRU of computed aggregates of final runs."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], compute: Callable[[], T], *, keep: bool) -> T:
        """The value under ``key``, computed (and kept, when ``keep``) if missing."""
        if not keep:
            return compute()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                value: T = self._items[key]
                return value
        # Computed outside the lock: two threads may both compute a missing value, and neither blocks the other.
        value = compute()
        self.put(key, value)
        return value

    def peek(self, key: tuple[Any, ...]) -> Any | None:
        """The value under ``key`` (marked as just used), or None when missing."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used entry when full."""
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
