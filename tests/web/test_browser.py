"""The dashboard in a real browser: Playwright driving Debian's chromium (``apt-get install chromium``).

One browser per session and the session's one store. Locally these tests skip
with the reason when chromium or Playwright is missing; with CI=true they fail
instead, so CI never passes without having run them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from webkit import HOSTILE_SUITE, REPO, DashboardServer, WebStore

from jurybox.core import CaseRecord, Judgment
from jurybox.store import import_suite_file, open_store
from jurybox.web import WebSettings
from jurybox.web._case_form import PASS_MARK_RANGE

pytestmark = pytest.mark.browser

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails in CI) with the reason
    expect = None  # type: ignore[assignment]

CHROMIUM = os.environ.get("JURYBOX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: browser tests must run, not skip; scripts/test.sh installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, launched once for this module.

    Not for the session: Playwright's sync API keeps an event loop running in the main thread
    until it stops, and a later test that calls ``asyncio.run`` (``jurybox run``) would fail.
    """
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed: pip install 'jurybox[browser]'")
    if not Path(CHROMIUM).exists():
        _unavailable(f"no chromium at {CHROMIUM}: apt-get install chromium (or set JURYBOX_CHROMIUM)")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Error as exc:
            _unavailable(f"chromium at {CHROMIUM} does not start: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def server(web_store: WebStore) -> Iterator[DashboardServer]:
    running = DashboardServer(web_store.url)
    yield running
    running.stop()


@dataclass
class Watch:
    """What a page did that it must not: dialogs, script errors, console errors (CSP violations among them)."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def clean(self) -> bool:
        return not self.dialogs and not self.errors


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Watch]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=True)
    tab = context.new_page()
    watch = Watch()

    def on_dialog(dialog: Any) -> None:
        watch.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.on("pageerror", lambda exc: watch.errors.append(f"page error: {exc}"))
    tab.on("console", lambda message: watch.errors.append(message.text) if message.type == "error" else None)
    yield tab, watch
    context.close()


def test_a_persons_path_runs_run_failing_case_compare_trend_lesson(
    page: tuple[Any, Watch], server: DashboardServer, web_store: WebStore
) -> None:
    tab, watch = page
    first, second = web_store.example_runs
    tab.goto(server.base + "/runs")
    assert tab.title() == "Runs · jurybox"
    tab.click(f"a[href='/runs/{second}']")
    tab.wait_for_url(f"**/runs/{second}")
    assert tab.locator("h1").inner_text().startswith("property-agent")
    rows = tab.locator("table.cases tbody tr")
    assert rows.first.locator(".badge").inner_text() == "FAIL"  # failing cases first

    # A failing case: every round, and the reasoning of the failing judge shown without a click.
    tab.click(f"table.cases a:text-is('{web_store.failing_case}')")
    tab.wait_for_url("**/case?name=*")
    rounds = tab.locator("section.round:not(.execution)")
    assert rounds.count() == 2
    second_round = rounds.nth(1)
    assert "FAIL" in second_round.locator("h2").inner_text()
    reasoning = second_round.locator(".reasoning", has_text="none of the texts found").first
    assert reasoning.is_visible()
    assert second_round.locator("code.tool-name", has_text="get_bookings").first.is_visible()
    assert tab.locator(".why-box").is_visible()

    # Back to the run, compare with the previous run: the newly failing cases are listed.
    tab.click("a.button:text('Back to run')")
    tab.click("a.button:has-text('Compare with previous')")
    tab.wait_for_url(f"**/compare?a={first}&b={second}")
    assert tab.locator("a.kind.current").inner_text().startswith("Newly failing")
    assert set(tab.locator("#compare-cases td.case-name").all_inner_texts()) == {
        "counts-listings",
        web_store.failing_case,
    }

    # The suite's trend: each point opens its run.
    tab.goto(server.base + "/suites")
    tab.click("a:text-is('property-agent')")
    tab.wait_for_url("**/suites/property-agent/trends")
    assert tab.locator("figure.chart").count() >= 4
    tab.locator(f"figure.chart a[href='/runs/{first}']").first.click()
    tab.wait_for_url(f"**/runs/{first}")

    # A lesson, and from it the regressed run.
    tab.click("header nav a:text('Lessons')")
    tab.wait_for_url("**/lessons")
    lesson = tab.locator("article.lesson").first
    assert "llm_judge" in lesson.locator("h2").inner_text() or "overall" in lesson.locator("h2").inner_text()
    lesson.locator("a.button:text('Open the run')").click()
    tab.wait_for_url(f"**/runs/{web_store.hostile_runs[-1]}")
    assert tab.locator(".verdict").inner_text() == "regression"
    assert watch.clean(), watch


def test_filters_update_the_case_table_in_place_and_the_url_is_shareable(
    page: tuple[Any, Watch], server: DashboardServer, web_store: WebStore
) -> None:
    tab, watch = page
    second = web_store.example_runs[1]
    tab.goto(server.base + f"/runs/{second}")
    tab.evaluate("window.__kept = 1")  # survives only if htmx swaps the table instead of reloading the page
    tab.select_option("#cases select[name=status]", "fail")
    expect(tab.locator("table.cases tbody tr")).to_have_count(2)
    assert "status=fail" in tab.url
    assert tab.evaluate("window.__kept") == 1
    tab.fill("#cases input[type=search]", "counts")
    expect(tab.locator("table.cases tbody tr")).to_have_count(1)
    assert "q=counts" in tab.url
    tab.reload()
    assert tab.locator("table.cases tbody tr").count() == 1  # the URL alone gives the same table
    assert watch.clean(), watch


@pytest.fixture(scope="module")
def later_server(web_store: WebStore) -> Iterator[DashboardServer]:
    """The dashboard as it serves two big runs: a comparison not kept yet comes after its page."""
    running = DashboardServer(web_store.url, settings=WebSettings(compare_inline_cases=0))
    yield running
    running.stop()


def test_a_comparison_computed_after_the_page_arrives_with_the_apis_figures(
    page: tuple[Any, Watch], later_server: DashboardServer, web_store: WebStore
) -> None:
    tab, watch = page
    base = later_server.base
    # Two runs no page compared before, the later one first: not kept, so computed after the page.
    a, b = web_store.hostile_runs[3], web_store.hostile_runs[1]
    served = tab.request.get(base + f"/compare?a={a}&b={b}").text()
    assert "Computing the paired statistics" in served and "Counting what changed" in served  # both come later
    tab.goto(base + f"/compare?a={a}&b={b}")
    section = tab.locator("#paired")
    expect(section.locator(".paired-summary .verdict")).to_be_visible()  # swapped in by htmx
    expect(tab.locator("#compare-cases")).to_be_visible()
    assert "Computing" not in section.inner_text() and "Counting" not in tab.locator("#changes").inner_text()
    api = tab.request.get(base + f"/api/compare?a={a}&b={b}").json()
    assert api["paired"]["summary"] in section.locator(".paired-summary").inner_text()
    assert f"{api['paired']['pairs']} decided pairs" in section.locator(".paired-basis").inner_text()
    assert f"of {api['common']} in both runs" in tab.locator(".counts").inner_text()
    assert tab.locator("#paired").count() == 1 and tab.locator("#changes").count() == 1  # replaced, not nested
    assert watch.clean(), watch


def _hostile_paths(store: WebStore) -> list[str]:
    hostile = store.hostile_runs[-1]
    suite = quote(HOSTILE_SUITE, safe="")
    paths = ["/runs", f"/runs?suite={suite}", f"/runs/{hostile}", "/suites", f"/suites/{suite}/trends"]
    paths += [f"/suites/{suite}/cases", "/lessons", f"/compare?a={store.hostile_runs[-2]}&b={hostile}"]
    paths += [f"/compare?a={hostile}&b={store.hostile_runs[0]}"]  # statistics fetched after the page
    paths += ["/calibrations", "/calibrations/1"]  # the hostile calibration is the store's only one
    paths += [f"/runs/{hostile}/case?name={quote(name, safe='')}" for name in store.hostile_case_names]
    return paths


def test_hostile_text_never_runs_on_any_page(
    page: tuple[Any, Watch], server: DashboardServer, web_store: WebStore
) -> None:
    tab, watch = page
    for path in _hostile_paths(web_store):
        tab.goto(server.base + path)
        tab.wait_for_load_state("networkidle")
        assert tab.evaluate("typeof window.__xss") == "undefined", path
        assert tab.locator("a[href^='javascript:' i], [src^='javascript:' i]").count() == 0, path
        assert tab.locator("img, iframe, object, embed").count() == 0, path
        # Details elements hold metadata: open them all, so anything hidden in them would render too.
        tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        tab.mouse.move(200, 300)
        assert tab.evaluate("typeof window.__xss") == "undefined", path
    # The case named "javascript:..." is an ordinary link to its page.
    tab.goto(server.base + f"/runs/{web_store.hostile_runs[-1]}")
    tab.click("table.cases a:text-is('javascript:window.__xss=1')")
    tab.wait_for_url("**/case?name=javascript*")
    assert tab.evaluate("typeof window.__xss") == "undefined"
    assert watch.clean(), watch


def test_a_running_run_refreshes_until_it_finishes(
    page: tuple[Any, Watch], tmp_path_factory: pytest.TempPathFactory
) -> None:
    tab, watch = page
    url = f"sqlite:///{tmp_path_factory.mktemp('live') / 'live.db'}"
    with open_store(url) as store:
        run_id = store.runs.begin("live", cases={"one": {}, "two": {}}, judge_model="fake")
        store.results.record(run_id, CaseRecord("one", Judgment.passed(1.0, "ok", judge="contains")))
    live = DashboardServer(url, refresh_seconds=1)
    try:
        tab.goto(live.base + f"/runs/{run_id}")
        assert "1 of 2" in tab.locator("p.live").inner_text()
        with open_store(url) as store:
            store.results.record(run_id, CaseRecord("two", Judgment.failed(0.0, "wrong", judge="contains")))
        # Playwright's own waits: wait_for_function would need eval, which the page's CSP forbids.
        expect(tab.locator("p.live")).to_contain_text("2 of 2")
        expect(tab.locator("table.cases tbody tr")).to_have_count(2)
        with open_store(url) as store:
            store.finish_run(run_id)
        expect(tab.locator("p.live")).to_have_count(0)
        expect(tab.locator(".card.c-fail b")).to_have_text("1")
        assert tab.locator("h1 .run-status").inner_text() == "running"  # the heading is not refreshed...
        tab.reload()
        assert tab.locator("h1 .run-status").inner_text() == "completed"  # ...a reload shows the final state
    finally:
        live.stop()
    assert watch.clean(), watch


def test_a_product_managers_day_write_fix_run_review_export_and_the_cli_runs_her_case(
    page: tuple[Any, Watch], tmp_path_factory: pytest.TempPathFactory
) -> None:
    tab, watch = page
    folder = tmp_path_factory.mktemp("authoring")
    suite = folder / "suite.yaml"
    agent = {"python": "examples.property_agent.agent:make_agent", "options": {"db_path": str(folder / "agent.db")}}
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "pm-suite",
                "agent": {**agent, "options": {**agent["options"], "offline": True}},
                "cases": [
                    {"name": "counts-listings", "prompt": "How many listings do I have?", "judges": ["valid_json"]}
                ],
            }
        ),
        encoding="utf-8",
    )
    url = f"sqlite:///{folder / 'store.db'}"
    with open_store(url) as store:
        import_suite_file(store, suite)
        token = store.users.add_user("pm.alice", "editor")
    served = DashboardServer(url, refresh_seconds=1)
    try:
        tab.goto(served.base + "/login?next=/suites/pm-suite/edit")
        tab.fill("#token", token)
        tab.click("form.login button")
        tab.wait_for_url("**/suites/pm-suite/edit")
        tab.click("a.button:text('+ new case')")
        tab.fill("#f-name", "pm-revenue")
        tab.fill("#f-prompt", "Revenue for the Beach House in June 2026")
        tab.fill("#f-tools", "get_revenue")
        tab.select_option("#f-tools_mode", "subset")
        tab.fill("#f-criteria", "Gives the June revenue of the Beach House in dollars")
        tab.fill("#f-threshold", "800")  # a slip of the finger: neither a share nor a percentage
        tab.click("button.primary")
        error = tab.locator("#error-threshold")
        expect(error).to_have_text(PASS_MARK_RANGE)
        # The summary at the top links to the field, which is in view once followed.
        tab.click("#error-summary a[href='#f-threshold']")
        expect(tab.locator("#f-threshold")).to_be_in_viewport()
        assert tab.locator("#f-prompt").input_value() == "Revenue for the Beach House in June 2026"
        tab.fill("#f-threshold", "80")  # 80 out of 100
        tab.click("button.primary")
        tab.wait_for_url("**/suites/pm-suite/edit?saved=pm-revenue#saved")
        expect(tab.locator("#saved")).to_contain_text("pm-revenue: version 1 of this case")
        expect(tab.locator("table.edit-cases a:text-is('pm-revenue')")).to_have_count(1)
        # She starts a run of the suite; the progress updates in place until it is done.
        tab.click("form.run-form button")
        tab.wait_for_url("**/progress")
        expect(tab.locator("#launch-progress .run-status")).to_have_text("completed", timeout=60_000)
        expect(tab.locator("#launch-progress b.pass")).to_have_text("1")
        # She opens the failing case and disagrees with its judge, with a note.
        with open_store(url) as store:
            browser_run = store.runs.newest("pm-suite")[0].id
        tab.goto(served.base + f"/runs/{browser_run}/case?name=counts-listings")
        review = tab.locator("details.review[open] form.review").first
        review.locator("input[name=agree][value=no]").check()
        review.locator("input[name=label][value=pass]").check()
        review.locator("textarea[name=note]").fill("Counting listings needs no JSON: the judge is wrong here.")
        review.locator("button").click()
        tab.wait_for_url("**#reviews")
        expect(tab.locator("#reviews ul.reviews li")).to_contain_text("pm.alice disagreed with")
        # The review queue shows it; the labelled set she exports holds her label and note.
        tab.goto(served.base + "/reviews")
        expect(tab.locator("#latest-reviews")).to_contain_text("the judge is wrong here")
        expect(tab.locator("#my-reviews")).to_contain_text("the judge is wrong here")
        with tab.expect_download() as download:
            tab.click("a:text('export the labelled set (JSONL)')")
        rows = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
        assert rows[0]["labels"] == {"pm.alice": "pass"} and rows[0]["metadata"]["case"] == "counts-listings"
        # The refused form is a 422 page, which chromium logs; nothing else may show up.
        assert not watch.dialogs and all("status of 422" in e for e in watch.errors), watch
    finally:
        served.stop()
    # The engineer's side: the CLI runs the case the manager wrote, from the store.
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1")
    env.pop("JURYBOX_JUDGE_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "jurybox", "run", "--store", url, "--suite", "pm-suite", "-k", "pm-revenue"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url) as store:
        runs = store.runs.newest("pm-suite")
        assert len(runs) == 2 and runs[1].recorded == 2 and runs[1].passed == 1  # the browser's run
        assert runs[0].recorded == 1 and runs[0].passed == 1  # the CLI's run of her case
        assert [record.case for record in store.results.read_all(runs[0].id)] == ["pm-revenue"]
