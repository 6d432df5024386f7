"""Loading suite files: the happy path, and errors that name the file, the line and the field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import TOY_HEADER, grading_model

from jurybox.core import Cascade, Jury
from jurybox.suites import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_SIMILARITY,
    JudgeRegistry,
    SuiteError,
    load_seeds,
    load_suite,
    parse_seed,
)

GOOD = (
    TOY_HEADER
    + """\
cases:
  - name: lists
    tags: [tools, smoke]
    prompt: "What are my listings?"
    expect_tools: {calls: [get_listings], mode: subset}
    judges:
      - contains: {text: ["Beach House"], all: true}
      - correctness: {reference: "Beach House, Mountain Cabin"}
      - similarity: {threshold: 0.5}
      - valid_json
  - name: two-rounds
    revive_between_rounds: true
    rounds:
      - prompt: "What are my listings?"
        criteria: "Lists all properties"
        expect_tools: [get_listings]
      - prompt: "What's the occupancy for the first one?"
        criteria: {"Names the first listing": 50, "Gives its occupancy": 50}
        judges: [{matches: "\\\\d+%"}]
    sql_checks:
      - query: "select count(*) from messages where session_id = :session_id"
        expect: {min: 4}
"""
)


def test_a_good_suite_loads_with_judges_in_tiers(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(GOOD))

    assert suite.name == "toy"
    assert [c.name for c in suite.cases] == ["lists", "two-rounds"]
    lists, rounds = suite.cases
    assert lists.tags == ("tools", "smoke")
    tiers = {j.key: j.tier for j in lists.judges}
    assert tiers == {
        "tool_calls[subset](get_listings)": TIER_DETERMINISTIC,
        "contains('Beach House')": TIER_DETERMINISTIC,
        "correctness": TIER_LLM,
        "semantic_similarity": TIER_SIMILARITY,
        "valid_json": TIER_DETERMINISTIC,
    }
    # One call, asked again up to twice (retries) when a reply holds no readable verdict.
    assert [(j.fewest_llm_calls, j.llm_calls) for j in lists.judges if j.tier == TIER_LLM] == [(1, 3)]
    assert rounds.revive_between_rounds and len(rounds.rounds) == 2
    assert {(j.round, j.label) for j in rounds.judges} == {
        (0, "expect_tools"),
        (0, "criteria"),
        (1, "matches"),
        (1, "criteria"),
    }
    assert all(j.key.startswith(f"round{j.round + 1}.") for j in rounds.judges if j.round is not None)
    assert rounds.sql_checks[0].expect.min == 4
    assert suite.defaults.timeout == 5
    # No judge model anywhere: the suite loads, and its LLM tier will be skipped.
    assert suite.model is None and not suite.llm_enabled


def test_the_judge_model_given_at_load_reaches_every_llm_judge(toy_suite: Callable[[str], Path]) -> None:
    model = grading_model()
    suite = load_suite(toy_suite(GOOD), judge_model=model)

    assert suite.llm_enabled and suite.judge_model == "fake:grader"
    llm = [j.judge for case in suite.cases for j in case.judges if j.tier == TIER_LLM]
    assert len(llm) == 3
    assert all(judge.model is suite.model for judge in llm)  # one shared (metered) client


def test_malformed_yaml_names_file_and_line(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: [unclosed\n")

    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    assert caught.value.file == str(path)
    assert caught.value.line == 8  # where the parser gave up: the end of the file
    assert "invalid YAML: did not find expected ',' or ']'" in str(caught.value)
    assert "while parsing a flow sequence that starts at line 7" in str(caught.value)


def test_unknown_judge_lists_the_valid_names(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges:\n      - contians: hello\n")

    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    message = str(caught.value)
    assert f"{path}:9: cases[0].judges[0]: unknown judge 'contians'" in message
    assert "did you mean 'contains'?" in message
    for name in ("contains", "matches", "tool_calls", "correctness", "rubric", "similarity", "jury", "cascade"):
        assert name in message


def test_a_misspelt_key_names_its_line_and_the_valid_keys(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judgs: [valid_json]\n")

    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    assert caught.value.line == 8
    assert caught.value.field == "cases[0].judgs"
    assert "did you mean 'judges'?" in str(caught.value)


def test_a_wrong_type_names_the_field(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(
        TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges: [valid_json]\n    threshold: high\n"
    )

    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    assert (caught.value.line, caught.value.field) == (9, "cases[0].threshold")


def test_every_problem_is_reported_and_nothing_half_loads(toy_suite: Callable[[str], Path]) -> None:
    text = (
        TOY_HEADER
        + """\
