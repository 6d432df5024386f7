"""Make the screenshots of docs/web.md: real runs of the example suite, each page in chromium.

Run it with ``bash scripts/screenshots.sh`` (about two minutes: six real runs of
the example suite, the sixth with two expectations changed so it has failing
cases, a regression and a lesson). Writes docs/images/web/*.png.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

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
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
