"""Seeded percentile bootstrap: every figure gets a 95% interval from the same resamples.

Rows are resampled with replacement. For figures that only depend on a
contingency table (accuracy, TPR, kappa, the pairwise figures) drawing the
table's cells from a multinomial is exactly the same distribution as drawing
rows, and costs nothing per row; figures that need the rows themselves
(correlations, alpha) get per-row weight matrices, drawn in chunks so 10,000
rows never need more than a few MB at once.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from jurybox.calibrate._metrics import Floats
from jurybox.calibrate._settings import CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

_CHUNK_CELLS = 2_000_000  # weights drawn per chunk: resamples x rows


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn.

    Attributes:
        resamples: Number of bootstrap resamples (0: figures without intervals).
        seed: Base seed; each figure's stream also depends on its own key, so
            adding a judge or a slice does not move another one's interval.
        confidence: Width of the interval (0.95: the 2.5th to 97.5th percentile).
    """

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = CONFIDENCE

    def __post_init__(self) -> None:
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 0:
            raise ValueError(f"resamples must be a whole number >= 0, got {self.resamples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be between 0 and 1, got {self.confidence!r}")

    def rng(self, key: str) -> np.random.Generator:
        """The random stream of one figure group (a judge, a slice), stable across runs and machines."""
        return np.random.default_rng([self.seed, zlib.crc32(key.encode("utf-8"))])

    def tables(self, table: Floats, key: str) -> Floats:
        """``(resamples, *table.shape)`` resampled contingency tables with the same total."""
        n = round(table.sum())
        if self.resamples == 0 or n == 0:
            return np.zeros((0, *table.shape))
        drawn = self.rng(key).multinomial(n, table.ravel() / n, size=self.resamples)
        out: Floats = drawn.reshape(self.resamples, *table.shape).astype(np.float64)
        return out

    def weights(self, rows: int, key: str) -> Iterator[Floats]:
        """Chunks of ``(k, rows)`` row-weight matrices, ``resamples`` rows in all."""
        if self.resamples == 0 or rows == 0:
            return
        rng = self.rng(key)
        step = max(1, _CHUNK_CELLS // rows)
        done = 0
        uniform = np.full(rows, 1.0 / rows)
        while done < self.resamples:
            k = min(step, self.resamples - done)
            yield rng.multinomial(rows, uniform, size=k).astype(np.float64)
            done += k

    def interval(self, values: Floats) -> tuple[float | None, float | None]:
        """The percentile interval of the resampled values; (None, None) when none is defined."""
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return None, None
        tail = (1.0 - self.confidence) / 2 * 100
        low, high = np.percentile(finite, [tail, 100 - tail])
        return float(low), float(high)


def resampled_rows(
    bootstrap: Bootstrap, rows: int, key: str, figure: Callable[[Floats], dict[str, Floats]]
) -> dict[str, Floats]:
    """``figure`` on every resample of ``rows`` rows, chunk by chunk, concatenated per name."""
    parts: dict[str, list[Floats]] = {}
    for weights in bootstrap.weights(rows, key):
        for name, values in figure(weights).items():
            parts.setdefault(name, []).append(values)
    return {name: np.concatenate(values) for name, values in parts.items()}