cases:
  - name: a
    prompt: hi
    judges: [{contains: {txet: x}}]
  - name: a
    prompt: hi
    judges: [{matches: "("}]
  - name: c
    prompt: hi
"""
    )

    with pytest.raises(SuiteError) as caught:
        load_suite(toy_suite(text))

    problems = {(p.line, p.field) for p in caught.value.problems}
    assert (8, "cases[0].judges[0].contains.txet") in problems  # bad option name: lists what it accepts
    assert (11, "cases[1].judges[0].matches") in problems  # a regex that does not compile
    assert (9, "cases[1].name") in problems  # duplicate case name
    assert (12, "cases[2]") in problems  # nothing to judge it
    assert "accepts: text" in str(caught.value)


def test_a_case_whose_only_judge_is_invalid_is_not_also_said_to_have_no_judges(
    toy_suite: Callable[[str], Path],
) -> None:
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges: [{contians: x}]\n"

    with pytest.raises(SuiteError) as caught:
        load_suite(toy_suite(text))

    assert [p.field for p in caught.value.problems] == ["cases[0].judges[0]"]
    assert "nothing to judge" not in str(caught.value)


@pytest.mark.parametrize(
    ("agent", "line", "field", "message"),
    [
        ('{pythn: "toy_agent:make_agent"}', 2, "agent", "'pythn': did you mean 'python'?"),
        ('\n  python: "no_such_module:respond"', 3, "agent.python", "cannot import 'no_such_module'"),
        ('\n  python: "toy_agent:no_such_function"', 3, "agent.python", "no_such_function"),
        ("\n  openai:\n    model: gpt-4o-mini\n    bogus: 1", 3, "agent.openai", "unknown key(s) bogus"),
    ],
)
def test_a_bad_agent_is_reported_at_load_with_its_line(
    toy_suite: Callable[[str], Path], agent: str, line: int, field: str, message: str
) -> None:
    # Found by loading (so by --dry-run), not after the run has started and opened a run in the store.
    text = f"name: toy\nagent: {agent}\ncases:\n  - name: a\n    prompt: hi\n    judges: [contains: hi]\n"

    with pytest.raises(SuiteError) as caught:
        load_suite(toy_suite(text))

    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (line, field)
    assert message in problem.message


def test_prompt_and_rounds_are_exclusive(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(TOY_HEADER + "cases:\n  - name: d\n    prompt: hi\n    rounds: [{prompt: hi}]\n")

    with pytest.raises(SuiteError, match="exactly one of 'prompt', 'rounds' or 'mcp_call'") as caught:
        load_suite(path)
    assert caught.value.line == 6


def test_duplicate_keys_are_an_error(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    prompt: again\n    judges: [valid_json]\n")

    with pytest.raises(SuiteError, match="duplicate key 'prompt'") as caught:
        load_suite(path)
    assert caught.value.line == 8


def test_sql_checks_need_a_database(toy_suite: Callable[[str], Path]) -> None:
    text = "name: t\nagent: {python: 'toy_agent:make_agent'}\ncases:\n  - name: a\n    prompt: hi\n"
    text += "    sql_checks: [{query: 'select 1'}]\n"

    with pytest.raises(SuiteError, match="needs the agent's database") as caught:
        load_suite(toy_suite(text))
    assert caught.value.field == "cases[0].sql_checks[0]"


def test_jury_cascade_voting_and_python_entries(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    (tmp_path / "my_checks.py").write_text(
        "from jurybox import judge\n\n@judge\ndef polite(ctx):\n    return 'please' in ctx.output\n",
        encoding="utf-8",
    )
    text = (
        TOY_HEADER
        + """\
