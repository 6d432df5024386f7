"""Make the screenshots of docs/web.md: real runs of the example suite, each page in chromium.

Run it with ``bash scripts/screenshots.sh`` (about two minutes: six real runs of
the example suite, the sixth with two expectations changed so it has failing
cases, a regression and a lesson). Writes docs/images/web/*.png.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from webkit import REPO, SUITE, DashboardServer, _run_example, changed_suite

from jurybox.store import import_suite_file, open_store

OUT = REPO / "docs" / "images" / "web"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="jbx-shots-"))
    url = f"sqlite:///{folder / 'jurybox.db'}"
    for _ in range(5):
        _run_example(SUITE, url)
    _run_example(changed_suite(folder), url)
    with open_store(url) as store:
        runs = store.runs.newest("property-agent")
    if len(runs) != 6 or runs[0].passed == runs[0].recorded:
        raise RuntimeError(f"expected 6 runs, the last with failing cases; the store has {len(runs)}")
    last, previous = runs[0].id, runs[1].id
    failing = "bookings-then-listing-without-revival"
    shots = {
        "runs": "/runs",
        "run": f"/runs/{last}",
        "case": f"/runs/{last}/case?name={failing}",
        "compare": f"/compare?a={previous}&b={last}",
        "trends": "/suites/property-agent/trends",
        "case-history": "/suites/property-agent/cases",
        "lessons": "/lessons",
    }
    OUT.mkdir(parents=True, exist_ok=True)
    server = DashboardServer(url)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
            for name, path in shots.items():
                page.goto(server.base + path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=name in ("run", "compare", "lessons"))
                print(OUT / f"{name}.png", file=sys.stderr)
            # The failing round of the case, with its reasoning: what the case page is for.
            page.goto(server.base + shots["case"])
            page.locator("section.round").nth(1).screenshot(path=str(OUT / "case-round.png"))
            print(OUT / "case-round.png", file=sys.stderr)
            _review_shots(page, server.base, url, shots["case"])
            _authoring_shots(page, server.base)
            _launch_shot(page, server.base, url, folder)
            browser.close()
    finally:
        server.stop()


def _review_shots(page: Any, base: str, url: str, case_path: str) -> None:
    """A product manager logs in, disagrees with a judge on the failing case, and the queue moves on."""
    with open_store(url) as store:
        token = store.users.add_user("pm.alice", "editor")
    page.goto(base + "/login?next=" + quote(case_path))
    page.screenshot(path=str(OUT / "login.png"))
    page.fill("#token", token)
    page.click("form.login button")
    page.wait_for_load_state("networkidle")
    form = page.locator("details.review[open] form.review").first
    form.locator("input[name=agree][value=no]").check()
    form.locator("input[name=label][value=pass]").check()
    form.locator("textarea[name=note]").fill("The second answer names the right listing; the criterion is too strict.")
    form.locator("button").click()
    page.wait_for_load_state("networkidle")
    page.locator("#reviews").screenshot(path=str(OUT / "case-reviews.png"))
    for name, path in (("reviews", "/reviews"), ("audit", "/audit")):
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(OUT / f"{name}.png"))
    # From the queue: "Save and review next" opens the next judgment waiting.
    page.goto(base + "/reviews/next")
    page.wait_for_load_state("networkidle")
    page.locator("#reviews").screenshot(path=str(OUT / "review-next.png"))
    # A phone: the status column stays in view.
    page.set_viewport_size({"width": 420, "height": 860})
    page.goto(base + "/reviews")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(OUT / "reviews-phone.png"))
    page.set_viewport_size({"width": 1280, "height": 860})
    for name in ("login", "case-reviews", "reviews", "audit", "review-next", "reviews-phone"):
        print(OUT / f"{name}.png", file=sys.stderr)


def _authoring_shots(page: Any, base: str) -> None:
    """The same product manager (logged in) writes a case with a mistake: the field says what is wrong."""
    page.goto(base + "/suites/property-agent/edit")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(OUT / "authoring-cases.png"))
    page.click("a.button:text('+ new case')")
    page.fill("#f-name", "weekend-revenue")
    page.fill("#f-description", "The host asks for a month's revenue of one listing.")
    page.fill("#f-tags", "revenue, single-turn")
    page.fill("#f-prompt", "Revenue for the Beach House in June 2026")
    page.fill("#f-tools", 'get_revenue {"listing_id": 1}')
    page.select_option("#f-tools_mode", "subset")
    page.fill("#f-criteria", "Gives the June revenue of the Beach House in dollars")
    page.locator("main").screenshot(path=str(OUT / "authoring-form.png"))  # a one-message case: no round blocks
    page.fill("#f-threshold", "800")  # a slip: neither a share (0.8) nor a percentage (80)
    page.click("button.primary")
    page.wait_for_load_state("networkidle")
    page.set_viewport_size({"width": 1280, "height": 560})
    page.screenshot(path=str(OUT / "authoring-error.png"))  # the summary at the top links to the field
    page.set_viewport_size({"width": 1280, "height": 860})
    page.fill("#f-threshold", "80")
    page.click("button.primary")
    page.wait_for_load_state("networkidle")
    page.locator("#saved").screenshot(path=str(OUT / "authoring-saved.png"))
    for name in ("authoring-cases", "authoring-form", "authoring-error", "authoring-saved"):
        print(OUT / f"{name}.png", file=sys.stderr)


def _launch_shot(page: Any, base: str, url: str, folder: Path) -> None:
    """A run started from the browser, done: the example's single-turn cases without SQL checks, as a stored suite."""
    example = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    cases = [c for c in example["cases"] if "prompt" in c and "sql_checks" not in c][:6]
    options = {**example["agent"].get("options", {}), "db_path": str(folder / "launch-agent.db")}
    suite = {"name": "property-agent-web", "agent": {**example["agent"], "options": options}, "cases": cases}
    file = folder / "launch-suite.yaml"
    file.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    with open_store(url) as store:
        import_suite_file(store, file)
    page.goto(base + "/suites/property-agent-web/edit")
    page.click("form.run-form button")
    page.wait_for_url("**/progress")
    page.locator("#launch-progress .run-status").wait_for(timeout=120_000)
    page.locator("main").screenshot(path=str(OUT / "launch.png"))
    print(OUT / "launch.png", file=sys.stderr)


if __name__ == "__main__":
    main()
