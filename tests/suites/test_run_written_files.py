"""``jurybox run`` always tells the terminal the summary and every file it wrote; run ids have one form."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER

from jurybox._cli.run import EXIT_NOT_PASSED, EXIT_OK, RunRequest, execute

SUITE = TOY_HEADER + (
    "cases:\n"
    "  - name: beach\n    prompt: listings\n    judges: [{contains: Beach}]\n"
    "  - name: lighthouse\n    prompt: listings\n    judges: [{contains: Lighthouse}]\n"
)
#: The store's run ids: start time (UTC) then 6 hex digits; --no-store runs use the same form.
RUN_ID = r"\d{8}-\d{6}-[0-9a-f]{6}"


def run(request: RunRequest) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = execute(request, console=Console(file=out, width=80), status=Console(file=err, width=80))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    return tmp_path


def test_html_to_a_directory_prints_the_summary_and_the_file(toy_suite: Callable[[str], Path], in_tmp: Path) -> None:
    suite = toy_suite(SUITE)
    code, out, status = run(RunRequest(suites=(suite,), formats=("html",), output="reports", no_store=True))
    assert code == EXIT_NOT_PASSED, status
    assert out == ""  # no console table was asked for
    flat = status.replace("\n", "")
    assert re.search(rf"toy · run {RUN_ID} · completed: 1/2 passed \(1 failed\)", flat), status
    assert "wrote html report: reports/toy.html" in flat
    assert (in_tmp / "reports" / "toy.html").is_file()


def test_console_and_files_list_every_file_and_no_second_summary(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    suite = toy_suite(SUITE.replace("Lighthouse", "Beach"))
    formats = ("console", "json", "junit")
    code, out, status = run(RunRequest(suites=(suite,), formats=formats, output="out", no_store=True))
    assert code == EXIT_OK, status
    assert "beach" in out and "lighthouse" in out  # the table, with its totals
    flat = status.replace("\n", "")
    assert "wrote json report: out/toy.json" in flat and "wrote junit report: out/toy.junit.xml" in flat
    assert " · completed: " not in flat  # the table already said it


def test_no_store_run_ids_have_the_stored_form(toy_suite: Callable[[str], Path], in_tmp: Path) -> None:
    suite = toy_suite(SUITE)
    _, _, kept = run(RunRequest(suites=(suite,), store=f"sqlite:///{in_tmp / 'j.db'}"))
    _, _, memory = run(RunRequest(suites=(suite,), no_store=True))
    ids = [re.search(r"^run (\S+):", text, re.MULTILINE) for text in (kept, memory)]
    assert all(found is not None and re.fullmatch(RUN_ID, found.group(1)) for found in ids), (kept, memory)
