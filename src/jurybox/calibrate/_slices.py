"""Slices: the rows grouped by a tag or a metadata field, so "wrong on long answers" is visible."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.calibrate._labels import LabelledRow

TAGS = "tags"
NONE = "(none)"


def slice_rows(rows: Sequence[LabelledRow], field: str) -> dict[str, list[int]]:
    """Row positions per value of ``field``: each tag for ``"tags"``, else the metadata value.

    A row with several tags is in each of their slices; a row without the field is in ``(none)``.
    Values are shown as text, sorted.
    """
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        if field == TAGS:
            values = list(row.tags) or [NONE]
        else:
            value = row.metadata.get(field)
            values = [NONE if value is None else str(value)]
        for value in values:
            groups.setdefault(value, []).append(index)
    return dict(sorted(groups.items()))
