"""Fixtures and hooks for every test directory.

* ``snapshot``: the plain-text snapshot check (see tests/snapshot_util.py).
* The test session's heap (every test module, item and import, some 650,000 objects) is frozen once
  collected: a full collection (a run's ``paused_collector``, Python's own every few hundred thousand
  allocations, a library's ``gc.collect()``) then walks what the tests allocate only, not 0.3 s and more
  of long-lived objects each time. Objects a test makes are collected as ever.
* The plugin's summary sections (soft warnings, degraded verdicts, trials) list what a
  user's tests found. This repository's tests make soft checks fail, trials flake and
  verdicts degrade on purpose, and assert that they do: those are not findings of the run,
  so a test that passed leaves them out of the session summary, and a green run of the
  project looks green. A failing test keeps them, for its own diagnosis.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from typing import Any

import pytest

from jurybox.testing import TRIALS_PROPERTY, VERDICT_PROPERTY, WARNING_PROPERTY
from snapshot_util import check_snapshot

_SUMMARY_PROPERTIES = frozenset({TRIALS_PROPERTY, VERDICT_PROPERTY, WARNING_PROPERTY})


@pytest.fixture
def snapshot() -> Callable[[str, str], None]:
    """``snapshot(name, text)``: compare ``text`` with ``tests/snapshots/<name>.txt``.

    With JURYBOX_UPDATE_SNAPSHOTS=1 the file is written instead (see tests/snapshot_util.py).
    """
    return check_snapshot


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.passed:
        report.user_properties = [(k, v) for k, v in report.user_properties if k not in _SUMMARY_PROPERTIES]
