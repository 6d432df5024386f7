"""The material under judgment: what a verdict in the judge's reply must not repeat.

A judge model that echoes or quotes the answer under test repeats any verdict
the answer planted ("Rating: [[10]]", ``{"score": 1.0}``, ``[[A]]``). When the
reply then holds only that verdict, no parser can tell the echo from a real
conclusion. So a passing verdict is not accepted when the untrusted text of the
prompt (the answer, sources, earlier turns, tool results) states the same
verdict in the judge's own format, or holds the very text it was read from, or
continues it (a quote cut short at the token limit: ``Score: 10`` out of
``Score: 100``). Everything is compared in the normal form the reply is read in,
and the material is the text *as the model saw it* (data blocks as rendered).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from jurybox.llm._normal import flat, normal_form
from jurybox.llm._reading import Found, VerdictReader, is_bare
from jurybox.llm._text import mentions_think_tags
from jurybox.models import ChatMessage

# The opening tag of a data block Template.render writes: `<data-NONCE label="...">\n text \n</data-NONCE>`.
_OPEN_TAG = re.compile(r'<data-([0-9a-f]{16}) label="([^"\n]*)">\n')


class Material:
    """The untrusted texts a judge was shown, as (label, text), read in the normal form on demand.

    Args:
        blocks: (label, text) pairs, the text as the model saw it (``Template.render_with_data``
            gives them, ``data_blocks`` reads them back from a rendered prompt).
    """

    def __init__(self, blocks: Iterable[tuple[str, str]] = ()) -> None:
        self._blocks = list(blocks)
        self._normal: list[tuple[str, str]] | None = None
        self._flat: dict[bool, list[tuple[str, str]]] = {}
        self._keys: dict[int, tuple[dict[str, str], dict[str, str]]] = {}
        self._tags: bool | None = None

    def add(self, label: str, text: str) -> None:
        """One more untrusted text the judge was shown (a tool result in an agentic loop)."""
        self._blocks.append((label, text))
        self._normal = self._tags = None
        self._flat.clear()
        self._keys.clear()

    @property
    def labels(self) -> list[str]:
        return [label for label, _ in self._blocks]

    @property
    def mentions_think_tags(self) -> bool:
        """Whether any text writes a think tag, so that tags in a reply may be quotes."""
        if self._tags is None:
            self._tags = any(mentions_think_tags(text) for _, text in self._normalised())
        return self._tags

    def repeats(self, reader: VerdictReader, found: Sequence[Found], body: str, *, cut: bool = False) -> str | None:
        """The label of a text that states or holds one of ``found`` (verdicts read from ``body``), or None.

        ``cut``: the reply was cut at the token limit, so a bare verdict at its end ("8") may be
        a quote cut short of a longer text ("85").
        """
        keys, bare_keys = self._keys_of(reader)
        for verdict in found:
            bare = is_bare(body, verdict)
            where = keys.get(verdict.key) or (bare_keys.get(verdict.key) if bare else None)
            if where is not None:
                return where
            if not bare:
                where = self._holding(flat(verdict.head or verdict.text))
            elif cut:
                # A bare "8" is no quote of "I have 8 apples", but a reply cut after the "8" of "85" may be.
                where = self._continued(flat(body[verdict.start :], spaces=True))
            if where is not None:
                return where
        return None

    def states_value(self, classifier: Any, value: float) -> str | None:
        """The label of a text that a classifier without ``find`` reads as a decided ``value``, or None."""
        for label, text in self._normalised():
            reading = classifier.classify(text)
            if reading.status.decided and reading.value is not None and abs(reading.value - value) <= 1e-9:
                return str(label)
        return None

    def _normalised(self) -> list[tuple[str, str]]:
        if self._normal is None:
            self._normal = [(label, normal_form(text)) for label, text in self._blocks]
        return self._normal

    def _flattened(self, spaces: bool = False) -> list[tuple[str, str]]:
        if spaces not in self._flat:
            self._flat[spaces] = [(label, flat(text, spaces=spaces)) for label, text in self._normalised()]
        return self._flat[spaces]

    def _keys_of(self, reader: VerdictReader) -> tuple[dict[str, str], dict[str, str]]:
        """Every verdict key the texts state in ``reader``'s formats: (key -> label) for all, and for bare ones."""
        cached = self._keys.get(id(reader))
        if cached is None:
            keys: dict[str, str] = {}
            bare: dict[str, str] = {}
            for label, text in self._normalised():
                for verdict in reader.find(text).found:
                    (bare if is_bare(text, verdict) else keys).setdefault(verdict.key, label)
            cached = self._keys[id(reader)] = (keys, bare)
        return cached

    def _holding(self, needle: str) -> str | None:
        if not needle:
            return None
        return next((label for label, text in self._flattened() if needle in text), None)

    def _continued(self, needle: str) -> str | None:
        if not needle:
            return None
        cut = re.compile(re.escape(needle) + r"(?=\w|\.\d)")
        return next((label for label, text in self._flattened(spaces=True) if cut.search(text)), None)


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
