"""JSON forms of judgments, contexts and records, and the way back.

The core gives ``to_dict`` for judgments and contexts; reading a judgment tree
back is the store's job, so ``judgment_from_dict`` lives here rather than in
the zero-dependency core.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from jurybox.core import (
    BooleanScore,
    CategoricalScore,
    Check,
    Context,
    ErrorInfo,
    Judgment,
    NumericScore,
    Score,
    Status,
    to_jsonable,
)


def db_jsonable(value: Any) -> Any:
    """``to_jsonable`` for a database column: NUL characters become U+FFFD (PostgreSQL text cannot hold NUL)."""
    if type(value) is str:
        # Most values a record writes are text (reasonings, prompts, errors): one call each, not two.
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    return to_jsonable(value, replace_nul=True)


# Values of other types (a read-only mapping, a datetime, a set) are handed to to_jsonable
# one at a time, so the plain data around them is encoded as it is, never copied.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=db_jsonable)


def _reusable_encode() -> Callable[[Any], str]:
    """``_ENCODER.encode``, minus the set-up it repeats on every call: the C encoder, built once.

    Built without the circular-reference check, whose markers cost more than a tenth of
    encoding a judgment tree: a cyclic value raises RecursionError here instead of
    ValueError, which is what ``to_jsonable`` raised on it after that ValueError anyway.
    """
    # Not in typeshed; None on an interpreter without the _json accelerator.
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:
        return _ENCODER.encode
    settings = _ENCODER
    try:
        encode = make_encoder(
            None,  # the markers of the circular-reference check
            settings.default,
            json.encoder.encode_basestring,  # ensure_ascii=False's
            settings.indent,
            settings.key_separator,
            settings.item_separator,
            settings.sort_keys,
            settings.skipkeys,
            settings.allow_nan,
        )
    except TypeError:  # a Python whose private encoder takes other arguments: the public way
        return _ENCODER.encode

    def encode_text(value: Any) -> str:
        return "".join(encode(value, 0))

    probe = {"a": [1, 2.5, None, True, "é\u2028"], "b": {}}
    if encode_text(probe) != _ENCODER.encode(probe):  # same bytes as the public encoder, or not used at all
        return _ENCODER.encode
    return encode_text


_ENCODE = _reusable_encode()


class RawJson:
    """JSON text already encoded for a JSON column: ``dumps`` passes it through as it is.

    What ``encode_json`` returns, so the runner's writer serializes each value
    once, in one pass, instead of copying it with ``to_jsonable`` and then
    handing the copy to the engine's serializer.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawJson({self.text!r})"


def encode_json(value: Any) -> RawJson:
    """``value`` as JSON column text, equal to what ``dumps(db_jsonable(value))`` gives (see ``json_text``)."""
    return RawJson(json_text(value))


# Most tags, follow-ups and metadata a record holds are empty: their text is known without the encoder.
_EMPTY_TEXT: dict[type, str] = {list: "[]", tuple: "[]", dict: "{}"}


def json_text(value: Any) -> str:
    """``value`` as JSON column text, equal to what ``dumps(db_jsonable(value))`` gives.

    Plain data is encoded directly by the C encoder (``encode_plain``, which also
    says the one difference: bool and None dict keys), which hands values of other
    types to ``to_jsonable``; a value it refuses (NaN) or a string holding NUL sends
    the whole value through ``to_jsonable`` first.
    """
    empty = _EMPTY_TEXT.get(type(value))  # the type first: truth is ambiguous for some values (arrays)
    if empty is not None and not value:
        return empty
    text = encode_plain(_ENCODE, value)
    if "\\u0000" in text:  # a NUL, which PostgreSQL text refuses: let to_jsonable replace it
        return _ENCODE(db_jsonable(value))
    return text


def encode_plain(encode: Callable[[Any], str], value: Any) -> str:
    """``encode(value)``, through ``to_jsonable`` only when the encoder refuses a value.

    Plain data skips the ``to_jsonable`` copy; a datetime, a set or NaN still gets its
    ``to_jsonable`` form (the encoder's ``default`` for the first two). A ``True``,
    ``False`` or ``None`` dict key becomes ``"true"``/``"false"``/``"null"`` (JSON's
    rule), not ``to_jsonable``'s ``"True"``...
    """
    try:
        return encode(value)
    except (TypeError, ValueError):
        return encode(db_jsonable(value))


def dumps(value: Any) -> str:
    """Serialize for a JSON column (the engine's ``json_serializer``); ``RawJson`` is already serialized."""
    if type(value) is RawJson:
        return value.text
    return _ENCODER.encode(value)


def content_hash(definition: Mapping[str, Any]) -> str:
    """A stable SHA-256 of a case definition: equal definitions hash equal whatever their key order."""
    return hashed_definition(definition)[1]


