"""write_reports: several formats in one call, one naming rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from jurybox.report import FORMATS, RunReport, from_json, report_filename, to_html, write_reports


def test_several_formats_go_to_a_directory_named_by_suite(report: RunReport, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    written = write_reports(report, ["json", "junit", "markdown", "html"], out)
    assert written == {
        "json": out / "property-agent.json",
        "junit": out / "property-agent.junit.xml",
        "markdown": out / "property-agent.md",
        "html": out / "property-agent.html",
    }
    assert from_json(written["json"].read_text(encoding="utf-8")).records == report.records  # type: ignore[union-attr]
    assert (out / "property-agent.html").read_text(encoding="utf-8") == to_html(report)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written.values() if p)  # no temp files left


def test_one_format_with_a_file_name_writes_that_file(report: RunReport, tmp_path: Path) -> None:
    target = tmp_path / "ci" / "junit.xml"
    assert write_reports(report, ["junit"], target) == {"junit": target}
    assert target.read_text(encoding="utf-8").startswith('<?xml version="1.0" encoding="UTF-8"?>')


def test_one_format_into_an_existing_directory(report: RunReport, tmp_path: Path) -> None:
    folder = tmp_path / "out.d"
    folder.mkdir()
    assert write_reports(report, ["html"], folder) == {"html": folder / "property-agent.html"}


def test_dash_is_standard_output(report: RunReport, capsys: pytest.CaptureFixture[str]) -> None:
    assert write_reports(report, ["json"], "-") == {"json": None}
    assert json.loads(capsys.readouterr().out)["suite"] == "property-agent"
    with pytest.raises(ValueError, match="takes one format"):
        write_reports(report, ["json", "html"], "-")


def test_console_prints_and_writes_no_file(report: RunReport, tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    written = write_reports(report, ["console", "markdown", "console"], tmp_path, console=console)
    assert written == {"console": None, "markdown": tmp_path / "property-agent.md"}
    assert "revenue-october" in console.export_text()


def test_bad_requests_are_refused(report: RunReport, tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"unknown report format\(s\) 'xml'; valid: console, json, junit, markdown, html"
    ):
        write_reports(report, ["xml"], tmp_path)
    with pytest.raises(ValueError, match=r"write files: give an output path \(--output\)"):
        write_reports(report, ["json"], None)
    assert FORMATS == ("console", "json", "junit", "markdown", "html")


def test_filenames_are_safe() -> None:
    assert report_filename("../etc/passwd suite", "json") == "etc-passwd-suite.json"
    assert report_filename("Property Agent (EU)", "junit") == "Property-Agent-EU.junit.xml"
    assert report_filename("///", "markdown") == "suite.md"


def test_written_files_honour_the_umask(report: RunReport, tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        written = write_reports(report, ["json"], tmp_path / "r.json")
    finally:
        os.umask(umask)
    path = written["json"]
    assert path is not None
    assert path.stat().st_mode & 0o777 == 0o644
