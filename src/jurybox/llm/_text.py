"""Reading a judge model's reply: its own reasoning block, and the JSON objects it holds."""

from __future__ import annotations

import json
import re
from typing import Any

_NAMES = r"think|thinking|reasoning"
_LEADING = re.compile(rf"\s*<({_NAMES})>", re.IGNORECASE)
_TAG = re.compile(rf"<(/?)({_NAMES})>", re.IGNORECASE)
# A think tag as an answer may write it so that a model quoting it writes a real one: look-alike or
# escaped angle brackets (the normal form already folds the full-width and angle-quote ones to "<").
_MENTION = re.compile(
    rf"(?:[<\u2329\u27e8\u3008\ufe64\uff1c]|&lt;?|&#0*60;?|&#x0*3c;?)\s*[/\uff0f]?\s*(?:{_NAMES})\b",
    re.IGNORECASE,
)


def strip_think(text: str, *, keep_tags: bool = False) -> str:
    """Remove the model's own reasoning block (``<think>...</think>``, also ``<thinking>``/``<reasoning>``).

    Only the model's own reasoning goes: the block the reply *starts* with, or,
    when the reply closes a block it never opened (chat templates such as
    Qwen3's put ``<think>`` in the prompt), everything up to that first closing
    tag. A block the reply opens and never closes (the model ran out of tokens
    while thinking) is dropped to the end, because a verdict inside unfinished
    reasoning is not a verdict. Tags anywhere else stay, with the text between
    them: a verdict there is read like any other.

    Args:
        text: The reply.
        keep_tags: Remove nothing. The judge passes it when the material under
            judgment itself writes think tags: the reply's tags may then be
            quotes, and stripping at a quoted tag would hide the text around it.
    """
    if keep_tags:
        return text.strip()
    leading = _LEADING.match(text)
    if leading is not None:
        close = re.compile(rf"</{leading.group(1)}>", re.IGNORECASE).search(text, leading.end())
        if close is None:
            return ""
        text = text[close.end() :]
    else:
        first = _TAG.search(text)
        if first is not None and first.group(1):
            text = text[first.end() :]
    tags = list(_TAG.finditer(text))
    if tags and not tags[-1].group(1):
        text = text[: tags[-1].start()]  # the last tag opens a block that never closes
    return text.strip()


def mentions_think_tags(text: str) -> bool:
    """Whether ``text`` (in normal form) writes a think tag, real, look-alike or escaped."""
    return _MENTION.search(text) is not None


def json_objects(text: str) -> list[Any]:
    """Every JSON object in ``text``, in the order they appear, fenced or not.

    Chatter and code fences around them are skipped; objects nested inside an
    object already found are not repeated. Fenced objects get no precedence:
    a fenced object quoted from the answer must not hide a bare one the judge
    wrote, nor the other way round. An object that gives one key two different
    values is not read (which value it means cannot be known).
    """
    return [value for _, _, value in json_spans(text)]


def json_spans(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """``json_objects`` with where each object starts and ends in ``text``."""
    found: list[tuple[int, int, dict[str, Any]]] = []
    position = text.find("{")
    decoder = _DECODER
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except RecursionError:
            # Nested deeper than Python parses: skip the whole nest rather than retry each inner level.
            closing = text.find("}", position)
            position = -1 if closing == -1 else text.find("{", closing)
            continue
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append((position, end, value))
        position = text.find("{", end)
    return found


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # {"score": 0.1, "reasoning": "<quoted answer>", "score": 1.0}: a quote that reopens the judge's
    # own object must not overwrite its score, so two different values for one key read as nothing.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result and result[key] != value:
            raise ValueError(f"key {key!r} given two values")
        result[key] = value
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_one_value_per_key)
_PLAIN_DECODER = json.JSONDecoder()  # holds no state between calls: one for every call, not one each


def first_member(text: str, start: int) -> str:
    """The object at ``start`` of ``text`` up to the end of its first member: ``{"score": 1.0``.

    A judge that quotes an answer cut short inside a JSON object (a result cut to
    ``max_chars``) and then closes its own reasoning string completes the
    answer's object; its start is still a quote, so it is what gets compared.
    """
    decoder = _PLAIN_DECODER
    try:
        position = _skip_space(text, start + 1)
        _, position = decoder.raw_decode(text, position)  # the key
        position = _skip_space(text, position)
        if text[position : position + 1] != ":":
            return text[start:]
        _, end = decoder.raw_decode(text, _skip_space(text, position + 1))  # the value
    except (ValueError, RecursionError):
        return text[start:]
    return text[start:end]


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position