def hashed_definition(definition: Mapping[str, Any]) -> tuple[Any, str]:
    """A case definition as JSON column data, and its ``content_hash``.

    A definition that is plain JSON data already (what the suite loader hands over)
    is hashed from its canonical text without the ``to_jsonable`` copy, which was
    two fifths of planning a run: when that text reads back equal to the definition,
    nothing a copy would change (a set, a ``True`` key, a tuple, NaN, NUL) is in it.
    """
    try:
        canonical = _canonical_text(definition, allow_nan=False)
    except (TypeError, ValueError):  # not JSON as it is: a set, a datetime, mixed key types, NaN
        canonical = None
    if canonical is not None and "\\u0000" not in canonical and json.loads(canonical) == definition:
        return definition, _sha256(canonical)
    data = db_jsonable(definition)
    return data, jsonable_hash(data)


def jsonable_hash(data: Any) -> str:
    """``content_hash`` of data that is ``to_jsonable``'s output already (no second copy)."""
    return _sha256(_canonical_text(data, allow_nan=True))


def _canonical_text(data: Any, *, allow_nan: bool) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def score_from_dict(data: Mapping[str, Any] | None) -> Score | None:
    """Rebuild a score from ``score_to_dict`` output."""
    if data is None:
        return None
    kind = data.get("kind")
    if kind == "numeric":
        # Numbers as stored: a judge's integer 2 on a 0..2 scale reads back as 2, not 2.0, so a
        # report from the store is the same text as the one written during the run.
        return NumericScore(data["value"], data.get("min", 0.0), data.get("max", 1.0))
    if kind == "boolean":
        return BooleanScore(bool(data["value"]))
    if kind == "categorical":
        return CategoricalScore(str(data["value"]), dict(data.get("categories") or {}))
    raise ValueError(f"unknown score kind {kind!r} in stored judgment (expected boolean, numeric or categorical)")


_STATUSES: dict[str, Status] = {status.value: status for status in Status}


def judgment_from_dict(data: Mapping[str, Any]) -> Judgment:
    """Rebuild a judgment tree from ``Judgment.to_dict`` output (the derived ``value`` is ignored)."""
    status = data["status"]
    score = data.get("score")
    error = data.get("error")
    checks = data.get("checks")
    children = data.get("children")
    # Judgment copies children and metadata into read-only mappings itself: no copy here.
    return Judgment(
        (_STATUSES.get(status) if isinstance(status, str) else None) or Status(status),
        score=None if score is None else score_from_dict(score),
        reasoning=data.get("reasoning") or "",
        checks=tuple(Check(str(c["name"]), bool(c["passed"]), str(c.get("message") or "")) for c in checks)
        if checks
        else (),
        judge=data.get("judge") or "",
        confidence=data.get("confidence"),
        degraded=bool(data.get("degraded", False)),
        error=ErrorInfo(str(error["type"]), str(error["message"]), str(error.get("traceback") or ""))
        if error
        else None,
        children={str(name): judgment_from_dict(child) for name, child in children.items()} if children else {},
        decided_by=data.get("decided_by"),
        metadata=data.get("metadata") or {},
    )


def context_from_json(data: Mapping[str, Any]) -> Context:
    """Rebuild a context stored from ``Context.to_dict``."""
    return Context.from_dict(data)


# Hoisted: ``int | float`` written inside a check builds a new union object on every call, once per node written.
_NUMBER = (int, float)
# OpenAI's, Anthropic's and our own judges' names (an LLM judge's metadata says tokens: {input, output, total}).
_TOKEN_TOTALS = ("total_tokens", "total")
_TOKEN_PARTS = ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens", "input", "output")


def usage_tokens(metadata: Mapping[str, Any]) -> int | None:
    """Tokens a judge or execution reports in its metadata, or None when it reports none.

    Accepts ``tokens`` as a number or as a usage mapping (``total_tokens`` or
    ``total``, or input plus output tokens under OpenAI's, Anthropic's or our
    judges' names), and a ``usage`` mapping of the same shape.
    """
    if not metadata:  # most judges report nothing; this runs once per judgment node written
        return None
    for key in ("tokens", "usage"):
        value = metadata.get(key)
        if value is None or value is True or value is False:
            continue
        if isinstance(value, _NUMBER):
            if math.isfinite(value):
                return int(value)
        elif isinstance(value, Mapping) and value:
            counted = _counted_tokens(value)
            if counted is not None:
                return counted
    return None


def _counted_tokens(usage: Mapping[str, Any]) -> int | None:
    """A usage mapping's total, else the sum of its input and output counts, else None."""
    for name in _TOKEN_TOTALS:
        total = usage.get(name)
        if isinstance(total, _NUMBER) and total is not True and total is not False:
            return int(total)
    counted = None
    for name in _TOKEN_PARTS:
        part = usage.get(name)
        if isinstance(part, _NUMBER) and part is not True and part is not False:
            counted = int(part) if counted is None else counted + int(part)
    return counted


def metadata_cost(metadata: Mapping[str, Any]) -> float | None:
    """``metadata["cost"]`` as a finite float, or None."""
    if not metadata:
        return None
    value = metadata.get("cost")
    if isinstance(value, _NUMBER) and value is not True and value is not False and math.isfinite(value):
        return float(value)
    return None
