"""Python values from a YAML event stream, one event at a time, on an explicit stack.

The hot loop is written for speed (a million values a second or so): common
plain scalars (whole numbers, booleans, null, text no resolver claims) are
built without PyYAML's resolver and constructors; everything else goes
through them, so the values are exactly ``yaml.safe_load``'s.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import GeneratorType
from typing import Any

import yaml
from yaml import events

from jurybox.inputs._lines import Block, Lines, PathKey

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_SET = "tag:yaml.org,2002:set"
_MERGE = "tag:yaml.org,2002:merge"
_PAIRS = frozenset({"tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"})
_COLLECTION_TAGS = frozenset({_SEQ, _MAP, _SET, *_PAIRS})
# A plain decimal that int() reads as YAML does (no "_", no leading zero, well short of int()'s digit limit).
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})")
_UNSET: Any = object()

#: Extra tags a reader accepts, each with what turns the built value (text, list or mapping) into its own.
TagConstructors = Mapping[str, Callable[[Any], Any]]


class InputError(ValueError):
    """An input that cannot be read: unreadable, not YAML, over a limit, or a shape YAML values cannot take.

    Attributes:
        source: The file (or form field) the text came from.
        line: The 1-based line of the problem, when there is one.
        path: Where in the document, as keys and indexes (empty at the top or when unknown).
        problem: What is wrong, without the file and line.
        syntax: True when the text is not YAML at all (callers say "invalid YAML: ...").
    """

    def __init__(
        self, source: str, line: int | None, problem: str, *, path: PathKey = (), syntax: bool = False
    ) -> None:
        self.source = source
        self.line = line
        self.path = path
        self.problem = problem
        self.syntax = syntax
        super().__init__(f"{source}:{line}: {problem}" if line is not None else f"{source}: {problem}")


@dataclass(frozen=True)
class Limits:
    depth: int
    nodes: int
    expanded: int
    growth: int


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


class _Open:
    """A list or mapping being built: its values so far and what its limits and lines need."""

    __slots__ = (
        "anchor",
        "height",
        "is_map",
        "key",
        "key_line",
        "key_merges",
        "keys",
        "line",
        "lines",
        "merge_line",
        "merges",
        "path",
        "size",
        "tag",
        "value",
    )

    def __init__(self, is_map: bool, tag: str, anchor: str | None, line: int, path: PathKey) -> None:
        self.is_map = is_map
        self.tag = tag
        self.anchor = anchor
        self.line = line
        self.path = path
        self.value: Any = {} if is_map else []
        self.size = 1
        self.height = 1
        self.lines: array[int] = array("I")
        self.keys: list[str] | None = [] if is_map else None
        self.key: Any = _UNSET  # a mapping's key waiting for its value
        self.key_line = 0
        self.key_merges = False
        self.merges: list[dict[Any, Any]] | None = None
        self.merge_line = 0


class Builder:
    """Builds one document from ``loader``'s events (its stream start already pending)."""

    def __init__(
        self,
        loader: Any,  # a yaml.SafeLoader or CSafeLoader (PyYAML's stubs leave their methods untyped)
        source: str,
        limits: Limits,
        *,
        lines: bool,
        duplicates: bool,
        anchors: bool,
        tags: TagConstructors | None,
    ) -> None:
        self.loader: Any = loader
        self.source = source
        self.limits = limits
        self.keep_lines = lines
        self.duplicates = duplicates
        self.allow_anchors = anchors
        self.tags = tags or {}
        self.stack: list[_Open] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, expanded size, height)
        self.open_anchors: set[str] = set()
        self.written = 0
        self.expanded = 0
        self.blocks: dict[PathKey, Block] = {}
        self.keys: dict[str, str] = {}
        self.root: Any = None
        self.root_line = 0
        resolvers = type(loader).yaml_implicit_resolvers
        # Plain scalars starting with any other character are text, unless a resolver matches any start.
        self.resolved_starts: frozenset[str] | None = None if None in resolvers else frozenset(resolvers)
        self.constants = _plain_constants(loader)

    def fail(self, line: int, problem: str, path: PathKey | None = None) -> InputError:
        return InputError(self.source, line, problem, path=self.here() if path is None else path)

    def refuse(self, line: int, reason: str) -> InputError:
        return self.fail(line, f"refused: {reason} (limits on input size, depth and aliases)")

    def run(self) -> tuple[Any, Lines]:
        loader = self.loader
        get: Any = loader.get_event
        stack = self.stack
        depth_limit, node_limit = self.limits.depth, self.limits.nodes
        get()  # StreamStart
        if loader.check_event(events.StreamEndEvent):
            return None, Lines()
        get()  # DocumentStart
        while True:
            event = get()
            kind = type(event)
            if kind is events.DocumentEndEvent:
                break
            line = event.start_mark.line + 1
            if kind is events.ScalarEvent or kind is events.SequenceStartEvent or kind is events.MappingStartEvent:
                self.written += 1
                self.expanded += 1
                if self.written > node_limit:
                    raise self.refuse(line, f"more than {node_limit:,} values in one document")
                if len(stack) >= depth_limit:
                    raise self.refuse(line, f"nested deeper than {depth_limit} levels")
                anchor = event.anchor
                if kind is events.ScalarEvent:
                    value, merge = self.scalar(event, line)
                    if anchor is not None:
                        self.anchor(anchor, line)
                        self.anchors[anchor] = (value, 1, 1)
                    if not stack:
                        self.root, self.root_line = value, line
                        continue
                    # The commonest cases inline (a list's item, a mapping's text key, a key's value): see done().
                    parent = stack[-1]
                    parent.size += 1
                    parent.height = max(parent.height, 2)
                    if not parent.is_map:
                        parent.value.append(value)
                        parent.lines.append(line)
                    elif parent.key is _UNSET:
                        if type(value) is str and not merge:
                            # Keys repeat (every case has a "name"): one object per distinct key.
                            value = self.keys.setdefault(value, value)
                            parent.key, parent.key_line, parent.key_merges = value, line, False
                        else:
                            self.take_key(parent, value, line, merge=merge, is_collection=False)
                    else:
                        self.set_value(parent, value)
                    continue
                if anchor is not None:
                    self.anchor(anchor, line)
                    self.open_anchors.add(anchor)
                is_map = kind is events.MappingStartEvent
                tag = event.tag
                if tag is None or tag == "!":
                    tag = _MAP if is_map else _SEQ
                stack.append(_Open(is_map, tag, anchor, line, self.child_path()))
            elif kind is events.AliasEvent:
                self.alias(event.anchor, line)
            else:  # a list or mapping ends
                self.close(stack.pop())
        if not loader.check_event(events.StreamEndEvent):
            extra = get()
            raise self.fail(
                extra.start_mark.line + 1, "expected a single document in the stream, but found another document", ()
            )
        return self.root, Lines(self.root_line, self.blocks) if self.keep_lines else Lines()

    def anchor(self, name: str, line: int) -> None:
        if not self.allow_anchors:
            raise self.fail(line, "YAML anchors and aliases are not allowed here")
        if name in self.anchors or name in self.open_anchors:
            raise self.fail(line, f"the anchor &{name} is defined twice")

    def alias(self, name: str, line: int) -> None:
        if not self.allow_anchors:
            raise self.fail(line, "YAML anchors and aliases are not allowed here")
        if name in self.open_anchors:
            raise self.refuse(line, "an alias refers to a value that contains it")
        found = self.anchors.get(name)
        if found is None:
            raise self.fail(line, f"the alias *{name} names no anchor defined before it")
        value, size, height = found
        if len(self.stack) + height > self.limits.depth:
            raise self.refuse(line, f"nested deeper than {self.limits.depth} levels")
        self.written += 1
        self.expanded += size
        if self.written > self.limits.nodes:
            raise self.refuse(line, f"more than {self.limits.nodes:,} values in one document")
        limit = max(self.limits.expanded, self.written * self.limits.growth)
        if self.expanded > limit:
            raise self.refuse(line, f"aliases expand it past {limit:,} values")
        self.done(value, line, size, height, merge=False, is_collection=isinstance(value, list | dict | set))

    def scalar(self, event: Any, line: int) -> tuple[Any, bool]:
        """The scalar's value, and whether it is the merge key ``<<``."""
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
        if tag == _STR:
            return value, False
        if tag == _MERGE:
            return value, True
        extra = self.tags.get(tag)
        if extra is not None:
            return extra(value), False
        if tag in _COLLECTION_TAGS:
            raise self.fail(line, f"a scalar cannot take the tag {tag!r}")
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
            raise self.fail(line, f"{_clip(value)!r} is not a valid {tag.rsplit(':', 1)[-1]}") from None
        return built, False

    def child_path(self) -> PathKey:
        """The path of the value that starts now (empty when lines are not kept)."""
        if not self.keep_lines or not self.stack:
            return ()
        parent = self.stack[-1]
        if not parent.is_map:
            return (*parent.path, len(parent.value))
        if parent.key is _UNSET:
            return parent.path  # a list or mapping as a key: refused when it ends
        return (*parent.path, _part(parent.key))

    def here(self) -> PathKey:
        return self.child_path() if self.stack else ()

    def close(self, frame: _Open) -> None:
        value: Any = frame.value
        if frame.is_map:
            if frame.merges:
                # The YAML merge rule: a key the mapping writes holds, then the earliest merged mapping's.
                merged: dict[Any, Any] = {}
                for source in frame.merges:
                    for key, item in source.items():
                        merged.setdefault(key, item)
                assert frame.keys is not None
                for key in merged:
                    if key not in value:
                        frame.keys.append(_part(key))
                        frame.lines.append(frame.merge_line)
                merged.update(value)
                value = merged
            value = self.tagged_mapping(frame, value)
        else:
            value = self.tagged_sequence(frame, value)
        if self.keep_lines:
            # Where a lookup finds this value: its key's line in a mapping, else where it starts.
            parent = self.stack[-1] if self.stack else None
            found_at = parent.key_line if parent is not None and parent.is_map else frame.line
            # Children all on that line (`{a: 1, b: 2}`) need no block: a lookup falls back to this value's line.
            if any(line != found_at for line in frame.lines):
                self.blocks[frame.path] = Block(frame.line, frame.keys, frame.lines)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (value, frame.size, frame.height)
        self.done(value, frame.line, frame.size, frame.height, merge=False, is_collection=True)

    def tagged_mapping(self, frame: _Open, value: dict[Any, Any]) -> Any:
        if frame.tag == _MAP:
            return value
        if frame.tag == _SET:
            return set(value)
        extra = self.tags.get(frame.tag)
        if extra is not None:
            return extra(value)
        raise self.fail(frame.line, f"a mapping cannot take the tag {frame.tag!r}", frame.path)

    def tagged_sequence(self, frame: _Open, value: list[Any]) -> Any:
        if frame.tag == _SEQ:
            return value
        if frame.tag in _PAIRS:
            pairs: list[tuple[Any, Any]] = []
            for item in value:
                if not isinstance(item, dict) or len(item) != 1:
                    raise self.fail(frame.line, f"each item of {frame.tag!r} is a mapping of one key", frame.path)
                pairs.append(next(iter(item.items())))
            return pairs
        extra = self.tags.get(frame.tag)
        if extra is not None:
            return extra(value)
        raise self.fail(frame.line, f"a list cannot take the tag {frame.tag!r}", frame.path)

    def done(self, value: Any, line: int, size: int, height: int, *, merge: bool, is_collection: bool) -> None:
        """A complete value: the document's root, a list's next item, or a mapping's next key or value."""
        if not self.stack:
            self.root, self.root_line = value, line
            return
        parent = self.stack[-1]
        parent.size += size
        parent.height = max(parent.height, height + 1)
        if not parent.is_map:
            parent.value.append(value)
            parent.lines.append(line)
            return
        if parent.key is _UNSET:
            self.take_key(parent, value, line, merge=merge, is_collection=is_collection)
        else:
            self.set_value(parent, value)

    def set_value(self, parent: _Open, value: Any) -> None:
        """The value of the key ``parent`` holds."""
        key, key_line = parent.key, parent.key_line
        parent.key = _UNSET
        if parent.key_merges:
            self.merge(parent, value, key_line)
            return
        mapping = parent.value
        if not self.duplicates and key in mapping:
            first = parent.lines[list(mapping).index(key)]
            path = (*parent.path, _part(key))
            raise self.fail(key_line, f"duplicate key {_part(key)!r} (first at line {first})", path)
        mapping[key] = value
        parent.keys.append(key if type(key) is str else str(key))  # type: ignore[union-attr]  # a mapping has keys
        parent.lines.append(key_line)

    def take_key(self, parent: _Open, key: Any, line: int, *, merge: bool, is_collection: bool) -> None:
        if is_collection:
            raise self.fail(line, "a key is a list or mapping; keys are text, numbers or booleans", parent.path)
        try:
            hash(key)
        except TypeError:
            raise self.fail(line, "this key cannot be a mapping key", parent.path) from None
        parent.key, parent.key_line, parent.key_merges = key, line, merge

    def merge(self, parent: _Open, value: Any, line: int) -> None:
        """``<<: *defaults`` or ``<<: [*a, *b]``: keys the mapping takes unless it writes them itself."""
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(source, dict) for source in sources):
            raise self.fail(line, "a merge key (<<) takes a mapping or a list of mappings", parent.path)
        parent.merges = [*(parent.merges or ()), *sources]
        parent.merge_line = parent.merge_line or line


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _part(key: Any) -> str:
    return key if isinstance(key, str) else str(key)