cases:
  - name: composed
    prompt: hi
    voting: {average: 0.5}
    judges:
      - jury:
          name: facts
          voting: {at_least: 1}
          judges: [{contains: a}, {contains: b}]
      - cascade:
          - judges: [{contains: a}]
          - judges: [{correctness: {reference: x}}]
            voting: majority
      - python: "my_checks:polite"
"""
    )

    suite = load_suite(toy_suite(text))

    case = suite.cases[0]
    by_label = {j.label: j for j in case.judges}
    assert isinstance(by_label["jury"].judge, Jury) and by_label["jury"].tier == TIER_DETERMINISTIC
    assert isinstance(by_label["cascade"].judge, Cascade)
    assert by_label["cascade"].tier == TIER_LLM  # its costliest member decides where it runs
    assert (by_label["cascade"].fewest_llm_calls, by_label["cascade"].llm_calls) == (0, 3)  # tier 1 may reject
    assert by_label["python"].judge.name == "polite"
    assert case.voting is not None


def test_bad_voting_and_policy_are_reported(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    voting: plurality\n    judges: [valid_json]\n"

    with pytest.raises(SuiteError, match="unknown voting 'plurality'; valid: majority") as caught:
        load_suite(toy_suite(text))
    assert caught.value.line == 8


def test_a_custom_registry_adds_judges_by_name(toy_suite: Callable[[str], Path]) -> None:
    registry = JudgeRegistry.default().copy()
    registry.register("always", lambda: lambda ctx: True, tier=TIER_DETERMINISTIC)
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges: [always]\n"

    suite = load_suite(toy_suite(text), registry=registry)

    assert suite.cases[0].judges[0].label == "always"


def test_filter_selects_by_name_tag_and_glob(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(GOOD))

    assert [c.name for c in suite.select(["smoke"])] == ["lists"]
    assert [c.name for c in suite.select(["two-*"])] == ["two-rounds"]
    assert [c.name for c in suite.select(["lists", "two-rounds"])] == ["lists", "two-rounds"]
    assert suite.select(["nothing"]) == ()


# --- seeds -----------------------------------------------------------------------------------------


def test_a_seed_file_parses_front_matter_and_body() -> None:
    seed = parse_seed(
        "---\nid: m1\ntype: memory\nsource: chat\ntags: [pets]\nvalence: -0.5\nlisting: Beach House\n---\n"
        "No pets allowed.\n",
        "m1.md",
    )

    assert (seed.id, seed.type, seed.source, seed.tags, seed.valence) == ("m1", "memory", "chat", ("pets",), -0.5)
    assert seed.extra == {"listing": "Beach House"}
    assert seed.body == "No pets allowed."
    assert seed.to_dict()["listing"] == "Beach House"


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("no front matter\n", 1, "", "starts with a '---' line"),
        ("---\nid: a\ntype: t\n", 1, "", "front matter is not closed"),
        ("---\nid: a\ntype: [x\n---\n", 4, "", "invalid YAML"),
        ("---\ntype: note\n---\nbody\n", 2, "id", "required"),
        ("---\nid: a\ntype: t\nvalence: great\n---\n", 4, "valence", "valence must be"),
    ],
)
def test_seed_errors_name_file_line_and_field(text: str, line: int, field: str, message: str) -> None:
    with pytest.raises(SuiteError) as caught:
        parse_seed(text, "seeds/x.md")

    assert (caught.value.file, caught.value.line, caught.value.field) == ("seeds/x.md", line, field)
    assert message.lower() in str(caught.value).lower()


def test_a_seed_directory_loads_in_one_call_and_rejects_duplicate_ids(tmp_path: Path) -> None:
    folder = tmp_path / "seeds"
    (folder / "nested").mkdir(parents=True)
    (folder / "a.md").write_text("---\nid: a\ntype: note\n---\nA\n", encoding="utf-8")
    (folder / "nested" / "b.md").write_text("---\nid: b\ntype: note\n---\nB\n", encoding="utf-8")

    assert [s.id for s in load_seeds(folder)] == ["a", "b"]

    (folder / "c.md").write_text("---\nid: a\ntype: note\n---\nagain\n", encoding="utf-8")
    (folder / "d.md").write_text("---\ntype: note\n---\n", encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_seeds(folder)
    text = str(caught.value)
    assert "duplicate seed id 'a'" in text and "d.md:2: id" in text


def test_the_example_seeds_load() -> None:
    seeds = load_seeds(Path(__file__).parents[2] / "examples" / "property_agent" / "seeds")

    assert seeds and all(seed.body for seed in seeds)


def test_seeds_for_an_agent_that_cannot_take_them_are_a_load_error(toy_suite: Callable[[str], Path]) -> None:
    # Seed records reach a Python factory as seeds=...; a respond function would fail every case.
    path = toy_suite(
        'name: toy\nagent: {python: "toy_agent:make_agent", kind: function}\nseeds: seeds/\n'
        "cases:\n  - name: a\n    prompt: hi\n    judges: [contains: hi]\n"
    )
    (path.parent / "seeds").mkdir()
    (path.parent / "seeds" / "a.md").write_text("---\nid: a\ntype: note\n---\nremember this\n", encoding="utf-8")

    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (3, "seeds")
    assert "a respond function" in problem.message and "factory" in problem.message


SEEDED_AGENTS = """
class Agent:
    def __init__(self, seeds):
        self.seeds = seeds

    def respond(self, message, session_id):
        return f"{len(self.seeds)} seeds"


