"""``jurybox run --store URL --suite NAME``: the current version of a stored suite runs, as the web editor left it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import text
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import import_suite_file, open_store
from jurybox.web._case_check import check_case

REPO = Path(__file__).resolve().parents[2]


def _stored_suite(folder: Path, agent: dict[str, object]) -> str:
    """A store holding a one-case suite (as ``jurybox store import`` leaves it); its URL."""
    suite = {
        "name": "pm-suite",
        "agent": agent,
        "defaults": {"threshold": 0.7, "timeout": 60},
        "cases": [
            {
                "name": "counts-listings",
                "prompt": "How many listings do I have?",
                "judges": [{"matches": r"\b3 listings\b"}],
            }
        ],
    }
    file = folder / "suite.yaml"
    file.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    url = f"sqlite:///{folder / 'store.db'}"
    with open_store(url) as store:
        import_suite_file(store, file)
    return url


def test_a_case_written_in_the_store_runs_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # where the suite was imported from: its agent module resolves from here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    agent = {
        "python": "examples.property_agent.agent:make_agent",
        "options": {"db_path": str(tmp_path / "a.db"), "offline": True},
    }
    url = _stored_suite(tmp_path, agent)
    # The case a product manager writes in the browser: checked and saved the way the form saves it.
    written = {
        "name": "pm-revenue",
        "description": "Written in the browser",
        "prompt": "Revenue for the Beach House in June 2026",
        "expect_tools": {"calls": ["get_revenue"], "mode": "subset"},
        "judges": [{"contains": "$6,190"}],
    }
    with open_store(url) as store:
        problems, elsewhere, spec = check_case(store.suites.export("pm-suite"), written, None)
        assert problems == [] and elsewhere == [] and spec is not None
        version = store.authoring.save_case(
            "pm-suite", "pm-revenue", spec, author="pm.alice", base_version=None, action="create"
        )
    result = CliRunner().invoke(
        app, ["run", "--store", url, "--suite", "pm-suite", "--no-progress", "-k", "pm-revenue"]
    )
    assert result.exit_code == 0, result.output
    with open_store(url) as store:
        run = store.runs.latest("pm-suite")
        assert run is not None and run.status == "completed" and run.recorded == 1
        records = {record.case: record for record in store.results.read_all(run.id)}
        assert records["pm-revenue"].status.value == "pass"
        # The run ran, and recorded, the very version the editor saved: no new version appeared.
        current = store.authoring.current_version("pm-suite", "pm-revenue")
        assert current is not None and current.id == version
        with store.engine.connect() as connection:
            ran = connection.execute(
                text("select case_name, case_id from run_cases where run_id = :run"), {"run": run.id}
            ).all()
        assert [tuple(row) for row in ran] == [("pm-revenue", version)]


def test_relative_paths_of_a_stored_suite_resolve_against_its_file_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "agents").mkdir(parents=True)
    (project / "seeds").mkdir()
    (project / "seeds" / "rules.md").write_text(
        "---\nid: rules\ntype: policy\ntitle: House rules\n---\nNo parties.\n", encoding="utf-8"
    )
    (project / "agents" / "echo.py").write_text(
        "class Agent:\n"
        "    def __init__(self, seeds):\n"
        "        self.seeds = seeds\n"
        "    def respond(self, message, session_id):\n"
        "        return f'You have 3 listings and {len(self.seeds)} rules.'\n"
        "def make_agent(seeds=()):\n"
        "    return Agent(seeds)\n",
        encoding="utf-8",
    )
    suite = {
        "name": "pm-suite",
        "agent": {"python": "agents/echo.py:make_agent"},
        "seeds": "seeds/",
        "cases": [{"name": "counts", "prompt": "How many listings?", "judges": [{"contains": "1 rules"}]}],
    }
    (project / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.chdir(project)  # imported from the suite's own folder, by relative name
    imported = CliRunner().invoke(app, ["store", "import", "suite.yaml", "--store", url])
    assert imported.exit_code == 0, imported.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # and run from a folder that has none of its files
    result = CliRunner().invoke(app, ["run", "--store", url, "--suite", "pm-suite", "--no-progress"])
    assert result.exit_code == 0, result.output
    with open_store(url) as store:
        run = store.runs.latest("pm-suite")
        assert run is not None and run.recorded == 1 and run.passed == 1
        # The run page names the stored suite and its folder, not the deleted temporary file.
        assert run.config["stored_suite"] == "pm-suite" and run.config["suite_folder"] == str(project)
        # The first run after the import ran the versions the import made: no new version, no silent edit.
        history = store.authoring.case_history("pm-suite", "counts")
        assert [entry.action for entry in history] == ["import"]


def test_a_suite_stored_only_by_running_its_file_runs_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "agents").mkdir(parents=True)
    (project / "agents" / "echo.py").write_text(
        "def respond(message, session_id):\n    return 'You have 3 listings.'\n", encoding="utf-8"
    )
    suite = {
        "name": "file-suite",
        "agent": {"python": "agents/echo.py:respond"},
        "cases": [{"name": "counts", "prompt": "How many listings?", "judges": [{"contains": "3 listings"}]}],
    }
    (project / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    first = CliRunner().invoke(app, ["run", str(project / "suite.yaml"), "--store", url, "--no-progress"])
    assert first.exit_code == 0, first.output
    monkeypatch.chdir(tmp_path)
    again = CliRunner().invoke(app, ["run", "--store", url, "--suite", "file-suite", "--no-progress"])
    assert again.exit_code == 0, again.output
    with open_store(url) as store:
        assert store.suites.export("file-suite")["agent"] == {"python": "agents/echo.py:respond"}


def test_a_stored_suite_without_an_agent_says_why_in_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:
        store.runs.begin("bare", cases={"a": {"prompt": "hi"}})
    result = CliRunner().invoke(app, ["run", "--store", url, "--suite", "bare", "--no-progress"])
    said = result.output.replace("\n", " ")
    assert result.exit_code == 2 and "has no agent to run" in said and "Traceback" not in said, result.output


def test_stored_suite_usage_problems_are_one_line_errors(tmp_path: Path) -> None:
    url = _stored_suite(tmp_path, {"python": "agents/echo.py:respond"})
    cases = {
        "unknown suite": (["run", "--store", url, "--suite", "nope"], "no suite 'nope'"),
        "files and --suite": (["run", "x.yaml", "--store", url, "--suite", "pm-suite"], "not both"),
        "--no-store": (["run", "--suite", "pm-suite", "--no-store"], "--no-store"),
        "nothing to run": (["run", "--store", url], "--suite NAME"),
    }
    for label, (args, words) in cases.items():
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (label, result.output)
        said = result.output.replace("\n", " ")
        assert words in said and "Traceback" not in said, (label, result.output)
