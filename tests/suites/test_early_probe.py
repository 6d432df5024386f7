"""The judge server's check starts while the suite loads (``prepare(check_servers=True)``) and is asked once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox._cli.run import EXIT_USAGE
from jurybox.cli import app
from jurybox.models import ProbeTarget
from jurybox.runs import RunRequest, prepare
from jurybox.runs._early_probe import EarlyProbes, probe_key, probe_with
from jurybox.stubs import StubServer

SUITE = """\
name: early
agent: {{python: "echo_agent:respond"}}
judge_model: "{model}"
cases:
{cases}"""


def write_suite(folder: Path, model: str, cases: int = 3) -> Path:
    (folder / "echo_agent.py").write_text("def respond(message, session_id):\n    return message\n")
    lines = "".join(
        f"  - name: c{index}\n    prompt: hi {index}\n    judges: [{{correctness: {{reference: hi}}}}]\n"
        for index in range(cases)
    )
    path = folder / "suite.yaml"
    path.write_text(SUITE.format(model=model, cases=lines))
    return path


@pytest.fixture(autouse=True)
def _environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")


def test_the_check_starts_before_the_cases_are_built_and_the_server_is_asked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubServer("openai", reply='{"score": 1, "reasoning": "ok"}', latency=0.2) as stub:
        suite = write_suite(tmp_path, f"openai:m@{stub.base_url}", cases=50)
        asked_while_loading: list[bool] = []
        from jurybox.suites import _loader

        building = _loader._build_case

        def build_case(*args: object, **kwargs: object) -> object:
            # The first case is built after the model: its check must be in flight already.
            if not asked_while_loading:
                asked_while_loading.append(any(t.name == "jurybox-early-probe" for t in threading.enumerate()))
            return building(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(_loader, "_build_case", build_case)
        prepared = prepare(RunRequest(suites=(suite,), no_store=True), check_servers=True)
        with prepared:
            checked = prepared.preflight()
        gets = [r for r in stub.requests if r.method == "GET"]
    assert asked_while_loading == [True]
    assert checked.problems == [] and checked.cache_only == []
    assert len(gets) == 1 and gets[0].path.endswith("/models")


def test_a_server_down_found_early_is_the_same_one_line_problem(tmp_path: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    suite = write_suite(tmp_path, f"openai:m@{url}")
    with prepare(RunRequest(suites=(suite,), no_store=True), check_servers=True) as prepared:
        assert prepared.early_probes is not None
        checked = prepared.preflight()
    assert checked.problems == [f"judge model openai:m: connection refused at {url}: is the server running?"]


def test_without_check_servers_nothing_is_asked_while_loading(tmp_path: Path) -> None:
    with StubServer("openai", reply="ok") as stub:
        suite = write_suite(tmp_path, f"openai:m@{stub.base_url}")
        with prepare(RunRequest(suites=(suite,), no_store=True)) as prepared:
            assert prepared.early_probes is None
        assert stub.requests == []


def test_a_dry_run_asks_no_server(tmp_path: Path) -> None:
    with StubServer("openai", reply="ok") as stub:
        suite = write_suite(tmp_path, f"openai:m@{stub.base_url}")
        result = CliRunner().invoke(app, ["run", str(suite), "--dry-run"])
        assert result.exit_code == 0, result.output
        assert stub.requests == []


def test_a_refused_key_found_early_stops_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-early")
    with StubServer("openai", reply="ok") as stub:
        stub.fail(401, times=1)
        suite = write_suite(tmp_path, f"openai:m@{stub.base_url}")
        result = CliRunner().invoke(app, ["run", str(suite), "--no-store"])
        posts = [r for r in stub.requests if r.method == "POST"]
        gets = [r for r in stub.requests if r.method == "GET"]
        url = stub.base_url
    assert result.exit_code == EXIT_USAGE, result.output
    assert f"401 Unauthorized at {url}: check OPENAI_API_KEY" in result.output
    assert "sk-early" not in result.output
    assert posts == [] and len(gets) == 1


async def test_answers_checked_early_are_taken_and_the_rest_asked(closed_port: int) -> None:
    down = f"http://127.0.0.1:{closed_port}/v1"
    early = EarlyProbes(timeout=2.0)
    with StubServer("openai", reply="ok") as up, StubServer("openai", reply="ok") as other:
        early_target = ProbeTarget(url=up.base_url, check_url=f"{up.base_url}/models", label="judge model a")

        class Provider:
            def probe_target(self) -> ProbeTarget:
                return early_target

        early.start(Provider())
        early.start(Provider())  # the same server: one check
        late = ProbeTarget(url=other.base_url, check_url=f"{other.base_url}/models", label="judge model b")
        gone = ProbeTarget(url=down, check_url=f"{down}/models", label="judge model c")
        relabelled = ProbeTarget(url=up.base_url, check_url=f"{up.base_url}/models", label="another label")
        failed = await probe_with([relabelled, late, gone, gone], early, timeout=2.0)
        assert [len([r for r in s.requests if r.method == "GET"]) for s in (up, other)] == [1, 1]
    assert [(target.label, problem.split(":")[0]) for target, problem in failed] == [
        ("judge model c", "connection refused at http")
    ]
    assert probe_key(relabelled) == probe_key(early_target)


def test_a_model_without_a_server_is_not_checked() -> None:
    early = EarlyProbes()
    early.start(object())
    early.start("openai:gpt-4o-mini")
    assert early.answered(ProbeTarget(url="u", check_url="u/models")) == (False, None)


# Runs `jurybox run` with each start-up mark also saying whether the store's modules are loaded yet.
MARKING = """\
import sys

