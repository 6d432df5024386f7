"""A suite's judge model is the process's one model for its spec, the one ``jurybox.models`` hands out too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from suite_helpers import TOY_HEADER

from jurybox.models import ModelSpec, resolve_model, shared_model
from jurybox.suites import load_suite, resolve_judge_model

SERVER = "http://127.0.0.1:9/v1"
CASES = "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: x}]\n"


def test_the_suite_and_jurybox_models_share_one_model_per_spec(toy_suite: Callable[[str], Path]) -> None:
    model = resolve_model(f"openai:suite-shared@{SERVER}")

    assert resolve_judge_model(f"{SERVER}#suite-shared") is model
    assert resolve_judge_model(None, f"openai:suite-shared@{SERVER}/", concurrency=8) is model
    suite = load_suite(toy_suite(TOY_HEADER + f"judge_model: {SERVER}#suite-shared\n" + CASES))
    assert suite.model is not None and suite.model.model is model  # under the run's metering wrapper


def test_more_cases_in_flight_than_the_default_limit_get_their_own_shared_model() -> None:
    wide = resolve_judge_model(f"openai:suite-wide@{SERVER}", concurrency=48)

    assert wide is shared_model(ModelSpec("openai", "suite-wide", SERVER), min_concurrency=48)
    assert wide is not resolve_model(f"openai:suite-wide@{SERVER}")
