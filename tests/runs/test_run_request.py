"""A RunRequest that exists can run: every field checked, and the fields that cannot work together refused."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.runs import RunRequest, RunRequestError

SUITE = (Path("suite.yaml"),)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({}, "give a suite file, or --suite NAME"),
        ({"suites": SUITE, "stored_suites": ("pm",)}, "not both"),
        ({"stored_suites": ("pm",), "no_store": True}, "--suite reads the suite from the store"),
        ({"stored_suites": ("pm", "pm")}, "a --suite is given twice"),
        ({"suites": SUITE, "resume": "last", "no_store": True}, "--resume reads the earlier run from the store"),
        ({"suites": SUITE, "workers": 2, "no_store": True}, "--workers: each worker writes its results"),
        ({"suites": SUITE, "resume": "abc", "selectors": ("smoke",)}, "drop --filter"),
        ({"suites": (Path("a.yaml"), Path("b.yaml")), "resume": "abc"}, "give a single suite"),
        ({"stored_suites": ("a", "b"), "resume": "abc"}, "give a single suite"),
        ({"suites": SUITE, "concurrency": 0}, "concurrency is a whole number from 1 to 4096"),
        ({"suites": SUITE, "concurrency": True}, "concurrency is a whole number"),
        ({"suites": SUITE, "timeout": math.nan}, "timeout is seconds above 0"),
        ({"suites": SUITE, "judge_timeout": -1.0}, "judge_timeout is seconds above 0"),
        ({"suites": SUITE, "retries": 11}, "retries is a whole number from 0 to 10"),
        ({"suites": SUITE, "workers": 0}, "workers is a whole number from 1"),
        ({"suites": SUITE, "lessons": -1}, "lessons is a whole number from 0"),
        ({"suites": SUITE, "selectors": "smoke"}, "selectors is a list"),
        ({"suites": SUITE, "selectors": ("",)}, "selectors holds names"),
        ({"suites": "suite.yaml"}, "suites is a list"),
        ({"suites": [3]}, "suites holds file paths"),
        ({"suites": SUITE, "no_store": "yes"}, "no_store is True or False"),
        ({"suites": SUITE, "executor": ""}, "executor is a name"),
        ({"suites": SUITE, "executor_options": {"actors": 2}}, "the local executor takes no option actors"),
        ({"suites": SUITE, "executor": "ray", "executor_options": {"nodes": 2}}, "its options: actors, address"),
        ({"suites": SUITE, "executor": "ray", "executor_options": {"actors": 0}}, "actors is a whole number"),
        ({"suites": SUITE, "executor": "ray", "executor_options": {"address": 1}}, "address is a string"),
        ({"suites": SUITE, "extra_config": {1: "x"}}, "extra_config maps names to values"),
        ({"suites": SUITE, "store": 5}, "store is a URL"),
    ],
)
def test_a_request_that_cannot_run_is_refused_in_one_line(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(RunRequestError) as refused:
        RunRequest(**fields)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_lists_and_strings_become_tuples_and_paths() -> None:
    request = RunRequest(
        suites=["a.yaml", Path("b.yaml")],  # type: ignore[arg-type]
        selectors=["smoke"],  # type: ignore[arg-type]
        executor="ray",
        executor_options={"actors": 2},
        base_dir="elsewhere",  # type: ignore[arg-type]
    )
    assert request.suites == (Path("a.yaml"), Path("b.yaml")) and request.selectors == ("smoke",)
    assert request.base_dir == Path("elsewhere") and request.executor_options == {"actors": 2}


def test_a_plug_in_executor_takes_any_options_and_the_request_keeps_a_copy() -> None:
    options = {"queue": "gpu"}
    request = RunRequest(suites=SUITE, executor="my-cluster", executor_options=options)
    options["queue"] = "cpu"
    assert request.executor_options == {"queue": "gpu"}


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
FIELDS = [
    "suites",
    "stored_suites",
    "concurrency",
    "selectors",
    "timeout",
    "retries",
    "judge_timeout",
    "judge_retries",
    "store",
    "no_store",
    "resume",
    "workers",
    "executor",
    "executor_options",
    "lessons",
    "extra_config",
]


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=6))
def test_any_fields_make_a_request_or_a_run_request_error(fields: dict[str, Any]) -> None:
    try:
        request = RunRequest(**fields)
    except RunRequestError as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    # What exists is what the service can rely on.
    assert request.suites or request.stored_suites
    assert all(isinstance(path, Path) for path in request.suites)
    assert all(isinstance(name, str) and name.strip() for name in (*request.stored_suites, *request.selectors))
    assert request.concurrency is None or 1 <= request.concurrency <= 4096
    assert request.timeout is None or 0 < request.timeout <= 86_400
    assert isinstance(request.workers, int) and request.workers >= 1
    assert isinstance(request.no_store, bool) and not (request.resume is not None and request.no_store)
