"""Stores for the dashboard's tests and screenshots: real runs of the example suite, plus hostile records.

``build_store(folder)`` makes one SQLite store holding:

* two real ``jurybox run``s of ``examples/property_agent/suite.yaml``; the second
  runs a copy of the suite with two expectations changed, so it has a failing
  single-turn case and a failing multi-round case (round 2) to read and compare;
* a suite whose name, case names, tags, prompts, replies, tool arguments and
  results, follow-ups, reasoning, raw model output, errors, judge model and git
  branch are hostile HTML / JavaScript; six runs of it, the last one a
  regression, so the gate writes a lesson full of hostile text;
* a run that is still running (two of its three cases recorded).

Built once per test session (each real run takes a few seconds).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
import yaml

from jurybox.core import CaseRecord, Check, Context, Judgment, RoundRecord, Status
from jurybox.store import Store, open_store
from jurybox.web import WebSettings, create_app

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "examples" / "property_agent" / "suite.yaml"

MARK = "window.__xss=1"
"""What every planted payload tries to run: a test reads ``window.__xss`` afterwards."""

PAYLOADS = (
    f"<script>{MARK}</script>",
    f'"><img src=x onerror="{MARK}">',
    f"javascript:{MARK}",
    f"'><svg onload={MARK}>",
    f'</textarea></pre><iframe src="javascript:{MARK}"></iframe>',
    "{{7*7}} ${7*7} <!--",
)
HOSTILE = " ".join(PAYLOADS)
HOSTILE_SUITE = f"xss <script>{MARK}</script>"


@dataclass(frozen=True)
class WebStore:
    """What ``build_store`` made, by id."""

    url: str
    path: Path
    example_runs: tuple[str, str]
    """The two real runs of the example suite, oldest first; the second has failing cases."""
    failing_case: str
    """A multi-round case that fails (in round 2) in the second example run."""
    hostile_runs: tuple[str, ...]
    """Runs of the hostile suite, oldest first; the last one regressed and has a lesson."""
    running_run: str
    hostile_case_names: tuple[str, ...]


def run_jurybox(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> None:
    """``jurybox run ARGS --no-progress`` in a child process, as a user starts it; raises if the run broke."""
    environ = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1", **(env or {}))
    done = subprocess.run(
        [sys.executable, "-m", "jurybox", "run", *args, "--no-progress"],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # 0: every case passed; 1: some did not. Anything else is a broken run.
    if done.returncode not in (0, 1):
        raise RuntimeError(f"jurybox run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _run_example(suite_file: Path, store_url: str) -> None:
    run_jurybox(str(suite_file), "--store", store_url)


def changed_suite(folder: Path) -> Path:
    """A copy of the example suite with two expectations the agent does not meet."""
    data = yaml.safe_load(SUITE.read_text())
    data["seeds"] = str(SUITE.parent / data["seeds"])
    for case in data["cases"]:
        if case["name"] == "counts-listings":
            case["judges"] = [{"matches": "\\b4 listings\\b"}]
        if case["name"] == "bookings-then-listing-without-revival":
            case["rounds"][1]["judges"] = [{"contains": "upcoming bookings for the Beach House"}]
    path = folder / "suite-changed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def hostile_record(name: str, *, passed: bool) -> CaseRecord:
    """A two-round case whose every text field is hostile; the second round abstains with raw model output."""
    context = Context(
        input=HOSTILE,
        output=HOSTILE,
        expected=HOSTILE,
        messages=[{"role": "user", "content": HOSTILE}, {"role": "assistant", "content": HOSTILE}],
        tool_calls=[
            {"name": f"lookup{PAYLOADS[0]}", "arguments": {"q": HOSTILE, HOSTILE: [HOSTILE]}, "result": HOSTILE}
        ],
        sources=[HOSTILE],
        metadata={"note": HOSTILE, "revived": True},
    )
    deterministic = Judgment.passed(
        1.0, HOSTILE, judge=f"contains{PAYLOADS[1]}", checks=[Check(HOSTILE, True, HOSTILE)]
    )
    if passed:
        llm = Judgment.passed(0.9, HOSTILE, judge="llm_judge", metadata={"raw": HOSTILE, "threshold": 0.7})
        verdict = Judgment.passed(
            0.9,
            HOSTILE,
            judge="cascade",
            decided_by="llm_judge",
            children={"deterministic": deterministic, "llm_judge": llm},
        )
    else:
        llm = Judgment.abstained(HOSTILE, judge="llm_judge", metadata={"raw": HOSTILE, "raw_replies": [HOSTILE]})
        verdict = Judgment(
            Status.ABSTAIN,
            reasoning=HOSTILE,
            judge="cascade",
            decided_by="llm_judge",
            children={"deterministic": deterministic, "llm_judge": llm},
            metadata={"skipped": [HOSTILE]},
        )
    first = RoundRecord(0, HOSTILE, context, deterministic, follow_ups=((HOSTILE, HOSTILE),))
    second = RoundRecord(1, HOSTILE, context, verdict)
    return CaseRecord(
        name,
        verdict,
        rounds=(first, second),
        context=context,
        duration=1.5,
        tokens=120,
        cost=0.0004,
        judge_calls=1,
        tags=(HOSTILE, "safe-tag"),
        error=None if passed else HOSTILE,
        metadata={"note": HOSTILE, "skipped_tiers": {HOSTILE: HOSTILE}},
    )


def plant_hostile(store: Store) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Six runs of a hostile suite (the last one regresses, so a lesson is written); returns run ids and case names."""
    names = (f"case {PAYLOADS[0]}", f"case {PAYLOADS[1]}", f"javascript:{MARK}", "plain case")
    runs = []
    for index in range(6):
        regressed = index == 5
        run_id = store.runs.begin(
            HOSTILE_SUITE,
            cases={name: {"prompt": HOSTILE, "description": HOSTILE} for name in names},
            judge_model=f"model{PAYLOADS[1]}"[:200],
            git_commit="<b>deadbeef",
            agent_version=PAYLOADS[0],
            config={"git_branch": PAYLOADS[1], "suite_file": HOSTILE},
        )
        records = [hostile_record(name, passed=not regressed or name == "plain case") for name in names]
        store.results.record_many(run_id, records)
        store.finish_run(run_id, "completed")
        runs.append(run_id)
    plant_hostile_calibration(store, runs[-1])
    return tuple(runs), names


