"""``Seed``: one seed record as a suite's cases and agent see it.

Apart from ``_seeds`` (which reads seed files) so that a suite without seeds, and
every module that only names the type, loads no seed parser or schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Seed:
    """One seed record: its front matter fields and the Markdown body.

    Attributes:
        id: Unique id of the record.
        type: What it is (``memory``, ``review``, ``listing``...).
        source: Where it came from.
        tags: Labels for filtering.
        valence: A number in -1..1 or ``positive``/``negative``/``neutral``/``mixed``
            (jurybox's rules), or an integer in -20..20 (Spector's).
        body: The Markdown text after the front matter.
        extra: Every other front-matter field.
        file: The file it was read from.
        line: Line of the first front-matter line.
    """

    id: str
    type: str
    body: str
    source: str | None = None
    tags: tuple[str, ...] = ()
    valence: float | str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    file: Path | None = None
    line: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (what a Python agent's ``seeds`` argument receives)."""
        return {
            "id": self.id,
            "type": self.type,
            "source": self.source,
            "tags": list(self.tags),
            "valence": self.valence,
            "body": self.body,
            **dict(self.extra),
        }
