"""Garbage-collector settings for a process that loads one big suite and then runs it.

A loaded suite (cases, judges, templates) lives for the whole run, so every
collection that rescans it is wasted work: on 10,000 cases the collector took
about half the runner's CPU. These context managers are for processes that
own their lifetime, such as ``jurybox run``; a library caller keeps its own
collector settings.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

RUN_GEN0_THRESHOLD = 20_000
"""Allocations between young-generation passes during a run (CPython's default is 700)."""


@contextmanager
def paused_collector(threshold: int = RUN_GEN0_THRESHOLD) -> Iterator[None]:
    """Fewer collections while a suite is built (what is allocated then is mostly kept), one at the end.

    The final full collection frees the cyclic garbage building judges leaves
    behind (schema generation makes plenty), so it is not carried through the run.
    What was alive on entry (the imported modules: most of a 200-case run's heap) is
    frozen meanwhile, unless the process keeps a frozen heap of its own: that
    collection then walks only what the suite's loading made (it took 40 ms of a
    200-case `jurybox run`, and freed nothing the modules held).
    """
    froze = not gc.get_freeze_count()
    if froze:
        gc.freeze()
    try:
        with _young_threshold(threshold):
            yield
    finally:
        gc.collect()
        if froze:
            gc.unfreeze()


@contextmanager
def frozen_heap(threshold: int = RUN_GEN0_THRESHOLD) -> Iterator[None]:
    """Run with everything alive now (modules, the loaded suite) left out of collections.

    Objects that exist on entry are moved to the permanent generation
    (``gc.freeze``) and the young-generation threshold is raised, so the
    collector only looks at what the run itself allocates, and less often.
    Both are undone on exit. A process that keeps a frozen heap of its own (a server's preloaded
    application, a test session's modules) keeps it: ``gc.unfreeze`` would thaw that too, so only
    the threshold is raised.
    """
    if gc.get_freeze_count():
        with _young_threshold(threshold):
            yield
        return
    gc.freeze()
    try:
        with _young_threshold(threshold):
            yield
    finally:
        gc.unfreeze()


@contextmanager
def _young_threshold(threshold: int) -> Iterator[None]:
    """The young generation collected every ``threshold`` allocations, the older ones as they were."""
    previous = gc.get_threshold()
    gc.set_threshold(threshold, previous[1], previous[2])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def freeze_for_life(threshold: int = RUN_GEN0_THRESHOLD) -> None:
    """``frozen_heap`` never undone: for a process that lives for one run only (a Ray actor, say)."""
    gc.freeze()
    gc.set_threshold(threshold, *gc.get_threshold()[1:])
