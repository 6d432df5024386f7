"""Report formats are plug-ins: a registered format is written like a built-in one, under the same naming rule."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from jurybox.core import KIND_REPORT, PluginRegistry
from jurybox.report import (
    FORMATS,
    ReportFormat,
    RunReport,
    check_report_output,
    register_report_format,
    report_filename,
    report_formats,
    write_reports,
)


def tsv(report: RunReport) -> Iterator[str]:
    yield "case\tstatus\n"
    for case in report.cases:
        yield f"{case.name}\t{case.status.value}\n"


@pytest.fixture
def tabbed() -> Iterator[None]:
    register_report_format("tsv", ReportFormat(".tsv", tsv), aliases=("tabs",), summary="one row per case")
    yield
    PluginRegistry.default().unregister(KIND_REPORT, "tsv")


def test_a_registered_format_is_written_with_its_extension(report: RunReport, tmp_path: Path, tabbed: None) -> None:
    written = write_reports(report, ["json", "tabs", "tsv"], tmp_path)

    assert written == {"json": tmp_path / "property-agent.json", "tsv": tmp_path / "property-agent.tsv"}
    lines = (tmp_path / "property-agent.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "case\tstatus" and len(lines) == len(report.cases) + 1
    assert report_filename("a suite", "tsv") == "a-suite.tsv"
    assert report_formats() == [*FORMATS, "tsv"]


def test_one_registered_format_with_a_file_name_and_on_stdout(
    report: RunReport, tmp_path: Path, tabbed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "rows.txt"
    console = Console(file=io.StringIO(), width=200)
    assert write_reports(report, ["console", "tsv"], target, console=console) == {"console": None, "tsv": target}
    assert target.read_text(encoding="utf-8").startswith("case\tstatus\n")
    assert write_reports(report, ["tsv"], "-") == {"tsv": None}
    assert capsys.readouterr().out.startswith("case\tstatus\n")


def test_a_misspelt_format_gets_the_closest_name(report: RunReport, tmp_path: Path, tabbed: None) -> None:
    with pytest.raises(ValueError) as caught:
        check_report_output(["jsn", "tvs", "xml"], tmp_path)
    assert str(caught.value) == (
        "unknown report format(s) 'jsn' (did you mean 'json'?), 'tvs' (did you mean 'tsv'?), 'xml'; "
        "valid: console, json, junit, markdown, html, tsv"
    )


def test_a_format_needs_a_renderer_and_an_extension() -> None:
    with pytest.raises(ValueError, match=r"give render and an extension such as '\.csv'"):
        register_report_format("bad", ReportFormat("csv", tsv))
    with pytest.raises(ValueError, match="give render and an extension"):
        register_report_format("bad", ReportFormat(".csv"))
    assert PluginRegistry.default().get(KIND_REPORT, "bad") is None
