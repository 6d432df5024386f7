"""Runs started from the browser: through the CLI's runner in a server thread, live progress, cancel, resume.

The stored suite's agent is a small Python file relative to the current directory
(as a suite imported from there has it); one case of it is slow, so a run can be
cancelled while it is under way.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import import_suite_file, open_store
from jurybox.web import create_app

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
AGENT = """
import time

def respond(message, session_id):
    if "slowly" in message:
        time.sleep(0.4)
    return "You have 3 listings."
"""


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict[str, str]]]:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "lister.py").write_text(AGENT, encoding="utf-8")
    cases = [
        {"name": "quick", "prompt": "How many listings?", "tags": ["smoke"], "judges": [{"contains": "3 listings"}]}
    ]
    cases += [
        {"name": f"slow-{n}", "prompt": f"Tell me slowly ({n})", "judges": [{"contains": "3 listings"}]}
        for n in range(8)
    ]
    suite = {"name": "pm-suite", "agent": {"python": "agents/lister.py:respond"}, "cases": cases}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:
        import_suite_file(store, tmp_path / "suite.yaml")
        tokens = {
            name: store.users.add_user(name, role)
            for name, role in (("pm.alice", "editor"), ("ada", "admin"), ("vic", "viewer"))
        }
    monkeypatch.chdir(tmp_path)  # where the suite was imported from: its agent file resolves from here
    yield url, tokens


def _client(url: str, token: str) -> TestClient:
    client = TestClient(create_app(url), raise_server_exceptions=False, follow_redirects=False)
    found = CSRF.search(client.get("/login").text)
    assert found is not None
    assert client.post("/login", data={"token": token, "csrf": found.group(1)}).status_code == 303
    return client


def _csrf(client: TestClient) -> str:
    found = CSRF.search(client.get("/suites/pm-suite/edit").text)
    assert found is not None
    return found.group(1)


def _wait(client: TestClient, run_id: str, done: Any, seconds: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        data: dict[str, Any] = client.get(f"/api/runs/{run_id}/progress").json()
        if done(data) or time.monotonic() > deadline:
            return data
        time.sleep(0.1)


def test_a_run_started_in_the_browser_runs_the_stored_suite_with_live_progress(
    stored: tuple[str, dict[str, str]],
) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as client:
        started = client.post(
            "/suites/pm-suite/run", data={"csrf": _csrf(client), "filter": "smoke", "concurrency": "2"}
        )
        assert started.status_code == 303, started.text
        progress = started.headers["location"]
        run_id = progress.split("/")[2]
        finished = _wait(client, run_id, lambda d: not d["launch"]["running"])
        assert finished["run"]["status"] == "completed", finished
        assert finished["run"]["recorded"] == finished["run"]["planned"] == 1
        assert finished["run"]["counts"]["pass"] == 1 and finished["launch"]["started_by"] == "pm.alice"
        page = client.get(progress)
        assert 'id="launch-progress"' in page.text and "cases done" in page.text
        fragment = client.get(progress, headers={"HX-Request": "true", "HX-Target": "launch-progress"})
        assert fragment.text.lstrip().startswith('<section id="launch-progress"')
        entry = client.get("/api/audit").json()["entries"][0]
        assert entry["action"] == "run.start" and entry["detail"]["run"] == run_id
    with open_store(url) as store:
        assert [r.case for r in store.run_records(run_id)] == ["quick"]


def test_cancel_stops_a_run_like_ctrl_c_and_the_browser_resumes_it(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as client:
        csrf = _csrf(client)
        started = client.post("/suites/pm-suite/run", data={"csrf": csrf, "concurrency": "1"})
        assert started.status_code == 303, started.text
        run_id = started.headers["location"].split("/")[2]
        running = _wait(client, run_id, lambda d: d["run"]["recorded"] >= 1)
        assert running["launch"]["running"], running
        live = client.get(started.headers["location"]).text
        assert "hx-trigger=" in live and "Cancel" in live
        cancelled = client.post(f"/runs/{run_id}/cancel", data={"csrf": csrf})
        assert cancelled.status_code == 303
        stopped = _wait(client, run_id, lambda d: not d["launch"]["running"])
        assert stopped["run"]["status"] == "interrupted", stopped
        assert stopped["run"]["recorded"] < stopped["run"]["planned"] == 9
        assert stopped["resumable"] and stopped["resume_command"] == f"jurybox run --suite pm-suite --resume {run_id}"
        assert client.post(f"/runs/{run_id}/cancel", data={"csrf": csrf}).status_code == 409
        resumed = client.post("/suites/pm-suite/run", data={"csrf": csrf, "resume": run_id, "concurrency": "4"})
        assert resumed.status_code == 303 and resumed.headers["location"] == f"/runs/{run_id}/progress"
        done = _wait(client, run_id, lambda d: not d["launch"]["running"])
        assert done["run"]["status"] == "completed" and done["run"]["recorded"] == 9, done
        actions = [e["action"] for e in client.get("/api/audit").json()["entries"][:3]]
        assert actions == ["run.resume", "run.cancel", "run.start"]


def test_hostile_run_posts_start_nothing(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as alice, _client(url, tokens["vic"]) as vic:
        csrf, viewer_csrf = _csrf(alice), _csrf(vic)
        attempts = {
            "viewer": (vic, {"csrf": viewer_csrf}),
            "missing csrf": (alice, {}),
            "another login's csrf": (alice, {"csrf": viewer_csrf}),
            "judge model by an editor": (alice, {"csrf": csrf, "judge_model": "http://attacker.example/v1#x"}),
            "concurrency not a number": (alice, {"csrf": csrf, "concurrency": "8; rm -rf /"}),
            "concurrency huge": (alice, {"csrf": csrf, "concurrency": "9" * 30}),
            "filter matching nothing": (alice, {"csrf": csrf, "filter": "no-such-case"}),
            "too many filters": (alice, {"csrf": csrf, "filter": " ".join(f"c{n}" for n in range(50))}),
            "resume an unknown run": (alice, {"csrf": csrf, "resume": "nope"}),
            "unknown field": (alice, {"csrf": csrf, "agent": "rm -rf /"}),
        }
        statuses = {}
        for label, (client, form) in attempts.items():
            statuses[label] = client.post("/suites/pm-suite/run", data=form).status_code
        statuses["unknown suite"] = alice.post("/suites/no-such/run", data={"csrf": csrf}).status_code
        statuses["cancel an unknown run"] = alice.post("/runs/nope/cancel", data={"csrf": csrf}).status_code
        statuses["logged out"] = (
            TestClient(create_app(url)).post("/suites/pm-suite/run", data={"csrf": csrf}).status_code
        )
    assert all(code in (400, 401, 403, 404, 409, 422) for code in statuses.values()), statuses
    assert statuses["viewer"] == 403 and statuses["judge model by an editor"] == 403
    assert statuses["filter matching nothing"] == 422 and statuses["logged out"] == 401
    with open_store(url) as store:
        assert store.runs("pm-suite") == []


def _git(folder: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    command = ["git", "-c", "user.name=jurybox", "-c", "user.email=jurybox@example.invalid", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_a_browser_run_records_the_git_commit_as_the_command_line_does(
    stored: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, tokens = stored
    # The server's folder (where the suite was imported from, its agent resolves) is a checkout.
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", "agents", "suite.yaml")
    _git(tmp_path, "commit", "-q", "-m", "suite")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    with _client(url, tokens["pm.alice"]) as client:
        started = client.post("/suites/pm-suite/run", data={"csrf": _csrf(client), "filter": "smoke"})
        assert started.status_code == 303, started.text
        run_id = started.headers["location"].split("/")[2]
        finished = _wait(client, run_id, lambda d: not d["launch"]["running"])
        assert finished["run"]["status"] == "completed", finished
        assert finished["run"]["git_commit"] == commit and finished["run"]["git_branch"] == "main"
    cli = CliRunner().invoke(app, ["run", "--store", url, "--suite", "pm-suite", "-k", "smoke", "--no-progress"])
    assert cli.exit_code == 0, cli.output
    with open_store(url) as store:
        browser, command = store.get_run(run_id), store.latest_run("pm-suite")
    assert command is not None and command.id != run_id
    # Started from either place, a run is put together one way: the same facts are recorded.
    assert browser.git_commit == command.git_commit == commit
    assert {k: v for k, v in browser.config.items() if k != "suite_file"} == {
        k: v for k, v in command.config.items() if k != "suite_file"
    }
    assert browser.config["git_dirty"] is False and browser.judge_model == command.judge_model
