"""all-MiniLM-L6-v2 in numpy: Hugging Face's own tokenizer, then the 6-layer encoder, mean-pooled.

The similarity judge needs one small model's sentence embeddings (22M weights, a few
texts per case). sentence-transformers would bring torch, transformers, scikit-learn and
scipy (about 1.3 GB installed, and seconds of imports on every run) to run a forward pass of
~60 lines here. The tokens come from the ``tokenizers`` library reading the model's own
``tokenizer.json`` and the weights from ``safetensors``; both are small and torch-free. The
vectors match sentence-transformers' (checked in tests/llm).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from jurybox.core import environment

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length: longer texts are cut, as sentence-transformers cuts them
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class WordPiece:
    """The model's tokenizer (BERT uncased WordPiece) from its ``tokenizer.json``, cut at ``MAX_TOKENS``."""

    def __init__(self, tokenizer_file: Path) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The file pads and cuts at 128; sentence-transformers uses the model config's 256 and pads per batch.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)

    def encode(self, text: str) -> list[int]:
        """``[CLS] tokens... [SEP]``, at most ``MAX_TOKENS`` ids."""
        return list(self._tokenizer.encode(text).ids)


def import_numpy() -> None:
    """Import numpy with its BLAS on one thread, unless something imported it already.

    The products here are small (a few texts of at most 256 tokens): BLAS threads only
    contend, and on a busy machine made one comparison 20 times slower. The variable is
    read when the library loads and put back at once, so the agent's processes never see it.
    """
    if "numpy" in sys.modules:
        return
    # Only what is not set already: a user's own BLAS setting wins.
    with environment({name: "1" for name in _THREAD_VARIABLES if name not in os.environ}):
        import numpy  # noqa: F401


def load_safetensors(path: Path) -> dict[str, Any]:
    """The model's tensors as float32 numpy arrays (its integer position ids are left out)."""
    import numpy as np
    from safetensors.numpy import load_file

    return {name: array.astype(np.float32) for name, array in load_file(str(path)).items() if array.dtype.kind == "f"}


class MiniLM:
    """The encoder: ``encode(texts)`` gives one L2-normalised 384-float vector per text (a numpy array)."""

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = load_safetensors(folder / "model.safetensors")
        self.tokenizer = WordPiece(folder / "tokenizer.json")

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        rows = [self.tokenizer.encode(text) for text in texts]
        longest = max(len(row) for row in rows)
        ids = np.array([row + [0] * (longest - len(row)) for row in rows])
        mask = np.array([[1.0] * len(row) + [0.0] * (longest - len(row)) for row in rows], dtype=np.float32)
        hidden = self._forward(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _forward(self, ids: Any, mask: Any) -> Any:
        import numpy as np

        w = self.weights
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        batch, length, width = x.shape
        size = width // self.heads
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padding is never attended

        def split(t: Any) -> Any:
            # Contiguous (batch * heads, length, size) blocks: numpy's stacked matmul then goes to BLAS.
            blocks = t.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)
            return np.ascontiguousarray(blocks).reshape(batch * self.heads, length, size)

        for layer in range(self.layers):
            at = f"encoder.layer.{layer}."
            q, k, v = (split(self._dense(x, f"{at}attention.self.{name}")) for name in ("query", "key", "value"))
            scores = (q @ np.ascontiguousarray(k.transpose(0, 2, 1))).reshape(batch, self.heads, length, length)
            scores = scores / np.float32(math.sqrt(size)) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            weights = (scores / scores.sum(-1, keepdims=True)).reshape(batch * self.heads, length, length)
            context = (weights @ v).reshape(batch, self.heads, length, size).transpose(0, 2, 1, 3)
            context = context.reshape(batch, length, width)
            x = self._norm(x + self._dense(context, f"{at}attention.output.dense"), f"{at}attention.output.LayerNorm")
            inner = _gelu(self._dense(x, f"{at}intermediate.dense"))
            x = self._norm(x + self._dense(inner, f"{at}output.dense"), f"{at}output.LayerNorm")
        return x

    def _dense(self, x: Any, name: str) -> Any:
        # One 2-D product (rows of every text at once): a 3-D one does not reach BLAS.
        flat = x.reshape(-1, x.shape[-1]) @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], flat.shape[-1])

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / (variance + self.eps) ** 0.5 * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]


def _gelu(x: Any) -> Any:
    """BERT's exact GELU, ``x * Φ(x)``, with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26): numpy has no erf."""
    import numpy as np

    z = np.abs(x) / np.float32(math.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)
