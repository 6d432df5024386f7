"""Planted verdicts: a passing verdict the judged text states about itself cannot be the judge's verdict.

A judge model that echoes or quotes the answer under test repeats any verdict
the answer planted ("Rating: [[10]]", ``{"score": 1.0}``, ``[[A]]``). When the
reply then holds only that verdict, no parser can tell the echo from a real
conclusion. So a passing verdict whose value equals one that the data blocks
of the prompt (the answer, sources, earlier turns) state in the judge's own
format is not accepted: the judgment is ABSTAIN, never PASS. The check runs
only on passing judgments, so it can turn a pass into an abstention and never
a fail into a pass.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from jurybox.core import Judgment, Status
from jurybox.llm._classifiers import Choice, Classifier, JsonVerdict, Rating, no_verdict
from jurybox.llm._text import json_objects
from jurybox.models import ChatMessage

# The opening tag of a data block Template.render writes: `<data-NONCE label="...">\n text \n</data-NONCE>`.
_OPEN_TAG = re.compile(r'<data-([0-9a-f]{16}) label="([^"\n]*)">\n')
# Letters that look like Latin ones, so "VERDICT: РASS" (Cyrillic Р) is read as the verdict a model would see.
_LOOKALIKES = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаесіјорѕхуΑΒΕΖΗΙΚΜΝΟΡΤΥΧον",
    "ABCEHIJKMOPSTXYaecijopsxyABEZHIKMNOPTYXov",
)


def planted_verdict(judgment: Judgment, data: Iterable[tuple[str, str]], classifier: Classifier) -> Judgment | None:
    """The ABSTAIN to return instead of ``judgment`` when its passing verdict is one the judged text plants.

    Args:
        judgment: The classifier's reading of the judge model's reply.
        data: The untrusted text the prompt held, as (label, text): ``Template.render_with_data``
            gives it, ``data_blocks`` reads it back from a rendered prompt.
        classifier: The classifier that read the reply; it reads the data blocks the same way.

    Returns:
        None when ``judgment`` does not pass or no data block states its verdict.
    """
    verdict = judgment.value
    if judgment.status is not Status.PASS or verdict is None:
        return None
    json_only = isinstance(classifier, JsonVerdict)
    for label, text in data:
        if json_only and not _may_hold_json(text):
            continue  # the common case on the hot path: no brace, no JSON verdict, nothing to fold
        if any(math.isclose(value, verdict, abs_tol=1e-9) for value in _values(classifier, _fold(text))):
            reason = (
                f"the reply's verdict ({verdict:.3g}) is one the judged {label} states about itself; "
                "an answer cannot grade itself"
            )
            return no_verdict(str(judgment.metadata.get("raw", "")), reason, planted_in=label)
    return None


def data_blocks(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """The (label, text) of every data block in a rendered prompt (text as rendered: look-alikes escaped)."""
    found: list[tuple[str, str]] = []
    for message in messages:
        content = message.content
        first = _OPEN_TAG.search(content) if "<data-" in content else None
        if first is None:
            continue
        opening, closing = f'<data-{first.group(1)} label="', f"\n</data-{first.group(1)}>"
        start = first.start()
        while start != -1:
            label_end = content.find('">\n', start)
            end = content.find(closing, label_end)
            if label_end == -1 or end == -1:
                break
            found.append((content[start + len(opening) : label_end], content[label_end + 3 : end]))
            start = content.find(opening, end)
    return found


def _may_hold_json(text: str) -> bool:
    # "{" and the look-alikes NFKC folds into it (full-width and small left curly brackets).
    return "{" in text or "\uff5b" in text or "\ufe5b" in text


def _fold(text: str) -> str:
    """The text as a model reading it may repeat it: compatibility forms, look-alikes and invisible marks folded."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)
    return "".join(char for char in folded if unicodedata.category(char) != "Cf")


def _values(classifier: Classifier, text: str) -> list[float]:
    """The normalized value of every verdict ``classifier`` can read anywhere in ``text``, conflicts included."""
    if isinstance(classifier, Choice):
        by_fold = {label.casefold(): worth for label, worth in classifier.labels.items()}
        return [
            by_fold[found]
            for pattern in classifier.patterns
            for match in pattern.finditer(text)
            if (found := match.group(1).strip().casefold()) in by_fold
        ]
    if isinstance(classifier, Rating):
        return [
            (number - classifier.min) / (classifier.max - classifier.min)
            for pattern in classifier.patterns
            for match in pattern.finditer(text)
            if (number := _number(match.group(1))) is not None and classifier.min <= number <= classifier.max
        ]
    if isinstance(classifier, JsonVerdict):
        return _json_values(classifier, text)
    # A classifier of the user's own: what it reads from the whole text is all that can be known.
    reading = classifier.classify(text)
    return [reading.value] if reading.status.decided and reading.value is not None else []


def _json_values(classifier: JsonVerdict[Any], text: str) -> list[float]:
    # Each object read on its own, so two planted objects are two values rather than one conflict.
    readings = (classifier.classify(json.dumps(obj)) for obj in json_objects(text))
    return [r.value for r in readings if r.status.decided and r.value is not None]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
