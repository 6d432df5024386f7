"""``frozen_heap``: a run's heap frozen while it runs, thawed after; a heap the process froze itself stays frozen."""

from __future__ import annotations

import gc

from jurybox.core import frozen_heap
from jurybox.core._gc import RUN_GEN0_THRESHOLD


def test_a_heap_nobody_froze_is_frozen_for_the_run_and_thawed_after() -> None:
    gc.unfreeze()  # the test session keeps its heap frozen (tests/conftest.py): thawed for this test only
    try:
        thresholds = gc.get_threshold()
        with frozen_heap():
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold() == (RUN_GEN0_THRESHOLD, *thresholds[1:])
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
    finally:
        gc.freeze()


def test_a_heap_the_process_froze_itself_stays_frozen() -> None:
    gc.freeze()  # as a server that preloads its application does (a no-op here: the session froze its heap)
    frozen, thresholds = gc.get_freeze_count(), gc.get_threshold()
    with frozen_heap():
        assert gc.get_threshold()[0] == RUN_GEN0_THRESHOLD  # fewer young collections all the same
    # gc.unfreeze() would have thawed the process's own heap too (the count only drops, as frozen objects die).
    assert 0 < gc.get_freeze_count() <= frozen
    assert gc.get_threshold() == thresholds
