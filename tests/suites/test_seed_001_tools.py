"""``expected_tools`` as seed 001 checks it: each expected tool was called; extra calls and arguments are fine.

jurybox's own ``expect_tools`` keeps its strict default (the same calls, in order,
nothing else); ``expected_tools`` means ``{mode: subset, args: subset}`` unless it says
otherwise, and ``strict``, ``ordered`` and the argument modes stay selectable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from jurybox import Context, Status, ToolCall, evaluate
from jurybox.judges import tool_calls
from jurybox.runs import import_suite
from jurybox.store import open_store
from jurybox.suites import case_as_ours, load_suite, stored_case
from jurybox.web._case_form import definition_of, form_of

AGENT = {"python": "toy_agent:make_agent"}


def _suite(tmp_path: Path, case: dict[str, Any]) -> Path:
    path = tmp_path / "suite.yaml"
    doc = {"name": "property", "agent": AGENT, "cases": [{"name": "c", "prompt": "Details?", **case}]}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _verdict(tmp_path: Path, case: dict[str, Any], calls: list[dict[str, Any] | str]) -> tuple[Status, str]:
    (built,) = load_suite(_suite(tmp_path, case), check_agent=False).cases[0].judges
    made = tuple(ToolCall.coerce({"name": c} if isinstance(c, str) else c) for c in calls)
    judgment = evaluate(built.judge, Context(output="ok", tool_calls=made))
    return judgment.status, judgment.reasoning


def test_the_seeds_own_example_passes_with_an_extra_call(tmp_path: Path) -> None:
    # The seed: missing = [t for t in expected if t not in called]; extra calls are fine.
    status, _ = _verdict(tmp_path, {"expected_tools": ["get_listing_details"]}, ["get_listings", "get_listing_details"])
    assert status is Status.PASS
    status, reason = _verdict(tmp_path, {"expected_tools": ["get_listing_details"]}, ["get_listings"])
    assert status is Status.FAIL and "get_listing_details not called" in reason


def test_our_expect_tools_stays_strict(tmp_path: Path) -> None:
    status, reason = _verdict(
        tmp_path, {"expect_tools": ["get_listing_details"]}, ["get_listings", "get_listing_details"]
    )
    assert status is Status.FAIL and "strict match failed" in reason


def test_strict_and_ordered_are_selectable(tmp_path: Path) -> None:
    strict = {"expected_tools": {"calls": ["get_listing_details"], "mode": "strict"}}
    assert _verdict(tmp_path, strict, ["get_listings", "get_listing_details"])[0] is Status.FAIL
    ordered = {"expected_tools": {"calls": ["get_listings", "get_revenue"], "mode": "ordered"}}
    assert _verdict(tmp_path, ordered, ["get_listings", "get_listing_details", "get_revenue"])[0] is Status.PASS
    status, reason = _verdict(tmp_path, ordered, ["get_revenue", "get_listings"])
    assert status is Status.FAIL and "out of order" in reason


def test_arguments_are_a_subset_by_default(tmp_path: Path) -> None:
    case = {"expected_tools": [{"name": "get_revenue", "arguments": {"listing_id": 1}}]}
    made = [{"name": "get_revenue", "arguments": {"listing_id": 1, "month": "2024-06"}}]
    assert _verdict(tmp_path, case, made)[0] is Status.PASS
    wrong = [{"name": "get_revenue", "arguments": {"listing_id": 2, "month": "2024-06"}}]
    status, reason = _verdict(tmp_path, case, wrong)
    assert status is Status.FAIL and "argument 'listing_id': expected 1, got 2" in reason
    exact = {"expected_tools": {"calls": case["expected_tools"], "args": "exact"}}
    assert _verdict(tmp_path, exact, made)[0] is Status.FAIL


def test_the_dashboard_line_with_arguments_matches_a_subset(tmp_path: Path) -> None:
    form = {**form_of(None, None).values, "name": "june", "prompt": "June revenue?"}
    form["tools"] = 'get_revenue {"listing_id": 1}'
    definition, _ = definition_of(form, None)
    assert definition["expect_tools"] == {
        "calls": [{"name": "get_revenue", "arguments": {"listing_id": 1}}],
        "args": "subset",
    }
    case = {key: value for key, value in definition.items() if key not in ("name", "prompt")}
    made = [{"name": "get_listings"}, {"name": "get_revenue", "arguments": {"listing_id": 1, "month": "2024-06"}}]
    assert (
        _verdict(tmp_path, {**case, "expect_tools": {**case["expect_tools"], "mode": "subset"}}, made)[0] is Status.PASS
    )
    # The form offers the ordered mode, and shows a seed-spelled case with its meaning.
    shown = form_of({"name": "x", "prompt": "p", "expected_tools": ["get_revenue"]}, None).values
    assert (shown["tools"], shown["tools_mode"]) == ("get_revenue", "subset")
    assert "ordered" in form_of(None, None).view()["modes"]


@given(
    expected=st.lists(st.sampled_from("abcd"), max_size=4),
    made=st.lists(st.sampled_from("abcde"), max_size=7),
)
def test_ordered_mode_is_the_subsequence_check(expected: list[str], made: list[str]) -> None:
    judgment = evaluate(tool_calls(expected, mode="ordered"), Context(output="", tool_calls=tuple(made)))
    remaining = iter(made)
    is_subsequence = all(name in remaining for name in expected)
    assert (judgment.status is Status.PASS) is is_subsequence


@given(
    expected=st.lists(st.sampled_from("abcd"), max_size=4, unique=True),
    made=st.lists(st.sampled_from("abcde"), max_size=7),
)
def test_seed_mode_is_every_expected_tool_called(expected: list[str], made: list[str]) -> None:
    judge = tool_calls(expected, mode="subset", args="subset")
    judgment = evaluate(judge, Context(output="", tool_calls=tuple(made)))
    missing = [t for t in expected if t not in made]  # the seed's own rule
    assert (judgment.status is Status.PASS) is (not missing)


def test_both_spellings_store_one_version(tmp_path: Path) -> None:
    seed_case = {"name": "c", "prompt": "Details?", "expected_tools": ["get_listing_details"], "judge_threshold": 0.7}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "property", "agent": AGENT, "cases": [seed_case]}), encoding="utf-8")
    # What a run stores for the case is what the import stores: one version, not two alternating.
    run_spec = load_suite(path, check_agent=False).cases[0].spec
    assert stored_case(seed_case) == run_spec
    assert case_as_ours(seed_case)["expect_tools"] == {
        "calls": ["get_listing_details"],
        "mode": "subset",
        "args": "subset",
    }
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        store.suites.save("property", [("c", dict(run_spec))], agent=AGENT)  # as a run leaves it
        _, counts = import_suite(store, path)  # `jurybox store import`: each case as a run records it
        assert (counts["added"], counts["changed"], counts["unchanged"]) == (0, 0, 1)


def test_jurybox_store_import_after_a_run_changes_nothing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jurybox.cli import app

    seed_cases = [
        {"name": "details", "prompt": "Details?", "expected_tools": ["get_listing_details"], "judge_threshold": 0.7},
        {"name": "revival", "test_agent_revival": True, "rounds": [{"prompt": "a", "judge_prompt": "polite"}]},
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "property", "agent": AGENT, "cases": seed_cases}), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    specs = [(case.name, dict(case.spec)) for case in load_suite(path, check_agent=False).cases]
    with open_store(url) as store:
        store.suites.save("property", specs, agent=AGENT)  # what `jurybox run` leaves in the store
    result = CliRunner().invoke(app, ["store", "import", str(path), "--store", url])
    assert result.exit_code == 0, result.output
    assert "0 added, 0 changed, 2 unchanged, 0 retired" in result.output
