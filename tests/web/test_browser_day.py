"""A product manager's whole day in chromium, on the example suite imported from its own folder.

The suite is imported where it lives (``cd examples/property_agent && jurybox store import
suite.yaml``); the dashboard then runs in another folder and the engineer runs the stored suite
from a third, so every relative path (``seeds: seeds/``, the agent's module) has to resolve
against the suite's own folder. She writes a case with a mistake and fixes it, runs it, watches
it finish, opens the failing case, disagrees with its judge from the review queue, and exports
the labelled set; then the engineer runs her case from the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_browser import Watch, browser, page  # noqa: F401  (the fixtures)
from webkit import REPO, DashboardServer

from jurybox.store import open_store
from jurybox.web._case_form import PASS_MARK_RANGE

pytestmark = pytest.mark.browser

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails in CI) with the reason
    expect = None  # type: ignore[assignment]

EXAMPLE = REPO / "examples" / "property_agent"
CASE = "pm-weekend-revenue"
SHOTS = os.environ.get("JURYBOX_DAY_SHOTS")
"""A folder to save a screenshot of each page the day visits (scripts/screenshots.sh sets it)."""


def _jurybox(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1", COLUMNS="200")
    env.pop("JURYBOX_JUDGE_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "jurybox", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip


def _shot(tab: Any, name: str) -> None:
    if SHOTS:
        tab.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_the_managers_day_on_the_example_suite_imported_from_its_own_folder(
    page: tuple[Any, Watch],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tab, watch = page
    url = f"sqlite:///{tmp_path / 'team.db'}"
    imported = _jurybox(["store", "import", "suite.yaml", "--store", url], cwd=EXAMPLE)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    with open_store(url) as store:
        token = store.users.add_user("pm.alice", "editor")
    # The dashboard is started from a folder that holds none of the suite's files.
    server_folder = tmp_path / "server"
    server_folder.mkdir()
    monkeypatch.chdir(server_folder)
    served = DashboardServer(url, refresh_seconds=1)
    try:
        base = served.base
        tab.goto(base + "/login?next=/suites/property-agent/edit")
        tab.fill("#token", token)
        tab.click("form.login button")
        tab.wait_for_url("**/suites/property-agent/edit")
        # A one-message case: a compact form, the rounds out of the way.
        tab.click("a.button:text('+ new case')")
        expect(tab.locator("#f-r0_prompt")).to_be_hidden()
        assert tab.evaluate("document.body.scrollHeight") < 2600
        _shot(tab, "day-new-case")
        tab.fill("#f-name", CASE)
        tab.fill("#f-prompt", "Revenue for the Beach House in June 2026")
        tab.fill("#f-tools", "get_bookings")  # her expectation is wrong: the agent asks for revenue
        tab.select_option("#f-tools_mode", "strict")
        tab.fill("#f-threshold", "8000")  # a mistake
        tab.click("button.primary")
        expect(tab.locator("#error-threshold")).to_have_text(PASS_MARK_RANGE)
        _shot(tab, "day-case-error")
        tab.click("#error-summary a[href='#f-threshold']")
        expect(tab.locator("#f-threshold")).to_be_in_viewport()
        tab.fill("#f-threshold", "80")
        tab.click("button.primary")
        tab.wait_for_url(f"**/suites/property-agent/edit?saved={CASE}#saved")
        expect(tab.locator("#saved")).to_contain_text(f"{CASE}: version 1 of this case")
        # She runs her case alone: a partial run, listed case by case as it finishes.
        tab.fill("form.run-form input[name=filter]", CASE)
        tab.click("form.run-form button")
        tab.wait_for_url("**/progress")
        expect(tab.locator("#launch-progress .run-status")).to_have_text("completed", timeout=120_000)
        finished = tab.locator("#launch-progress table.finished tbody tr")
        expect(finished).to_have_count(1)
        expect(finished.first).to_contain_text("FAIL")
        _shot(tab, "day-progress")
        finished.first.locator("a").click()
        tab.wait_for_url("**/case?name=*")
        _shot(tab, "day-failing-case")
        with open_store(url) as store:
            run = store.runs.newest("property-agent")[0]
            assert run.partial and store.check_regressions(run.id, record_lessons=False).ok
            assert store.lessons.list() == [] if hasattr(store.lessons, "list") else True
        tab.goto(base + f"/runs/{run.id}")
        expect(tab.locator("h2 .verdict")).to_have_text("partial")
        # The review queue: a count, then one judgment after another.
        tab.goto(base + f"/reviews?run={run.id}")
        total = int(tab.locator("#queue-total").inner_text().replace(",", ""))
        assert total >= 1
        _shot(tab, "day-review-queue")
        tab.click("a.button:text('Start reviewing')")
        tab.wait_for_url("**queue=*")
        review = tab.locator("details.review[open] form.review").first
        review.locator("input[name=agree][value=no]").check()
        review.locator("input[name=label][value=pass]").check()
        review.locator("textarea[name=note]").fill("The agent was right to ask for revenue.")
        review.locator("button:text('Save and review next')").click()
        tab.wait_for_load_state()
        assert "/runs/" in tab.url or "/reviews" in tab.url
        tab.goto(base + f"/reviews?run={run.id}")
        assert int(tab.locator("#queue-total").inner_text().replace(",", "")) == total - 1
        expect(tab.locator("#my-reviews")).to_contain_text("The agent was right to ask for revenue.")
        with tab.expect_download() as download:
            tab.click("a:text('export the labelled set (JSONL)')")
        rows = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
        assert [row["labels"] for row in rows] == [{"pm.alice": "pass"}] and rows[0]["metadata"]["case"] == CASE
        # A phone: the status columns of the queue stay on screen.
        tab.set_viewport_size({"width": 420, "height": 900})
        for path, cell in (
            ("/reviews?reviewed=any", "table.queue tbody tr td:first-child"),
            (f"/runs/{run.id}", "#cases tbody tr td:first-child"),
        ):
            tab.goto(base + path)
            box = tab.locator(cell).first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 420, (path, box)
            assert tab.evaluate("document.documentElement.scrollWidth") <= 420, path
        _shot(tab, "day-run-420")
        assert not watch.dialogs and all("status of 422" in e for e in watch.errors), watch
    finally:
        served.stop()
    # The engineer, from a third folder: the stored suite, her case, no workaround.
    engineer = tmp_path / "engineer"
    engineer.mkdir()
    done = _jurybox(["run", "--store", url, "--suite", "property-agent", "-k", CASE, "--no-progress"], cwd=engineer)
    said = done.stdout + done.stderr
    assert "no such seed" not in said and "Traceback" not in said, said
    assert done.returncode == 1, said  # her case fails, as it did in the browser: a failing run exits 1
    with open_store(url) as store:
        latest = store.runs.newest("property-agent")[0]
        assert latest.recorded == 1 and latest.config["stored_suite"] == "property-agent"
        assert latest.config["suite_folder"] == str(EXAMPLE)
        # Runs after the import made no case version of their own: every imported case has one history entry.
        assert [e.action for e in store.authoring.case_history("property-agent", "lists-properties")] == ["import"]
