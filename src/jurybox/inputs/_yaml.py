"""The one YAML reader: Python values built straight from libyaml's events, with every limit checked on the way.

Why not ``yaml.safe_load``: PyYAML first composes a graph of node objects (two
marks each, about 300 bytes a value) and only then builds the values, and its
composer recurses once per level. A 12 MB list took 3.4 GB that way and 10,000
levels of nesting ended in a RecursionError. Here the parser's events are read
one at a time and each value is built as soon as it is complete, with an
explicit stack, so memory is the values' own plus 4 bytes a value for its line,
and the limits are checked before anything is built:

- the size (``max_bytes``), before parsing;
- the number of values written (``max_nodes``): a long text is counted from
  the event stream first, which keeps nothing, so a document too big to build
  is refused at the cost of reading it;
- the nesting depth (``max_depth``), counted through aliases, as each
  list or mapping opens;
- aliases: the values a full expansion would hold may not exceed
  ``max_expanded``, or ``max_growth`` times the values written, whichever is
  more (a "billion laughs" is refused at its first alias too many), and an
  alias may not refer to a value that contains it.

Values are what ``yaml.safe_load`` gives (the same resolver and scalar
constructors, merge keys, ``!!set``, ``!!omap``, ``!!pairs``, ``!!binary``), and an
alias is the same object as its anchor, as there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml import events

from jurybox.core import (
    MAX_ALIAS_GROWTH,
    MAX_EXPANDED_NODES,
    MAX_INPUT_BYTES,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
)
from jurybox.inputs._errors import InputError
from jurybox.inputs._files import size_text
from jurybox.inputs._lines import Lines
from jurybox.inputs._yaml_build import Builder, Limits
from jurybox.inputs._yaml_values import TagConstructors

# libyaml's parser when it is built in (ten times faster); the pure-Python one gives the same events.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NODE_EVENTS = frozenset({events.ScalarEvent, events.SequenceStartEvent, events.MappingStartEvent, events.AliasEvent})


@dataclass(frozen=True)
class YamlDocument:
    """One parsed YAML document and the line of each of its values."""

    data: Any
    lines: Lines = field(default_factory=Lines)


def read_yaml(
    text: str,
    source: str,
    *,
    lines: bool = True,
    duplicate_keys: bool = True,
    anchors: bool = True,
    tags: TagConstructors | None = None,
    max_bytes: int = MAX_INPUT_BYTES,
    max_depth: int = MAX_INPUT_DEPTH,
    max_nodes: int = MAX_INPUT_NODES,
    max_expanded: int = MAX_EXPANDED_NODES,
    max_growth: int = MAX_ALIAS_GROWTH,
) -> YamlDocument:
    """Parse one YAML document within the input limits.

    Args:
        text: The YAML text.
        source: The file (or field) named in errors.
        lines: Keep the line of every value (``YamlDocument.lines``).
        duplicate_keys: Accept a key written twice in one mapping (the last one holds), as PyYAML does.
        anchors: Accept anchors and aliases (``&name``, ``*name``).
        tags: Tags beyond the safe ones (``!!python/tuple`` in a cassette) and how to build each.
        max_bytes: Longest text, in characters.
        max_depth: Deepest nesting; a scalar at the top is level 1.
        max_nodes: Most values written in the text (an alias counts one).
        max_expanded: Values a full expansion of the aliases may always hold.
        max_growth: Beyond ``max_expanded``, most times the expansion may exceed the values written.

    Raises:
        InputError: naming the source, the line and the problem.
    """
    if len(text) > max_bytes:
        raise InputError(source, None, f"refused: over the {size_text(max_bytes)} input limit; split it")
    limits = Limits(max_depth, max_nodes, max_expanded, max_growth)
    loader: yaml.SafeLoader | None = None
    try:
        if _most_values(text) > max_nodes:
            _count_nodes(_Loader(text), source, max_nodes)
        loader = _Loader(text)
        builder = Builder(loader, source, limits, lines=lines, duplicates=duplicate_keys, anchors=anchors, tags=tags)
        data, index = builder.run()
        return YamlDocument(data, index)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, source, text) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise InputError(source, line, f"{exc.reason} (character {exc.character!r})", syntax=True) from None
    except yaml.YAMLError as exc:
        raise InputError(source, None, str(exc).splitlines()[0], syntax=True) from None
    finally:
        if loader is not None:
            loader.dispose()


def _most_values(text: str) -> int:
    """How many values ``text`` can hold at most, counted at C speed.

    Every value but the first is brought in by an indicator: a list item by ``-`` or ``,``, a
    mapping's key and value by ``:``, ``?`` or ``,``, a flow collection by ``[`` or ``{``. Those
    characters inside scalars only make the bound looser.
    """
    indicators = sum(text.count(char) for char in ":,-?[{")
    return 2 * indicators + 1


def _syntax_error(exc: yaml.MarkedYAMLError, source: str, text: str) -> InputError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    if line is not None:
        # At the end of a text without a final newline libyaml points at a line after it: the text's last line.
        line = min(line, text.count("\n") + 1)
    problem = exc.problem or exc.context or str(exc)
    if exc.context and exc.problem:
        started = exc.context_mark.line + 1 if exc.context_mark is not None else None
        problem += f" ({exc.context}" + (f" that starts at line {started})" if started != line else ")")
    return InputError(source, line, problem, syntax=True)


def _count_nodes(loader: Any, source: str, max_nodes: int) -> None:
    """Refuse a text of more than ``max_nodes`` values, reading its events without keeping any."""
    check, get = loader.check_event, loader.get_event
    try:
        count = 0
        while check():
            event = get()
            if type(event) in _NODE_EVENTS:
                count += 1
                if count > max_nodes:
                    raise InputError(
                        source, event.start_mark.line + 1, f"refused: more than {max_nodes:,} values in one document"
                    )
    finally:
        loader.dispose()
