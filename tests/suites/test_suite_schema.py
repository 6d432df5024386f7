"""``jurybox schema suite``: a JSON Schema that accepts every suite file the loader accepts, and refuses typos.

The corpus is every suite written in this repository that loads: the example suite,
the suite texts of the tests (string constants, joined as the tests join them) and of
the docs (YAML and Python blocks). Then generated judge entries: whatever the loader
takes, the schema takes too (an editor must never mark a working suite wrong). And a
list of broken suites the loader refuses that the schema refuses as well.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from suite_helpers import HERE, REPO
from typer.testing import CliRunner

from jurybox.agents import adapter_names
from jurybox.cli import app
from jurybox.core import KIND_JUDGE, TIERS, PluginRegistry
from jurybox.suites import JudgeRegistry, SuiteError, load_suite, suite_schema

EXAMPLE = REPO / "examples" / "property_agent" / "suite.yaml"
HEADER = 'name: toy\nagent: {python: "toy_agent:make_agent"}\n'


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    built = suite_schema()
    Draft202012Validator.check_schema(built)
    Draft7Validator.check_schema(built)  # editors that implement draft 7 read it too
    return built


def errors(schema: dict[str, Any], data: Any) -> list[str]:
    """What the schema says against ``data``, by both drafts (they must agree)."""
    found = sorted(e.message for e in Draft202012Validator(schema).iter_errors(data))
    assert bool(found) == bool(list(Draft7Validator(schema).iter_errors(data))), found
    return found


def loads(text: str, folder: Path, *, check_agent: bool = True) -> bool:
    """True when the loader accepts the suite text, read from a file in ``folder`` (its agent, seeds...)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=folder, delete=False, encoding="utf-8") as file:
        file.write(text)
    path = Path(file.name)
    try:
        load_suite(path, check_agent=check_agent)
    except (SuiteError, ValueError):
        return False
    finally:
        path.unlink()
    return True


# -- the corpus --------------------------------------------------------------------------------------


def _strings(tree: ast.AST) -> Iterator[str]:
    """Every string constant of a module, module-level names and + joined as the module joins them."""
    names: dict[str, str] = {}

    def value(node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return value(node.left) + value(node.right)
        raise ValueError("not a constant string")

    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError):
                names[node.targets[0].id] = value(node.value)
    for node in ast.walk(tree):
        try:
            yield value(node)
        except ValueError:
            continue


def _suite_texts(texts: Iterator[str]) -> Iterator[str]:
    for text in texts:
        if "agent" not in text or "cases" not in text:
            continue
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and {"name", "agent"} <= set(data) and ({"cases", "cases_file"} & set(data)):
            yield text


def corpus() -> list[tuple[str, str, Path]]:
    """(where, suite text, the folder it loads from) for every suite text written in the repository."""
    found = {EXAMPLE.read_text(encoding="utf-8"): ("examples/property_agent/suite.yaml", EXAMPLE.parent)}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path == Path(__file__):  # this file's broken suites are below
            continue
        for text in _suite_texts(_strings(ast.parse(path.read_text(encoding="utf-8")))):
            found.setdefault(text, (str(path.relative_to(REPO)), path.parent))
    for page in sorted((REPO / "docs").glob("*.md")):
        markdown = page.read_text(encoding="utf-8")
        blocks = re.findall(r"```yaml\n(.*?)```", markdown, re.S)
        for code in re.findall(r"```python\n(.*?)```", markdown, re.S):
            blocks.extend(_strings(ast.parse(code)))
        for text in _suite_texts(iter(blocks)):
            found.setdefault(text, (str(page.relative_to(REPO)), HERE))
    return [(where, text, folder) for text, (where, folder) in found.items()]


CORPUS = corpus()


def test_the_corpus_has_the_example_and_the_tests_suites() -> None:
    places = {where for where, _, _ in CORPUS}
    assert "examples/property_agent/suite.yaml" in places
    assert len(CORPUS) >= 15 and any(place.startswith("tests/suites/") for place in places)


