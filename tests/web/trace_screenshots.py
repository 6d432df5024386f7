"""Make the screenshots of docs/traces.md: a week of CI runs and production runs of one suite, in chromium.

Run it with ``bash scripts/screenshots.sh traces`` (under a minute). It imports a travel
suite, runs it six times with ``jurybox run`` (two runs with a city the agent gets
wrong), and sends seven days of production traces, made with the OpenTelemetry SDK and
encoded by its OTLP exporter, to ``POST /v1/traces`` with an ingest token; the online
evaluation worker judges them with the stored suite's judges into one production run a
day. The runs are then dated across the past week, as a week of real traffic would
have dated them, and the trends page and a production judgment are shot 1280 pixels
wide (and the trends page 420 wide, left in the scratch folder to look at). Writes
docs/images/traces/*.png.
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from screenshots import CHROMIUM_ARGS
from webkit import REPO, DashboardServer, run_jurybox

from jurybox.runs import import_suite
from jurybox.store import open_store
from jurybox.web import OtlpSettings, OtlpWorker, WebSettings, create_app
from jurybox.web import _otlp_worker as worker_module

OUT = REPO / "docs" / "images" / "traces"
CITIES = ["Lisbon", "Rome", "Oslo", "Porto", "Vienna", "Prague", "Seville", "Krakow"]
AGENT = """
import os

def respond(message, session_id):
    city = message.rstrip("?").rsplit(" ", 1)[-1]
    call = {"name": "search_hotels", "arguments": {"city": city}}
    if city in os.environ.get("TRAVEL_BROKEN", "").split(","):
        return {"reply": f"Sorry, I found nothing in {city}.", "tool_calls": [call]}
    return {"reply": f"Casa {city}: 95 EUR a night, breakfast included.", "tool_calls": [call]}
"""
SUITE = {
    "name": "travel",
    "agent": {"python": "travel_agent:respond"},
    "cases": [
        {
            "name": f"hotel in {city}",
            "prompt": f"A hotel in {city}?",
            "expect_tools": ["search_hotels"],
            "judges": [{"contains": {"text": "EUR"}}],
        }
        for city in CITIES
    ],
}
CI_BROKEN = ["", "", "Rome", "", "", "Rome,Oslo"]
"""The cities the agent gets wrong in each CI run (a bad change in the third, a worse one in the last)."""
PRODUCTION_FAILURES = [0.06, 0.08, 0.05, 0.3, 0.1, 0.07, 0.05]
"""The share of each day's production traffic the agent answers badly (an incident on day four)."""
TRACE_URL = "http://127.0.0.1:6006/projects/default/traces/{trace_id}"


