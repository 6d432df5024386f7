"""Fitting the CLI's tables to the terminal: a table when it fits whole, a stacked list when it does not.

At 80 columns (a CI log, a pipe) a wide table would squeeze its columns until
names and ids are cut with ``…`` or split mid-word; the commands print the same
facts one record per block instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

_UNBOUNDED = 1_000_000


WIDE = 120
"""From this many columns a table may wrap its cells between words; below, it must fit unwrapped."""


def fits(console: Console, table: Table) -> bool:
    """True when ``table`` fits the console without cutting or splitting a word.

    Below ``WIDE`` columns the table must fit at its natural width (a narrow table that
    wraps every cell reads worse than a list); from ``WIDE`` on, each column may shrink
    to its longest word, as rich wraps cells between words.
    """
    # Measured as if the console had no edge: rich clamps a measurement to the width it is given.
    measured = Measurement.get(console, console.options.update_width(_UNBOUNDED), table)
    return measured.maximum <= console.width or (console.width >= WIDE and measured.minimum <= console.width)


def print_fitted(console: Console, table: Table, stacked: Iterable[RenderableType]) -> None:
    """Print ``table`` when it fits (see ``fits``), else its title and ``stacked``: one block per row."""
    if fits(console, table):
        console.print(table)
        return
    if table.title:
        title = table.title if isinstance(table.title, Text) else Text(str(table.title))
        console.print(title.copy(), style="bold italic")
    for block in stacked:
        console.print(block)


def stacked_row(head: Text, details: Sequence[Text | str], indent: int = 4) -> RenderableType:
    """A row as a block: ``head`` on its line, ``details`` joined by `` · `` and indented under it.

    Rich wraps both between words, so an id, a name or a status is never split.
    """
    body = Text(" · ", style="dim").join(Text(d) if isinstance(d, str) else d for d in details)
    return Group(head, Padding(body, (0, 0, 0, indent), expand=False)) if details else head