@pytest.mark.parametrize(("where", "text", "folder"), CORPUS, ids=[f"{w}#{i}" for i, (w, _, _) in enumerate(CORPUS)])
def test_every_suite_that_loads_is_valid(
    where: str, text: str, folder: Path, schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")  # a suite naming openai:... loads without a real key
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.chdir(REPO)
    agent = yaml.safe_load(text).get("agent")
    if isinstance(agent, dict) and not set(map(str, agent)) & set(adapter_names()):
        pytest.skip(f"{where}: its agent adapter is registered by its test")
    # Their agents' modules are written by their tests: the rest of each suite is loaded and checked.
    if not loads(text, folder, check_agent=False):
        pytest.skip(f"{where}: the loader refuses it here (a seed file its test writes, or a mistake on purpose)")
    assert errors(schema, yaml.safe_load(text)) == [], where


def test_the_example_suite_loads_and_is_valid(schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    load_suite(EXAMPLE)
    assert errors(schema, yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))) == []


# -- generated judge entries -------------------------------------------------------------------------

REGISTRY = sorted(JudgeRegistry.default(), key=lambda entry: entry.name)
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1, 5),
    st.floats(0, 1, allow_nan=False),
    st.sampled_from(["hello", "EUR", "\\d+", "", "openai:m@http://127.0.0.1:9/v1", "strict"]),
    st.lists(st.sampled_from(["a", "b", "get_listings"]), max_size=2),
)


@st.composite
def judge_entries(draw: st.DrawFn) -> Any:
    factory = draw(st.sampled_from(REGISTRY))
    form = draw(st.sampled_from(["bare", "null", "value", "options"]))
    if form == "bare":
        return factory.name
    if form == "null":
        return {factory.name: None}
    if form == "value":
        return {factory.name: draw(VALUES)}
    names = [option.name for option in factory.options] + ["tier"]
    chosen = draw(st.lists(st.sampled_from(names), max_size=3, unique=True))
    options = {name: draw(st.sampled_from(list(TIERS))) if name == "tier" else draw(VALUES) for name in chosen}
    return {factory.name: options}


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(entry=judge_entries())
def test_a_judge_entry_the_loader_takes_the_schema_takes(entry: Any, schema: dict[str, Any]) -> None:
    suite = {"name": "toy", "agent": {"python": "toy_agent:make_agent"}, "cases": [{"name": "a", "prompt": "hi"}]}
    suite["cases"][0]["judges"] = [entry]
    if loads(yaml.safe_dump(suite), HERE):
        assert errors(schema, suite) == [], entry


# -- broken suites -----------------------------------------------------------------------------------

BROKEN = {
    "unknown top-level key": HEADER + "judge_modle: openai:m\ncases: [{name: a, prompt: hi}]\n",
    "unknown judge": HEADER + "cases: [{name: a, prompt: hi, judges: [containz]}]\n",
    "unknown judge with options": HEADER + "cases: [{name: a, prompt: hi, judges: [{containz: hi}]}]\n",
    "unknown judge option": HEADER
    + "cases: [{name: a, prompt: hi, judges: [{contains: {text: a, case_sensitiv: true}}]}]\n",
    "two keys in one judge entry": HEADER + "cases: [{name: a, prompt: hi, judges: [{contains: a, matches: b}]}]\n",
    "unknown voting": HEADER + "cases: [{name: a, prompt: hi, voting: plurality, judges: [valid_json]}]\n",
    "unknown jury key": HEADER + "cases: [{name: a, prompt: hi, judges: [{jury: {judges: [valid_json], vote: x}}]}]\n",
    "threshold above 1": HEADER + "defaults: {threshold: 1.5}\ncases: [{name: a, prompt: hi}]\n",
    "no case name": HEADER + "cases: [{prompt: hi}]\n",
    "zero concurrency": HEADER + "concurrency: 0\ncases: [{name: a, prompt: hi}]\n",
    "negative retries": HEADER + "defaults: {retries: -1}\ncases: [{name: a, prompt: hi}]\n",
    "misspelt adapter": 'name: toy\nagent: {pythn: "toy_agent:make_agent"}\ncases: [{name: a, prompt: hi}]\n',
    "two adapters": 'name: toy\nagent: {python: "toy_agent:make_agent", http: {url: "http://x"}}\n'
    "cases: [{name: a, prompt: hi}]\n",
    "unknown http key": 'name: toy\nagent: {http: {url: "http://x", verb: GET}}\ncases: [{name: a, prompt: hi}]\n',
    "http url not http": 'name: toy\nagent: {http: {url: "ftp://x"}}\ncases: [{name: a, prompt: hi}]\n',
    "bad tool mode": HEADER + "cases: [{name: a, prompt: hi, expect_tools: {calls: [x], mode: exactly}}]\n",
    "judge tier of another kind": HEADER
    + "cases: [{name: a, prompt: hi, judges: [{correctness: {tier: deterministic}}]}]\n",
}