from jurybox._cli import startup

marking = startup.mark


def mark(phase):
    loaded = "jurybox.store._store" in sys.modules
    print(f"mark {phase}: store loaded {loaded}", file=sys.stderr)
    marking(phase)


startup.mark = mark
from jurybox.cli import main

sys.argv[0] = "jurybox"
main()
"""


def _startup_phases(stderr: str) -> list[str]:
    """The phase names of ``start-up 0.71 s: imports 0.36 s, suites read 0.15 s, ...`` (always one line)."""
    line = next((line for line in stderr.splitlines() if line.startswith("start-up ")), None)
    assert line is not None, stderr
    return [part.rsplit(" ", 2)[0] for part in line.split(": ", 1)[1].split(", ")]


@pytest.mark.parametrize("store", [True, False])
def test_run_v_times_the_store_import_apart_from_the_server_check(tmp_path: Path, store: bool) -> None:
    # A process of its own: the phases' clock starts with the process, and the store's modules
    # are loaded only where the run loads them, not by an earlier test.
    with StubServer("openai", reply='{"score": 1, "reasoning": "ok"}') as stub:
        suite = write_suite(tmp_path, f"openai:m@{stub.base_url}", cases=2)
        (tmp_path / "marking.py").write_text(MARKING)
        where = ["--store", f"sqlite:///{tmp_path / 'runs.db'}"] if store else ["--no-store"]
        done = subprocess.run(
            [sys.executable, "marking.py", "run", str(suite), "-v", "--no-progress", *where],
            check=False,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": "60", "NO_COLOR": "1"},  # narrow: the line must not wrap anyway
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    marks = [line for line in done.stderr.splitlines() if line.startswith("mark ")]
    if store:
        assert _startup_phases(done.stderr) == [
            "imports",
            "suites read",
            "store code loaded",
            "servers checked",
            "store opened",
        ]
        # The store's import is in its own phase: not before it, and done by its end.
        assert marks[:3] == [
            "mark imports: store loaded False",
            "mark suites read: store loaded False",
            "mark store code loaded: store loaded True",
        ]
    else:
        assert _startup_phases(done.stderr) == ["imports", "suites read", "servers checked", "store opened"]
        assert all(line.endswith("store loaded False") for line in marks), marks