def main() -> None:
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="jbx-trace-shots-"))
    url = f"sqlite:///{folder / 'jurybox.db'}"
    (folder / "travel_agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "travel.yaml").write_text(json.dumps(SUITE, indent=1), encoding="utf-8")
    with open_store(url) as store:
        import_suite(store, folder / "travel.yaml")
        token = store.users.add_user("collector", "ingest")
        admin = store.users.add_user("admin", "admin")
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    days = [today - timedelta(days=6 - index) for index in range(7)]
    ci_runs = [_ci_run(folder, url, broken) for broken in CI_BROKEN]
    production = _production_days(url, token, days)
    _date_runs(folder / "jurybox.db", days, ci_runs, production)
    with open_store(url) as store:
        [case] = [r.case for r in store.results.read_all(production[-1]) if r.status.value == "pass"][:1]
    OUT.mkdir(parents=True, exist_ok=True)
    server = DashboardServer(url, settings=WebSettings(trace_url=TRACE_URL))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
            page.goto(server.base + "/login")
            page.fill("#token", admin)
            page.click("form.login button")
            page.wait_for_load_state("networkidle")
            # The phone-wide shot is for looking at, not for the docs: it stays in the scratch folder.
            shots = {
                OUT / "production-trends.png": ("/suites/travel/trends?runs=20", 1280),
                folder / "production-trends-phone.png": ("/suites/travel/trends?runs=20", 420),
                OUT / "production-case.png": (f"/runs/{production[-1]}/case?name={quote(case)}", 1280),
            }
            for file, (path, width) in shots.items():
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(server.base + path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(file))
                print(file, file=sys.stderr)
            browser.close()
    finally:
        server.stop()


def _ci_run(folder: Path, url: str, broken: str) -> str:
    run_jurybox("travel.yaml", "--store", url, cwd=folder, env={"TRAVEL_BROKEN": broken})
    with open_store(url) as store:
        return next(r.id for r in store.runs.newest("travel") if not r.production)


def _traces(count: int, failures: float, rng: random.Random) -> bytes:
    """``count`` agent runs as the agent's own OpenTelemetry SDK would export them (OTLP protobuf)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("travel")
    for _ in range(count):
        city = rng.choice(CITIES)
        bad = rng.random() < failures
        answer = f"Sorry, I found nothing in {city}." if bad else f"Casa {city}: 95 EUR a night."
        with tracer.start_as_current_span("invoke_agent travel") as agent:
            agent.set_attribute("gen_ai.operation.name", "invoke_agent")
            user = [{"role": "user", "parts": [{"type": "text", "content": f"A hotel in {city}?"}]}]
            agent.set_attribute("gen_ai.input.messages", json.dumps(user))
            with tracer.start_as_current_span("execute_tool search_hotels") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "search_hotels")
                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": city}))
            reply = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            agent.set_attribute("gen_ai.output.messages", json.dumps(reply))
    provider.shutdown()
    return bytes(encode_spans(memory.get_finished_spans()).SerializeToString())


def _production_days(url: str, token: str, days: list[datetime]) -> list[str]:
    """Each day's traces posted to /v1/traces and judged by the worker with the stored suite's judges."""
    settings = OtlpSettings(suite="travel", settle_seconds=0.0, worker=False)
    rng = random.Random(31)
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {token}"}
    runs = []
    with TestClient(create_app(url, otlp=settings)) as client:
        app: Any = client.app
        worker = OtlpWorker(app.state.jurybox.access, settings, app.state.otlp_counters)
        for day, failures in zip(days, PRODUCTION_FAILURES, strict=True):
            worker_module.datetime = _frozen(day + timedelta(hours=12))  # type: ignore[attr-defined]
            for _ in range(4):
                answer = client.post("/v1/traces", content=_traces(10, failures, rng), headers=headers)
                answer.raise_for_status()
            while worker.run_once():
                pass
            with open_store(url) as store:
                runs.append(next(r.id for r in store.runs.newest("travel") if r.production))
    worker_module.datetime = datetime  # type: ignore[attr-defined]
    return runs


def _frozen(moment: datetime) -> type[datetime]:
    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:  # type: ignore[override]
            return moment  # type: ignore[return-value]

    return Frozen


def _date_runs(path: Path, days: list[datetime], ci_runs: list[str], production: list[str]) -> None:
    """Spread the runs over the week: a production run spans its day; CI runs go out in the mornings."""
    ci_days = [0, 1, 2, 3, 5, 6]
    with sqlite3.connect(path) as db:
        sample = db.execute("SELECT started_at FROM runs LIMIT 1").fetchone()[0]
        spaced = " " in str(sample)  # how SQLAlchemy wrote the times: keep the same form

        def text(moment: datetime) -> str:
            value = moment.replace(tzinfo=None).isoformat(sep=" " if spaced else "T")
            return value if "." in value else value + ".000000"

        for run_id, index in zip(ci_runs, ci_days, strict=True):
            start = days[index] + timedelta(hours=9, minutes=12 * index)
            db.execute(
                "UPDATE runs SET started_at = ?, finished_at = ? WHERE id = ?",
                (text(start), text(start + timedelta(minutes=2)), run_id),
            )
        for run_id, day in zip(production, days, strict=True):
            db.execute("UPDATE runs SET started_at = ? WHERE id = ?", (text(day + timedelta(minutes=1)), run_id))
            db.execute(
                "UPDATE runs SET finished_at = ? WHERE id = ? AND finished_at IS NOT NULL",
                (text(day + timedelta(hours=23, minutes=59)), run_id),
            )


if __name__ == "__main__":
    main()