@pytest.mark.parametrize("why", sorted(BROKEN))
def test_a_broken_suite_is_refused_by_the_loader_and_by_the_schema(why: str, schema: dict[str, Any]) -> None:
    text = BROKEN[why]

    assert not loads(text, HERE), why
    assert errors(schema, yaml.safe_load(text)), why


# -- what an editor shows ----------------------------------------------------------------------------


def test_judges_carry_their_options_and_docs(schema: dict[str, Any]) -> None:
    judges = schema["$defs"]["JudgeEntry"]["anyOf"][1]["properties"]
    correctness = judges["correctness"]
    options = next(form for form in correctness["anyOf"] if form.get("type") == "object")["properties"]
    assert correctness["description"].startswith("Is the output correct") and "llm_judge" in correctness["description"]
    assert options["threshold"] == {"type": "number", "description": "Pass at this score or above (default 0.7)."}
    assert "retries" in options and "samples" in options  # the shared LLM settings, by name
    assert set(judges) >= {entry.name for entry in REGISTRY} | {"jury", "cascade", "python"}
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    adapters = [form["title"] for form in schema["properties"]["agent"]["oneOf"]]
    assert adapters[:4] == ["python", "openai", "http", "mcp"]


def test_jurybox_schema_suite_writes_the_file_or_prints_it(tmp_path: Path, schema: dict[str, Any]) -> None:
    printed = CliRunner().invoke(app, ["schema", "suite"])
    target = tmp_path / "schemas" / "suite.schema.json"
    written = CliRunner().invoke(app, ["schema", "suite", "--output", str(target)])

    assert printed.exit_code == 0 and json.loads(printed.stdout) == schema
    assert written.exit_code == 0 and json.loads(target.read_text(encoding="utf-8")) == schema
    blocked = CliRunner().invoke(app, ["schema", "suite", "--output", str(target / "under-a-file.json")])
    assert blocked.exit_code == 2 and "cannot write" in blocked.output


def test_the_judges_of_a_suite_s_plugins_module_are_added_with_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "zz_schema_judges.py").write_text(
        "from jurybox import judge_factory\n\n"
        "@judge_factory('zz_schema_mentions')\n"
        "def mentions(word: str):\n"
        '    """Mentions the word.\n\n    Args:\n        word: The word.\n    """\n'
        "    return lambda ctx: word in ctx.output\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    try:
        done = CliRunner().invoke(app, ["schema", "suite", "--plugin", "zz_schema_judges"])
        judges = json.loads(done.stdout)["$defs"]["JudgeEntry"]["anyOf"][1]["properties"]
        assert judges["zz_schema_mentions"]["description"] == "Mentions the word. Tier: deterministic."
        missing = CliRunner().invoke(app, ["schema", "suite", "--plugin", "zz_no_such_module"])
        assert missing.exit_code == 2 and "cannot import plugin 'zz_no_such_module'" in missing.output
    finally:
        PluginRegistry.default().unregister(KIND_JUDGE, "zz_schema_mentions")