def plant_hostile_calibration(store: Store, run_id: str) -> None:
    """A calibration (id 1 in a new store) whose every text is hostile, and its note on ``run_id``'s page."""
    identity = {"name": HOSTILE, "key": "hostile", "kind": PAYLOADS[0], "model": PAYLOADS[1], "template_hash": HOSTILE}
    overall = {
        "counts": {HOSTILE: 1},
        "figures": {HOSTILE: {"value": 0.5, "low": 0.1, "high": 0.9}},
        "confusion": {"rows": [HOSTILE], "columns": [HOSTILE], "counts": [[1]]},
    }
    disagreement = {key: HOSTILE for key in ("id", "human", "judge", "reasoning", "input", "output")}
    calibration_id = store.calibrations.save(
        {**identity, "settings": {"prompt": HOSTILE}},
        figures={"kind": HOSTILE, "n": 4, "tpr": 0.75, "tnr": 0.75, "positives": 2, "negatives": 2},
        calibration={"overall": overall, "disagreements": [{**disagreement, "tags": [HOSTILE]}]},
        dataset=HOSTILE,
    )
    note = {"judge": HOSTILE, "key": "hostile", "status": "corrected", "passed": 1, "decided": 2, "corrected": 0.5}
    note |= {"low": 0.1, "high": 0.9, "calibration_id": calibration_id, "dataset": HOSTILE}
    store.runs.update_config(run_id, {"calibrations": [note]})


def plant_running(store: Store) -> str:
    """A run still being written: three cases planned, two recorded, never finished."""
    run_id = store.runs.begin("live-suite", cases={"one": {}, "two": {}, "three": {}}, judge_model="fake")
    for name in ("one", "two"):
        store.results.record(run_id, CaseRecord(name, Judgment.passed(1.0, "ok", judge="contains"), duration=0.1))
    return run_id


def build_store(folder: Path) -> WebStore:
    """The whole test store in ``folder`` (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "web.db"
    url = f"sqlite:///{path}"
    _run_example(SUITE, url)
    _run_example(changed_suite(folder), url)
    with open_store(url) as store:
        example = store.runs.newest("property-agent")
        first, second = example[-1].id, example[0].id
        hostile_runs, names = plant_hostile(store)
        running = plant_running(store)
    return WebStore(
        url=url,
        path=path,
        example_runs=(first, second),
        failing_case="bookings-then-listing-without-revival",
        hostile_runs=hostile_runs,
        running_run=running,
        hostile_case_names=names,
    )


def load_store(path: Path) -> WebStore:
    """The ``WebStore`` of a store ``build_store`` made before (``JURYBOX_WEB_TEST_STORE``: quick local runs)."""
    url = f"sqlite:///{path}"
    with open_store(url) as store:
        example = store.runs.newest("property-agent")
        hostile = store.runs.newest(HOSTILE_SUITE)
        running = store.runs.newest("live-suite")
    names = tuple(o.case for o in _outcomes(url, hostile[0].id))
    return WebStore(
        url=url,
        path=path,
        example_runs=(example[-1].id, example[0].id),
        failing_case="bookings-then-listing-without-revival",
        hostile_runs=tuple(run.id for run in reversed(hostile)),
        running_run=running[0].id,
        hostile_case_names=names,
    )


def _outcomes(url: str, run_id: str) -> list[Any]:
    with open_store(url) as store:
        return list(store.results.outcomes(run_id))


class DashboardServer:
    """The dashboard served by uvicorn in a thread, on a free port of 127.0.0.1."""

    def __init__(self, url: str, refresh_seconds: int = 5, settings: WebSettings | None = None) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        app = create_app(url, settings=settings or WebSettings(refresh_seconds=refresh_seconds))
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the dashboard did not start")
            time.sleep(0.02)
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
