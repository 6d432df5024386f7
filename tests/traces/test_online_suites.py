"""Online evaluation with a stored suite's judges: routes by service or root span, one production run per day."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
from fastapi.testclient import TestClient
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from otel_exports import genai_agent, openinference_agent, record

from jurybox._cli.serve_otlp import check_stored_suites, otlp_settings
from jurybox.runs import import_suite
from jurybox.store import open_store
from jurybox.web import OtlpSettings, OtlpWorker, SuiteJudgesError, create_app, load_suite_judges
from jurybox.web import _otlp_worker as worker_module

PROTOBUF = {"Content-Type": "application/x-protobuf"}

TRAVEL = """
name: travel
agent: {python: "travel_app:respond"}
concurrency: 3
cases:
  - name: hotel in Lisbon
    tags: [production]
    prompt: Find me a hotel in Lisbon
    expect_tools: [search_hotels]
    judges:
      - contains: {text: EUR}
  - name: a hotel with a pool
    prompt: A hotel with a pool?
    judges:
      - contains: {text: pool}
"""
WEATHER = """
name: weather
agent: {python: "weather_app:respond"}
cases:
  - name: Oslo
    prompt: Weather in Oslo?
    judges:
      - contains: {text: snow}
      - relevance
"""


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    for name, text in (("travel", TRAVEL), ("weather", WEATHER)):
        (tmp_path / f"{name}.yaml").write_text(text)
        with open_store(url) as store:
            import_suite(store, tmp_path / f"{name}.yaml")
    return url


@pytest.fixture
def token(store_url: str) -> str:
    with open_store(store_url) as store:
        return store.users.add_user("collector", "ingest")


def _settings(**changes: object) -> OtlpSettings:
    base: dict[str, object] = {"suite": "travel", "settle_seconds": 0.0, "worker": False}
    base.update(changes)
    return OtlpSettings(**base)  # type: ignore[arg-type]


@pytest.fixture
def client(store_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(store_url, otlp=_settings())) as test_client:
        yield test_client


def _send(client: TestClient, token: str, *scenarios: object, service: str = "travel-agent") -> None:
    body = encode_spans(record(*scenarios, service=service)).SerializeToString()  # type: ignore[arg-type]
    answer = client.post("/v1/traces", content=body, headers={**PROTOBUF, "Authorization": f"Bearer {token}"})
    assert answer.status_code == 200


def _worker(client: TestClient, settings: OtlpSettings | None = None) -> OtlpWorker:
    app = client.app
    return OtlpWorker(app.state.jurybox.access, settings or app.state.otlp, app.state.otlp_counters)  # type: ignore[attr-defined]


def test_the_stored_suites_production_cases_give_the_judges_with_its_limits(store_url: str) -> None:
    with open_store(store_url) as store:
        found = load_suite_judges(store, "travel")
        weather = load_suite_judges(store, "weather")
        with pytest.raises(SuiteJudgesError, match="no suite 'nowhere'"):
            load_suite_judges(store, "nowhere")
    # Only the case tagged production: its expected tool and its contains, not the other case's.
    assert sorted(b.key for b in found.judges) == ["contains('EUR')", "tool_calls[strict](search_hotels)"]
    assert found.concurrency == 3 and found.left_out == ()
    # No case tagged: every case's; no judge model: the LLM judge is left out and named.
    assert [b.key for b in weather.judges] == ["contains('snow')"] and weather.left_out == ("relevance",)


def test_traces_are_judged_with_the_stored_suite_into_its_production_run(
    client: TestClient, token: str, store_url: str
) -> None:
    _send(client, token, genai_agent, functools.partial(genai_agent, city="Rome", fail_tool=True))
    assert _worker(client).run_once() == 2
    with open_store(store_url) as store:
        [run] = [r for r in store.runs.newest("travel") if r.production]
        assert run.config["judges"] == "stored suite" and run.config["day"] == datetime.now(UTC).date().isoformat()
        assert run.partial  # never gated, never in the CI baseline
        records = store.results.read_all(run.id)
    # Neither answer says "pool": the untagged case's judge is not applied.
    assert sorted(r.status.value for r in records) == ["pass", "pass"]


def test_routes_send_a_service_to_its_suite_and_a_changed_suite_is_read_again(
    store_url: str, token: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = otlp_settings(None, "travel", 1.0, None, None, None, ["weather-*=weather"])
    settings.settle_seconds, settings.worker = 0.0, False
    with TestClient(create_app(store_url, otlp=settings)) as client:
        _send(client, token, openinference_agent, service="weather-bot")
        _send(client, token, genai_agent)
        worker = _worker(client)
        assert worker.run_once() == 2
        with open_store(store_url) as store:
            [weather] = store.runs.newest("weather")
            [oslo] = store.results.read_all(weather.id)
            assert weather.production and oslo.status.value == "pass"  # "snow" is in the answer
            (tmp_path / "weather.yaml").write_text(WEATHER.replace("text: snow", "text: sunshine"))
            import_suite(store, tmp_path / "weather.yaml")
        monkeypatch.setattr(worker_module, "RELOAD_SECONDS", 0.0)
        _send(client, token, openinference_agent, service="weather-bot")
        assert worker.run_once() == 1
    with open_store(store_url) as store:
        results = store.results.read_all(weather.id)
    assert sorted(r.status.value for r in results) == ["fail", "pass"]


def test_one_production_run_per_suite_and_day_and_the_day_before_is_finished(
    client: TestClient, token: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Day1(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return datetime(2026, 3, 1, 23, 59, tzinfo=UTC)

    class Day2(Day1):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return datetime(2026, 3, 2, 0, 1, tzinfo=UTC)

    monkeypatch.setattr(worker_module, "datetime", Day1)
    _send(client, token, genai_agent)
    _worker(client).run_once()
    monkeypatch.setattr(worker_module, "datetime", Day2)
    _send(client, token, genai_agent)
    _worker(client).run_once()  # a new worker (a restart): it finds and finishes the day before all the same
    with open_store(store_url) as store:
        runs = {r.config["day"]: r for r in store.runs.newest("travel") if r.production}
    assert set(runs) == {"2026-03-01", "2026-03-02"}
    assert runs["2026-03-01"].status == "completed" and runs["2026-03-02"].status == "running"
    assert runs["2026-03-01"].recorded == 1 and runs["2026-03-02"].recorded == 1


def test_a_quiet_day_is_finished_after_midnight_without_a_new_trace(
    store_url: str, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = {"now": datetime(2026, 3, 1, 23, 59, tzinfo=UTC)}

    class Clock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return clock["now"]

    def open_days() -> list[tuple[str, str]]:
        with open_store(store_url) as store:
            return sorted((r.suite, r.config["day"]) for r in store.runs.newest(status="running") if r.production)

    monkeypatch.setattr(worker_module, "datetime", Clock)
    settings = otlp_settings(None, "travel", 1.0, None, None, None, ["weather-*=weather"])
    settings.settle_seconds, settings.worker = 0.0, False
    with TestClient(create_app(store_url, otlp=settings)) as client:
        worker = _worker(client)
        _send(client, token, genai_agent)
        _send(client, token, openinference_agent, service="weather-bot")
        assert worker.run_once() == 2
        assert worker.run_once() == 0  # idle, same day: both days stay open
        assert open_days() == [("travel", "2026-03-01"), ("weather", "2026-03-01")]
        clock["now"] = datetime(2026, 3, 2, 0, 0, 5, tzinfo=UTC)
        assert worker.run_once() == 0  # no trace came: the day is over all the same
        assert open_days() == []
        _send(client, token, genai_agent)
        assert worker.run_once() == 1
        assert open_days() == [("travel", "2026-03-02")]
    with open_store(store_url) as store:
        finished = sorted((r.suite, r.config["day"], r.status) for r in store.runs.newest() if r.production)
    assert finished[:2] == [("travel", "2026-03-01", "completed"), ("travel", "2026-03-02", "running")]
    assert finished[2] == ("weather", "2026-03-01", "completed")


def test_a_day_left_open_by_a_stopped_server_is_finished_at_start(
    client: TestClient, token: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = {"now": datetime(2026, 3, 1, 12, 0, tzinfo=UTC)}

    class Clock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return clock["now"]

    monkeypatch.setattr(worker_module, "datetime", Clock)
    _send(client, token, genai_agent)
    _worker(client).run_once()
    clock["now"] = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # the server was down for days
    assert _worker(client).run_once() == 0
    with open_store(store_url) as store:
        runs = [r for r in store.runs.newest("travel") if r.production]
    assert [(r.config["day"], r.status) for r in runs] == [("2026-03-01", "completed")]


def test_a_trace_whose_suite_is_missing_waits_in_the_queue(client: TestClient, token: str, store_url: str) -> None:
    _send(client, token, genai_agent)
    assert _worker(client, _settings(suite="gone")).run_once() == 0
    assert client.get("/api/otlp").json()["counts"]["waiting_for_suite"] == 1
    with open_store(store_url) as store:
        assert store.trace_queue.size() == 1


def test_the_command_line_needs_a_suite_or_a_judges_file_and_checks_the_suite(store_url: str) -> None:
    with pytest.raises(typer.Exit):
        otlp_settings(None, None, 1.0, None, None, None)
    with pytest.raises(typer.Exit):
        otlp_settings(None, "travel", 1.0, None, None, None, ["no-equals-sign"])
    app = create_app(store_url, otlp=otlp_settings(None, "nowhere", 1.0, None, None, None))
    with pytest.raises(typer.Exit):
        check_stored_suites(app)
    check_stored_suites(create_app(store_url, otlp=otlp_settings(None, "travel", 1.0, None, None, None)))
