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
* Under pytest-xdist with ``--dist loadgroup`` (``scripts/test.sh``), the modules in ``XDIST_GROUPS`` run
  on one worker each, one test after another: see ``pytest_xdist_make_scheduler``.
"""

from __future__ import annotations

import gc
import os
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


# Test modules that run on one worker, in order, under ``-n N --dist loadgroup``: module -> group.
# "ray" and "browser" also keep their modules off each other's time: one Ray (ray.init and `ray start`
# clusters on the 2 CPUs they ask for, and one /tmp/ray/session_latest per machine) and one chromium at a
# time. Every other module here has a module-scoped fixture (a venv with the wheel, an MCP server, a
# store of real runs...): spread over two workers, it would be made twice.
XDIST_GROUPS: dict[str, str] = {
    **dict.fromkeys(
        [
            "tests/suites/test_ray_address.py",
            "tests/suites/test_ray_cluster_join.py",
            "tests/suites/test_ray_executor.py",
            "tests/suites/test_ray_rates.py",
            "tests/test_docs_examples.py",  # docs/scale.md's example starts a local Ray (ray.init)
        ],
        "ray",
    ),
    **dict.fromkeys(["tests/web/test_browser.py", "tests/web/test_browser_day.py"], "browser"),
    **{
        module: module
        for module in [
            "tests/agents/test_agents_mcp.py",
            "tests/agents/test_agents_mcp_http.py",
            "tests/agents/test_bridges_real.py",
            "tests/agents/test_property_agent_seeds.py",
            "tests/judges/test_code_coverage.py",
            "tests/llm/test_llm_injection.py",
            "tests/pytest_plugin/test_secret_recording.py",
            "tests/suites/test_suite_schema.py",
            "tests/test_wheel_install.py",
            "tests/traces/test_capture_frameworks.py",
            "tests/traces/test_phoenix.py",
            "tests/web/test_calibrations_pages.py",
            "tests/web/test_experiment_pages.py",
            "tests/web/test_logins_and_reviews.py",
            "tests/web/test_postgres.py",
            "tests/web/test_production_trends.py",
            "tests/web/test_read_login.py",
            "tests/web/test_review_queue.py",
        ]
    },
}
_SHARED_SCOPES = frozenset({"module", "class", "package"})


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with this file's groups: one work unit per group, every other test alone.

    Not ``xdist_group`` marks: pytest-xdist 3.8 passes them to the controller in the node ids, which
    pytest 9.2 no longer lets it change, so marked tests are spread like any (pytest-xdist issue 1386).
    The controller does not collect; a module path is what it can group by.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist_group mark, once pytest-xdist passes them again
                return nodeid.rsplit("@", 1)[-1]
            return XDIST_GROUPS.get(_module(nodeid), nodeid)

    return ModuleGroupScheduling(config, log)


def _needs_a_group(item: pytest.Item) -> bool:
    if item.get_closest_marker("ray") is not None or item.get_closest_marker("browser") is not None:
        return True
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(defs and defs[-1].scope in _SHARED_SCOPES for defs in definitions.values())


_UNGROUPED = pytest.StashKey[frozenset[str]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Checked where the tests are collected (each xdist worker): a new Ray or browser module, or a new
    # module fixture, goes into XDIST_GROUPS rather than being found out by a flaky or slower CI run.
    if "PYTEST_XDIST_WORKER" not in os.environ or not getattr(config.option, "loadgroup", False):
        return  # a worker's own --dist is "no"; xdist tells it the controller's loadgroup so
    modules = {_module(item.nodeid) for item in items if _needs_a_group(item)}
    config.stash[_UNGROUPED] = frozenset(modules - XDIST_GROUPS.keys())


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A failing test says it (an error raised in a worker's collection reaches the controller as a crash).
    if _module(item.nodeid) in item.config.stash.get(_UNGROUPED, frozenset()):
        pytest.fail(
            f"add {_module(item.nodeid)} to XDIST_GROUPS in tests/conftest.py: it has a ray or browser mark "
            "or a module-scoped fixture, so its tests must run on one worker",
            pytrace=False,
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.passed:
        report.user_properties = [(k, v) for k, v in report.user_properties if k not in _SUMMARY_PROPERTIES]


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that was bound and closed again: connecting to it is refused at once."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port
