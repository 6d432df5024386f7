"""``jurybox serve --otlp``: traces received at /v1/traces, queued in the store, judged as production runs."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from otel_exports import genai_agent, openinference_agent, record, to_otlp_json

from jurybox.judges import contains, tool_calls
from jurybox.store import open_store
from jurybox.traces import Sampler
from jurybox.web import OtlpSettings, OtlpWorker, create_app

PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def token(store_url: str) -> str:
    with open_store(store_url) as store:
        return store.users.add_user("collector", "ingest")


def _settings(**changes: object) -> OtlpSettings:
    base: dict[str, object] = {
        "judges": [tool_calls(["search_hotels"]), contains("EUR")],
        "suite": "travel",
        "settle_seconds": 0.0,
        "poll_seconds": 0.05,
        "worker": False,
    }
    base.update(changes)
    return OtlpSettings(**base)  # type: ignore[arg-type]


@pytest.fixture
def client(store_url: str) -> Iterator[TestClient]:
    app = create_app(store_url, otlp=_settings())
    with TestClient(app) as test_client:  # no background worker: these tests run it by hand
        yield test_client


def _body() -> bytes:
    spans = record(genai_agent, functools.partial(genai_agent, city="Rome"), openinference_agent)
    return bytes(encode_spans(spans).SerializeToString())


def _worker(client: TestClient, settings: OtlpSettings | None = None) -> OtlpWorker:
    app = client.app
    return OtlpWorker(app.state.jurybox.access, settings or app.state.otlp, app.state.otlp_counters)  # type: ignore[attr-defined]


def test_protobuf_traces_are_queued_then_judged_into_the_production_run(
    client: TestClient, token: str, store_url: str
) -> None:
    answer = client.post("/v1/traces", content=_body(), headers={**PROTOBUF, "Authorization": f"Bearer {token}"})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/x-protobuf"
    assert client.get("/api/otlp").json()["queued"] == 3
    assert _worker(client).run_once() == 3
    with open_store(store_url) as store:
        [run] = store.runs.newest("travel")
        assert run.config["kind"] == "production" and run.status == "running"
        records = store.results.read_all(run.id)
        assert sorted(r.status.value for r in records) == ["fail", "pass", "pass"]
        assert all(r.metadata["trace_id"] in r.case for r in records)
        assert store.trace_queue.size() == 0


def test_json_traces_are_accepted(client: TestClient, token: str) -> None:
    body = json.dumps(to_otlp_json(encode_spans(record(genai_agent))))
    answer = client.post(
        "/v1/traces", content=body, headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200 and answer.json() == {}
    assert _worker(client).run_once() == 1


def test_no_token_a_viewer_token_or_a_bad_body_is_refused_and_counted(
    client: TestClient, token: str, store_url: str
) -> None:
    with open_store(store_url) as store:
        viewer = store.users.add_user("reader", "viewer")
    assert client.post("/v1/traces", content=_body(), headers=PROTOBUF).status_code == 401
    assert (
        client.post(
            "/v1/traces", content=_body(), headers={**PROTOBUF, "Authorization": f"Bearer {viewer}"}
        ).status_code
        == 403
    )
    bad = client.post(
        "/v1/traces", content=b"\xff\x00garbage", headers={**PROTOBUF, "Authorization": f"Bearer {token}"}
    )
    assert bad.status_code == 400
    wrong_type = client.post(
        "/v1/traces", content=b"x", headers={"Content-Type": "text/plain", "Authorization": f"Bearer {token}"}
    )
    assert wrong_type.status_code == 415
    counts = client.get("/api/otlp").json()["counts"]
    assert counts["unauthorized"] == 1 and counts["forbidden"] == 1 and counts["malformed"] == 1


def test_an_ingest_token_opens_no_dashboard_session(store_url: str, token: str) -> None:
    with open_store(store_url) as store:
        assert store.users.log_in(token) is None


def test_an_oversized_body_is_413_and_a_full_queue_429(store_url: str, token: str) -> None:
    app = create_app(store_url, otlp=_settings(max_body_bytes=100, max_queued=2))
    with TestClient(app) as client:
        auth = {**PROTOBUF, "Authorization": f"Bearer {token}"}
        assert client.post("/v1/traces", content=_body(), headers=auth).status_code == 413
    app = create_app(store_url, otlp=_settings(max_queued=2))
    with TestClient(app) as client:
        answer = client.post("/v1/traces", content=_body(), headers=auth)
        assert answer.status_code == 429 and answer.headers["Retry-After"]
        assert client.get("/api/otlp").json()["queued"] == 0  # all or nothing


def test_the_sampler_rate_and_filters(client: TestClient, token: str, store_url: str) -> None:
    client.post("/v1/traces", content=_body(), headers={**PROTOBUF, "Authorization": f"Bearer {token}"})
    only_agents = _settings(sampler=Sampler(root_names=("invoke_agent *",)))
    assert _worker(client, only_agents).run_once() == 2
    assert client.get("/api/otlp").json()["counts"]["filtered_out"] == 1
    assert Sampler(rate=0.0).keeps_id("f" * 32) is False
    import random

    ids = [f"{random.Random(i).getrandbits(128):032x}" for i in range(4000)]
    kept = sum(Sampler(rate=0.25).keeps_id(trace_id) for trace_id in ids)
    assert 800 < kept < 1200


def test_secrets_in_spans_are_redacted_before_they_are_stored(store_url: str, token: str) -> None:
    from jurybox.pytest_plugin import Redactor

    redactor = Redactor()
    app = create_app(store_url, otlp=_settings(redact=lambda text: str(redactor.redact_body(text))))
    key = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3"

    def leaky(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("invoke_agent x") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("input.value", f"my key is {key}")
            span.set_attribute("output.value", "noted")

    with TestClient(app) as client:
        body = encode_spans(record(leaky)).SerializeToString()
        assert (
            client.post(
                "/v1/traces", content=body, headers={**PROTOBUF, "Authorization": f"Bearer {token}"}
            ).status_code
            == 200
        )
    with open_store(store_url) as store:
        [trace_id] = store.trace_queue.ready(settle=__import__("datetime").timedelta(0))
        [stored] = store.trace_queue.claim(trace_id)
    assert key not in stored and "my key is" in stored


def test_a_claimed_trace_is_judged_once_even_when_recorded_twice(
    client: TestClient, token: str, store_url: str
) -> None:
    client.post("/v1/traces", content=_body(), headers={**PROTOBUF, "Authorization": f"Bearer {token}"})
    worker = _worker(client)
    assert worker.run_once() == 3
    with open_store(store_url) as store:
        [run] = store.runs.newest("travel")
        again = store.results.record_many(run.id, store.results.read_all(run.id))
    assert again == [False, False, False]  # a worker killed after recording and before deleting: no double count


def test_the_background_worker_judges_what_comes_in(store_url: str, token: str) -> None:
    import time

    app = create_app(store_url, otlp=_settings(worker=True))
    with TestClient(app) as client:
        client.post("/v1/traces", content=_body(), headers={**PROTOBUF, "Authorization": f"Bearer {token}"})
        deadline = time.monotonic() + 30
        while client.get("/api/otlp").json()["counts"].get("judged_traces", 0) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get("/api/otlp").json()["counts"]["judged_agent_runs"] == 3
        runs = client.get("/api/runs").json()
    assert "travel" in json.dumps(runs)


def test_concurrent_posts_are_committed_together_and_all_answered(store_url: str, token: str) -> None:
    import asyncio

    import httpx

    app = create_app(store_url, otlp=_settings())
    auth = {**PROTOBUF, "Authorization": f"Bearer {token}"}
    body = _body()  # three traces a request

    async def post_all() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            answers = await asyncio.gather(*(client.post("/v1/traces", content=body, headers=auth) for _ in range(40)))
        return [answer.status_code for answer in answers]

    assert asyncio.run(post_all()) == [200] * 40
    with open_store(store_url) as store:
        assert store.trace_queue.size() == 40 * 3  # every 2xx is a committed row
    _, commit = app.state.otlp_commit
    assert commit.transactions < 40  # the requests that waited shared a transaction


def test_a_group_commit_refuses_only_the_requests_that_do_not_fit(store_url: str) -> None:
    rows = [("a" * 32, True, "[]")]
    with open_store(store_url) as store:
        assert store.trace_queue.enqueue_groups([rows * 2, rows * 2, rows], max_queued=3) == [True, False, True]
        assert store.trace_queue.size() == 3
