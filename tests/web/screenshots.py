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

from webkit import REPO, SUITE, DashboardServer, _run_example, changed_suite

from jurybox.store import open_store

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
        runs = store.runs("property-agent")
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
    for name in ("login", "case-reviews", "reviews", "audit"):
        print(OUT / f"{name}.png", file=sys.stderr)


if __name__ == "__main__":
    main()
