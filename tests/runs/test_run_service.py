"""The run service: a request prepared (files or stored suites, plans, options) and started, as every caller does it."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest
from git_repo import commit_all

from jurybox.core import CaseRecord
from jurybox.executors import RaySettings
from jurybox.models import Spend
from jurybox.runs import NoCasesError, Notice, PreparedRun, RunRequest, RunRequestError, prepare
from jurybox.store import import_suite_file, open_store

AGENT = """
import time

def respond(message, session_id):
    if "slowly" in message:
        time.sleep(0.2)
    return "You have 3 listings."
"""


def write_suite(folder: Path, name: str = "pm-suite", *, slow: int = 0, extra: str = "") -> Path:
    """A suite of a quick smoke case and ``slow`` slow ones, next to its agent file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = ['  - {name: quick, prompt: "How many listings?", tags: [smoke], judges: [{contains: "3 listings"}]}']
    slow_case = '  - {{name: slow-{n}, prompt: "Tell me slowly {n}", judges: [{{contains: "3 listings"}}]}}'
    cases += [slow_case.format(n=n) for n in range(slow)]
    text = f'name: {name}\nagent: {{python: "agent.py:respond"}}\n{extra}cases:\n' + "\n".join(cases) + "\n"
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'runs.db'}"


def test_a_suite_file_is_planned_then_run_in_memory(tmp_path: Path) -> None:
    path = write_suite(tmp_path / "s", slow=2)
    with prepare(RunRequest(suites=(path,), no_store=True)) as prepared:
        [planned] = prepared.suites
        assert planned.suite.name == "pm-suite" and [p.case.name for p in planned.plan.cases] == [
            "quick",
            "slow-0",
            "slow-1",
        ]
        assert prepared.store is None and prepared.skipped == () and planned.resume is None
        [result] = prepared.run()
    assert result.status == "completed" and result.ok and len(result.records) == 3


def test_concurrency_is_the_requests_then_the_suites_then_eight(tmp_path: Path) -> None:
    plain = write_suite(tmp_path / "plain", "plain")
    own = write_suite(tmp_path / "own", "own", extra="concurrency: 3\n")
    with prepare(RunRequest(suites=(plain, own), no_store=True)) as prepared:
        assert [prepared.options(p).concurrency for p in prepared.suites] == [8, 3]
    with prepare(RunRequest(suites=(plain, own), no_store=True, concurrency=5, lessons=0)) as prepared:
        options = [prepared.options(p) for p in prepared.suites]
    assert [o.concurrency for o in options] == [5, 5] and {o.lessons for o in options} == {0}


def test_a_run_records_the_commit_branch_and_dirty_flag_of_the_suites_folder(tmp_path: Path, store_url: str) -> None:
    path = write_suite(tmp_path / "repo")
    commit = commit_all(tmp_path / "repo", branch="eval/nightly")
    path.write_text(path.read_text(encoding="utf-8") + "# changed after the commit\n", encoding="utf-8")
    request = RunRequest(suites=(path,), store=store_url, extra_config={"experiment": "exp-7"})
    with prepare(request) as prepared:
        [result] = prepared.run()
    with open_store(store_url) as store:
        run = store.runs.get(result.run_id)
    assert run.git_commit == commit
    assert run.config["git_branch"] == "eval/nightly" and run.config["git_dirty"] is True
    assert run.config["experiment"] == "exp-7" and run.config["concurrency"] == 8  # the runner's keys are kept


def test_outside_a_repository_a_run_has_no_git_facts(tmp_path: Path, store_url: str) -> None:
    path = write_suite(tmp_path / "plain")
    with prepare(RunRequest(suites=(path,), store=store_url, extra_config={"concurrency": 99})) as prepared:
        [result] = prepared.run()
    with open_store(store_url) as store:
        run = store.runs.get(result.run_id)
    assert run.git_commit is None and not {"git_branch", "git_dirty"} & set(run.config)
    assert run.config["concurrency"] == 8  # extra config never overrides what the runner records


