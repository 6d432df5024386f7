"""Cleaning a judge model's reply before looking for a verdict: think blocks, code fences, JSON."""

from __future__ import annotations

import json
import re
from typing import Any

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)


def strip_think(text: str) -> str:
    """Remove reasoning blocks (``<think>...</think>``, also ``<thinking>``/``<reasoning>``).

    Two unclosed cases are handled too. A reply that *ends* a block it never
    opened (chat templates such as Qwen3's put ``<think>`` in the prompt) loses
    everything up to the closing tag. A reply that *opens* a block and never
    closes it (the model ran out of tokens while thinking) loses everything from
    the opening tag, because a verdict inside unfinished reasoning is not a verdict.
    """
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opening = _THINK_OPEN.search(text)
    if opening is not None:
        text = text[: opening.start()]
    return text.strip()


def json_objects(text: str) -> list[Any]:
    """Every JSON object found in ``text``, in order: inside code fences first, else anywhere.

    Chatter before and after ("Here is my verdict: {...} Hope this helps") is
    skipped. Objects nested inside an object already found are not repeated.
    """
    fenced = [match.group(1) for match in _FENCE.finditer(text)]
    found: list[Any] = []
    for chunk in fenced:
        found.extend(_scan_objects(chunk))
    if found:
        return found
    return _scan_objects(_FENCE.sub(lambda m: m.group(1), text))


def _scan_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found