def make_agent(seeds):
    return Agent(seeds)


def respond(message, session_id):
    return "no seeds here"
"""


@pytest.mark.parametrize(
    ("agent", "seed_files", "problem"),
    [
        ("seeded_agents:make_agent", 1, None),  # a factory that needs its seeds: what the docs ask for
        ("seeded_agents:respond", 0, None),  # an empty seeds folder hands nothing to anyone
        ("seeded_agents:respond", 1, "'seeded_agents:respond' is a respond function"),
    ],
)
def test_seeds_are_checked_against_the_agent_the_runner_will_build(
    tmp_path: Path, agent: str, seed_files: int, problem: str | None
) -> None:
    (tmp_path / "seeded_agents.py").write_text(SEEDED_AGENTS, encoding="utf-8")
    (tmp_path / "seeds").mkdir()
    for index in range(seed_files):
        (tmp_path / "seeds" / f"s{index}.md").write_text(f"---\nid: s{index}\ntype: note\n---\nx\n", encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(
        f'name: seeded\nagent: {{python: "{agent}"}}\nseeds: seeds/\n'
        "cases:\n  - name: a\n    prompt: hi\n    judges: [contains: seeds]\n",
        encoding="utf-8",
    )

    if problem is None:
        assert load_suite(path).name == "seeded"
        return
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    (found,) = caught.value.problems
    assert (found.line, found.field) == (3, "seeds") and problem in found.message


def test_a_suite_run_with_a_target_of_ones_own_need_not_name_a_buildable_agent(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        'name: own\nagent: {python: "production_only_module:make_agent"}\n'
        "cases:\n  - name: a\n    prompt: hi\n    judges: [contains: hi]\n",
        encoding="utf-8",
    )

    with pytest.raises(SuiteError, match="cannot import 'production_only_module'"):
        load_suite(path)
    assert load_suite(path, check_agent=False).agent == {"python": "production_only_module:make_agent"}


def test_a_field_error_does_not_hide_the_judge_errors_of_other_cases(toy_suite: Callable[[str], Path]) -> None:
    # One pass to fix the file: the validation problem of case a and the judge problem of case b together.
    text = TOY_HEADER + (
        "cases:\n"
        "  - name: a\n    prompt: hi\n    threshold: 1.5\n    judges: [contains: hi]\n"
        "  - name: b\n    prompt: hi\n    judges: [{contians: x}]\n"
    )

    with pytest.raises(SuiteError) as caught:
        load_suite(toy_suite(text))

    fields = [p.field for p in caught.value.problems]
    assert fields == ["cases[0].threshold", "cases[1].judges[0]"]
    assert "did you mean 'contains'?" in str(caught.value)