def test_a_stored_suite_runs_from_the_current_directory_and_its_file_goes_with_the_run(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_suite(tmp_path / "project")
    with open_store(store_url) as store:
        import_suite_file(store, path)
    monkeypatch.chdir(tmp_path / "project")  # where the suite was imported from: agent.py resolves here
    with prepare(RunRequest(stored_suites=("pm-suite",), store=store_url)) as prepared:
        [planned] = prepared.suites
        exported = planned.suite.path
        assert exported.is_file() and exported.parent != tmp_path / "project"
        assert planned.suite.base_dir == tmp_path / "project"
        [result] = prepared.run()
        assert prepared.store is not None
    assert result.ok and not exported.exists()


def test_a_stopped_run_says_its_id_at_once_and_resumes_where_it_stopped(tmp_path: Path, store_url: str) -> None:
    path = write_suite(tmp_path / "s", slow=6)
    opened: list[str] = []

    class StopAfterFirst:
        def __init__(self, prepared: PreparedRun) -> None:
            self.prepared = prepared

        def start(self, suite: str, total: int, done: int) -> None:
            assert opened, "the run's id is told before its cases start"

        def case_done(self, record: CaseRecord, spend: Spend) -> None:
            self.prepared.stop()

        def stop(self) -> None:
            pass

    with prepare(RunRequest(suites=(path,), store=store_url, concurrency=1)) as prepared:
        stopped = asyncio.run(prepared.start(progress=StopAfterFirst(prepared), on_open=opened.append))
    assert stopped.status == "interrupted" and opened == [stopped.run_id]
    assert len(stopped.records) < stopped.total_cases == 7

    notices: list[Notice] = []
    with prepare(RunRequest(suites=(path,), store=store_url, resume=stopped.run_id[:12])) as prepared:
        prepared.open(notices.append)
        assert prepared.suites[0].resume == stopped.run_id and notices == []
        resumed = asyncio.run(prepared.start(on_open=opened.append))
    assert resumed.run_id == stopped.run_id and opened == [stopped.run_id] * 2
    assert resumed.status == "completed" and len(resumed.records) == 7 and resumed.resumed == len(stopped.records)


def test_resume_last_without_an_unfinished_run_starts_a_new_one_and_says_so(tmp_path: Path, store_url: str) -> None:
    path = write_suite(tmp_path / "s")
    notices: list[Notice] = []
    with prepare(RunRequest(suites=(path,), store=store_url, resume="last")) as prepared:
        prepared.open(notices.append)
        assert prepared.suites[0].resume is None
    assert notices == [Notice("info", "no unfinished run of suite 'pm-suite' to resume; starting a new run")]


def test_a_run_of_another_suite_is_not_resumed(tmp_path: Path, store_url: str) -> None:
    first = write_suite(tmp_path / "a", "first")
    second = write_suite(tmp_path / "b", "second")
    with prepare(RunRequest(suites=(first,), store=store_url)) as prepared:
        [done] = prepared.run()
    refused = pytest.raises(RunRequestError, match="is a run of suite 'first', not 'second'")
    with prepare(RunRequest(suites=(second,), store=store_url, resume=done.run_id)) as prepared, refused:
        prepared.open()


def test_a_filter_that_matches_nothing_is_refused_and_suites_it_misses_are_left_out(tmp_path: Path) -> None:
    tagged = write_suite(tmp_path / "a", "tagged")
    other = tmp_path / "b" / "suite.yaml"
    write_suite(tmp_path / "b", "other")
    other.write_text(other.read_text(encoding="utf-8").replace("tags: [smoke]", "tags: [deep]"), encoding="utf-8")
    with pytest.raises(NoCasesError) as refused:
        prepare(RunRequest(suites=(tagged,), no_store=True, selectors=("nightly",)))
    assert refused.value.suites == ("tagged",) and refused.value.selectors == ("nightly",)
    assert str(refused.value) == "no case of suite tagged matches --filter nightly"
    with prepare(RunRequest(suites=(tagged, other), no_store=True, selectors=("smoke",))) as prepared:
        assert [p.suite.name for p in prepared.suites] == ["tagged"] and prepared.skipped == ("other",)


def test_two_suites_of_one_name_cannot_run_together(tmp_path: Path) -> None:
    first = write_suite(tmp_path / "a")
    second = write_suite(tmp_path / "b")
    with pytest.raises(RunRequestError, match="are both named 'pm-suite'"):
        prepare(RunRequest(suites=(first, second), no_store=True))
    with pytest.raises(RunRequestError, match="is given twice"):
        prepare(RunRequest(suites=(first, tmp_path / "a" / ".." / "a" / "suite.yaml"), no_store=True))


def test_the_executor_and_its_settings_come_from_the_request(tmp_path: Path, store_url: str) -> None:
    path = write_suite(tmp_path / "s")
    ray = RunRequest(suites=(path,), store=store_url, executor="ray", executor_options={"address": "auto", "actors": 2})
    with prepare(ray) as prepared:
        prepared.open()
        options = prepared.options(prepared.suites[0])
        settings = options.executor_settings
        assert options.executor == "ray" and isinstance(settings, RaySettings)
        # On SQLite the driver writes: the actors open no store of their own.
        assert (settings.address, settings.actors, settings.open_store) == ("auto", 2, None)
        assert settings.load_suite is not None and settings.load_suite().name == "pm-suite"
    with prepare(RunRequest(suites=(path,), store=store_url, executor="processes", concurrency=4)) as prepared:
        options = prepared.options(prepared.suites[0])
        assert options.executor == "processes" and 2 <= options.workers <= 4
    unknown = pytest.raises(RunRequestError, match="did you mean 'ray'")
    with prepare(RunRequest(suites=(path,), store=store_url, executor="rey")) as prepared, unknown:
        prepared.options(prepared.suites[0])
    too_many = pytest.raises(RunRequestError, match="--workers 4 is more than the run's concurrency")
    with prepare(RunRequest(suites=(path,), store=store_url, workers=4, concurrency=2)) as prepared, too_many:
        prepared.options(prepared.suites[0])


def test_tuning_the_collector_leaves_it_as_it_was(tmp_path: Path) -> None:
    path = write_suite(tmp_path / "s")
    thresholds = gc.get_threshold()
    frozen = gc.get_freeze_count()  # the test session's own frozen heap (tests/conftest.py), kept frozen
    with prepare(RunRequest(suites=(path,), no_store=True), tune_gc=True) as prepared:
        assert gc.get_threshold() == thresholds
        [result] = prepared.run()
    assert result.ok and gc.get_threshold() == thresholds
    # Nothing of the run left frozen, nothing thawed (the count only drops, as frozen objects are freed).
    assert (0 < gc.get_freeze_count() <= frozen) if frozen else gc.get_freeze_count() == 0


def test_start_needs_the_suite_named_when_there_are_several(tmp_path: Path) -> None:
    first = write_suite(tmp_path / "a", "first")
    second = write_suite(tmp_path / "b", "second")
    with prepare(RunRequest(suites=(first, second), no_store=True)) as prepared:
        with pytest.raises(RunRequestError, match="name the suite to start: this run has 2"):
            asyncio.run(prepared.start())
        result = asyncio.run(prepared.start(prepared.suites[1]))
    assert result.suite == "second" and result.ok
