"""The metadata keys jurybox's judges write, as constants: ``judgment.metadata[MetadataKey.MODEL]``.

A ``StrEnum``, so each key is also the plain string (``MetadataKey.MODEL == "model"``):
code that reads ``metadata["model"]`` and code that reads ``metadata[MetadataKey.MODEL]``
see the same value, and a typo in a constant is an AttributeError instead of a silent miss.
"""

from __future__ import annotations

from enum import StrEnum


class MetadataKey(StrEnum):
    """Keys of ``Judgment.metadata`` that jurybox writes (a judge of your own may add others)."""

    MODEL = "model"
    """The ``provider:model`` that answered an LLM judge."""
    ATTEMPTS = "attempts"
    """Model calls the verdict took, re-asks included."""
    TOKENS = "tokens"
    """``{input, output, total}`` tokens, or None when the provider did not say."""
    COST = "cost"
    """USD, or None when the price is unknown (never counted as 0)."""
    LATENCY = "latency"
    """Seconds spent waiting for the model."""
    CACHED = "cached"
    """True when every reply came from the response cache."""
    RAW = "raw"
    """The judge model's last reply, as written."""
    RAW_REPLIES = "raw_replies"
    """Every reply of the judge model, re-asks included."""
    VERDICT = "verdict"
    """The parsed JSON verdict."""
    ISSUES = "issues"
    """Problems the judge named."""
    STRENGTHS = "strengths"
    """What the judge found done well."""
    PARSE_ERROR = "parse_error"
    """Why no verdict could be read from the reply (ABSTAIN and ERROR)."""
    CONFLICT = "conflict"
    """The different verdicts one reply held."""
    PLANTED_IN = "planted_in"
    """Which judged text stated the verdict the reply repeated (an answer grading itself)."""
    LABEL = "label"
    """A classifier's label (``A``, ``toxic``...)."""
    STRUCTURED = "structured"
    """A recorded execution's structured ``input``/``output``/``expected``, as written (``Context.metadata``)."""
