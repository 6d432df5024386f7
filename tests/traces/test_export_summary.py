"""The ``OTLP export:`` line a run ends with: what was sent, where (no secret of the URL), and its cost."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurybox._cli.run_otel import RunExport, shown_endpoint


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/traces"),
        ("https://me:s3cret@otlp.example.com/v1/traces", "https://otlp.example.com/v1/traces"),
        ("https://otlp.example.com/v1/traces?api_key=s3cret#frag", "https://otlp.example.com/v1/traces?..."),
    ],
)
def test_the_endpoint_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert shown_endpoint(url) == shown
    assert "s3cret" not in shown_endpoint(url)


secrets = st.text(st.sampled_from("abcXYZ0189-_.~%!$&'()*+,;="), min_size=6, max_size=20)
hosts = st.sampled_from(["otlp.example.com", "127.0.0.1:4318", "[::1]:4318", "collector"])


@given(
    scheme=st.sampled_from(["http", "https"]),
    user=st.one_of(st.none(), secrets),
    password=st.one_of(st.none(), secrets),
    host=hosts,
    path=st.sampled_from(["", "/", "/v1/traces", "/otlp/v1/traces"]),
    key=st.one_of(st.none(), secrets),
    fragment=st.one_of(st.none(), secrets),
)
def test_no_credential_of_any_url_is_shown(
    scheme: str, user: str | None, password: str | None, host: str, path: str, key: str | None, fragment: str | None
) -> None:
    userinfo = "" if user is None else user + ("" if password is None else ":" + password) + "@"
    url = f"{scheme}://{userinfo}{host}{path}" + ("" if key is None else f"?api_key={key}")
    url += "" if fragment is None else f"#{fragment}"
    # What is shown is the scheme, host and path alone, and that a query was there: nothing of the secrets.
    assert shown_endpoint(url) == f"{scheme}://{host}{path}" + ("" if key is None else "?...")


def exporter(**changes: object) -> SimpleNamespace:
    values: dict[str, object] = {
        "spans": 40001,
        "requests": 13,
        "cases": 10000,
        "cpu_seconds": 0.7,
        "bytes_sent": 25_200_000,
        "failed_batches": 0,
        "endpoint": "https://me:s3cret@otlp.example.com/v1/traces",
    }
    values.update(changes)
    return SimpleNamespace(**values)


def test_the_line_says_spans_cases_requests_size_and_cpu() -> None:
    line = RunExport(exporter()).summary()
    assert line == (
        "OTLP export: 40,001 spans of 10,000 case(s) in 13 requests (25.2 MB) to "
        "https://otlp.example.com/v1/traces; 0.70 s of CPU, 70 us a case"
    )


def test_refused_batches_are_counted_and_a_plugin_without_counts_says_nothing() -> None:
    line = RunExport(exporter(failed_batches=2, requests=1, cases=0, bytes_sent=0)).summary()
    assert line is not None and line.endswith(
        "in 1 request to https://otlp.example.com/v1/traces; 0.70 s of CPU; 2 batch(es) not accepted (see the log)"
    )
    assert RunExport(object()).summary() is None
    assert RunExport(exporter(cpu_seconds="x")).summary() is None


def test_the_exporter_times_a_sample_of_its_cases_and_counts_every_one() -> None:
    from otel_exports import Keep

    from jurybox.core import CaseRecord, Judgment
    from jurybox.traces._exporter import TIMED_EVERY, OtlpExporter

    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    records = [CaseRecord(f"c{i}", Judgment.passed(1.0, "ok", judge="j")) for i in range(2 * TIMED_EVERY + 1)]
    exporter.export_records(records, run_name="r")
    exporter.close()
    assert exporter.cases == len(records)
    assert exporter._timed == 3  # the 1st, 17th and 33rd
    assert exporter.cpu_seconds > 0
    assert exporter.spans == len(keep.spans) and exporter.requests >= 1  # type: ignore[attr-defined]
