"""``jurybox plugins`` lists every kind; ``jurybox run --executor`` takes any registered executor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from jurybox._cli.run_executor import ExecutorChoice, executor_problem, executor_resume_args, executor_settings
from jurybox.cli import app
from jurybox.core import KIND_EXECUTOR, PLUGIN_KINDS, PluginRegistry


def test_every_kind_is_listed_with_jurybox_s_own_plugins() -> None:
    done = CliRunner().invoke(app, ["plugins", "--json"])

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert list(data["kinds"]) == list(PLUGIN_KINDS) and data["entry_point_group"] == "jurybox"
    names = {kind: {p["name"] for p in members} for kind, members in data["kinds"].items()}
    assert {"contains", "correctness", "rubric"} <= names["judge"]
    assert names["provider"] >= {"openai", "anthropic", "ollama"}
    assert names["agent"] >= {"python", "openai", "http", "mcp"}
    assert names["executor"] >= {"local", "processes", "ray"}
    assert names["report"] >= {"console", "json", "junit", "markdown", "html"}
    assert names["exporter"] >= {"otlp"}
    openai = next(p for p in data["kinds"]["provider"] if p["name"] == "openai")
    assert openai["from"] == "jurybox" and openai["module"] == "jurybox.models._openai" and openai["lazy"]
    assert openai["summary"].startswith("OpenAI Chat Completions")


def test_the_tables_and_a_kind_of_its_own() -> None:
    done = CliRunner().invoke(app, ["plugins", "--kind", "report", "--kind", "exporter"], env={"COLUMNS": "160"})

    assert done.exit_code == 0, done.output
    assert "report formats (5)" in done.stdout and "exporters (1)" in done.stdout
    assert "otlp (otel, opentelemetry)" in done.stdout
    assert "judges" not in done.stdout
    wrong = CliRunner().invoke(app, ["plugins", "--kind", "reporter"])
    assert wrong.exit_code == 2 and "unknown kind 'reporter'" in wrong.output


@dataclass(frozen=True)
class Request:
    executor: str
    workers: int = 1
    no_store: bool = False
    ray_address: str | None = None
    actors: int | None = None


class Picky:
    """An executor that runs nowhere without a store."""

    def check_options(self, options: Any) -> None:
        if options.workers > 1:
            raise ValueError("no workers here")

    def check(self, options: Any, *, has_store: bool, own_target: bool) -> None:
        if not has_store:
            raise ValueError("needs a store")

    def create(self, runner: Any, todo: int) -> Any:
        raise NotImplementedError


@pytest.fixture
def picky() -> Iterator[str]:
    PluginRegistry.default().register(KIND_EXECUTOR, "picky", Picky(), aliases=("choosy",))
    yield "picky"
    PluginRegistry.default().unregister(KIND_EXECUTOR, "picky")


def test_an_installed_executor_is_a_choice_with_its_default_settings(picky: str) -> None:
    choice = ExecutorChoice.parse("choosy")

    assert choice == "picky" and choice.value == "picky"
    assert executor_problem(Request(choice, no_store=True)) == "--executor picky: needs a store"
    assert executor_problem(Request(choice, workers=2)) == "--executor picky: no workers here"
    assert executor_problem(Request(choice)) is None
    assert executor_settings(Request(choice)) == {}  # its defaults: the Ray options are Ray's
    assert executor_resume_args(Request(choice)) == [
        ("--executor", "picky"),
        ("--ray-address", None),
        ("--actors", None),
    ]
    assert executor_problem(Request(ExecutorChoice.ray, ray_address=None, actors=None, workers=2)) == (
        "--workers forks processes on this machine; with --executor ray use --actors N"
    )
    assert executor_problem(Request(choice, actors=3)) == "--ray-address and --actors are for --executor ray"


def test_an_unknown_executor_is_a_usage_error_with_the_closest_name() -> None:
    done = CliRunner().invoke(app, ["run", "suite.yaml", "--executor", "rey"])

    assert done.exit_code == 2
    assert "unknown executor 'rey' (did you mean 'ray'?)" in done.output and "Traceback" not in done.output
