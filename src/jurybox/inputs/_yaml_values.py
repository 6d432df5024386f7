"""Python values of YAML scalars and tagged collections, exactly as PyYAML's safe constructor builds them.

Common plain scalars (whole numbers, booleans, null, text no resolver claims)
take a fast path; everything else goes through the loader's own resolver and
constructors. A tag that does not fit its value is a ``TagMismatchError`` the
builder turns into an error at the value's line.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from types import GeneratorType
from typing import Any

import yaml

STR = "tag:yaml.org,2002:str"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
SET = "tag:yaml.org,2002:set"
MERGE = "tag:yaml.org,2002:merge"
_PAIRS = frozenset({"tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"})
_COLLECTION_TAGS = frozenset({SEQ, MAP, SET, *_PAIRS})
# A plain decimal that int() reads as YAML does (no "_", no leading zero, well short of int()'s digit limit).
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})")
_UNSET: Any = object()
# The plain-scalar memo: at most this many entries, each at most this long (a key word, a flag, a number).
_PLAIN_MEMO = 4096
_PLAIN_CHARS = 64
_IMMUTABLE = frozenset({str, int, float, bool, type(None), datetime.date, datetime.datetime})

#: Extra tags a reader accepts, each with what turns the built value (text, list or mapping) into its own.
TagConstructors = Mapping[str, Callable[[Any], Any]]


class TagMismatchError(ValueError):
    """A value its tag does not fit (``!!int abc``, ``!!set [1]``); the message says which."""


_CONSTANTS: dict[type, dict[str, Any]] = {}


def _plain_constants(loader: Any) -> dict[str, Any]:
    """The plain scalars that are booleans or null under ``loader``'s resolver, with their values."""
    known = _CONSTANTS.get(type(loader))
    if known is not None:
        return known
    bases = ("null", "true", "false", "yes", "no", "on", "off")
    words = ["", "~", *(spelling for base in bases for spelling in (base, base.capitalize(), base.upper()))]
    found: dict[str, Any] = {}
    for word in words:
        tag = loader.resolve(yaml.ScalarNode, word, (True, False))
        if tag == "tag:yaml.org,2002:null":
            found[word] = None
        elif tag == "tag:yaml.org,2002:bool":
            found[word] = loader.bool_values[word.lower()]
    _CONSTANTS[type(loader)] = found
    return found


class Values:
    """Builds scalars and finishes tagged collections for one loader.

    Args:
        loader: A yaml.SafeLoader or CSafeLoader (PyYAML's stubs leave its methods untyped).
        tags: Tags beyond the safe ones and how to build each.
    """

    def __init__(self, loader: Any, tags: TagConstructors | None) -> None:
        self.loader = loader
        self.tags = tags or {}
        resolvers = type(loader).yaml_implicit_resolvers
        # Plain scalars starting with any other character are text, unless a resolver matches any start.
        self.resolved_starts: frozenset[str] | None = None if None in resolvers else frozenset(resolvers)
        self.constants = _plain_constants(loader)
        #: Plain untagged scalars already built, by their text: the same key words come back in every item of
        #: a long list, and the resolver's regexes cost more than the rest of a value. Immutable values only.
        self.plain: dict[str, tuple[Any, bool]] = {}

    def scalar(self, event: Any) -> tuple[Any, bool]:
        """The scalar's value, and whether it is the merge key ``<<``."""
        if event.tag is None and event.implicit[0]:
            built = self._scalar(event)
            plain = self.plain
            if len(plain) < _PLAIN_MEMO and type(built[0]) in _IMMUTABLE and len(event.value) <= _PLAIN_CHARS:
                plain[event.value] = built
            return built
        return self._scalar(event)

    def _scalar(self, event: Any) -> tuple[Any, bool]:
        value: str = event.value
        tag = event.tag
        if tag is None:
            if not event.implicit[0]:
                return value, False  # quoted: text
            constant = self.constants.get(value, _UNSET)
            if constant is not _UNSET:
                return constant, False
            if _DECIMAL.fullmatch(value):
                return int(value), False
            if self.resolved_starts is not None and value and value[0] not in self.resolved_starts:
                return value, False
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
        if tag == STR:
            return value, False
        if tag == MERGE:
            return value, True
        extra = self.tags.get(tag)
        if extra is not None:
            return extra(value), False
        if tag in _COLLECTION_TAGS:
            raise TagMismatchError(f"a scalar cannot take the tag {tag!r}")
        constructors = self.loader.yaml_constructors
        construct = constructors.get(tag) or constructors[None]
        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
        try:
            built = construct(self.loader, node)
            if isinstance(built, GeneratorType):  # a constructor that builds in two steps: run both
                steps = built
                built = next(steps)
                for _ in steps:
                    pass
        except (ValueError, TypeError, LookupError, AttributeError, OverflowError):
            # PyYAML's constructors trust the tag: `!!int abc` or `!!bool maybe` raise plain Python errors.
            raise TagMismatchError(f"{_clip(value)!r} is not a valid {tag.rsplit(':', 1)[-1]}") from None
        return built, False

    def mapping(self, tag: str, value: dict[Any, Any]) -> Any:
        """A mapping's value under its tag: itself, a set of its keys, or what an extra tag builds."""
        if tag == MAP:
            return value
        if tag == SET:
            return set(value)
        extra = self.tags.get(tag)
        if extra is not None:
            return extra(value)
        raise TagMismatchError(f"a mapping cannot take the tag {tag!r}")

    def sequence(self, tag: str, value: list[Any]) -> Any:
        """A list's value under its tag: itself, pairs (``!!omap``, ``!!pairs``), or what an extra tag builds."""
        if tag == SEQ:
            return value
        if tag in _PAIRS:
            pairs: list[tuple[Any, Any]] = []
            for item in value:
                if not isinstance(item, dict) or len(item) != 1:
                    raise TagMismatchError(f"each item of {tag!r} is a mapping of one key")
                pairs.append(next(iter(item.items())))
            return pairs
        extra = self.tags.get(tag)
        if extra is not None:
            return extra(value)
        raise TagMismatchError(f"a list cannot take the tag {tag!r}")


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
