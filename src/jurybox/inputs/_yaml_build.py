"""Python values from a YAML event stream, one event at a time, on an explicit stack.

The hot loop is written for speed (a million values a second or so): the
commonest events (a list's scalar item, a mapping's text key and its value)
are handled inline; values themselves are built by ``_yaml_values.Values``,
exactly as ``yaml.safe_load`` builds them.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from yaml import events

from jurybox.inputs._errors import InputError
from jurybox.inputs._lines import Block, Lines, PathKey
from jurybox.inputs._yaml_values import MAP, SEQ, TagConstructors, TagMismatchError, Values

_UNSET: Any = object()


@dataclass(frozen=True)
class Limits:
    depth: int
    nodes: int
    expanded: int
    growth: int


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
        self.stack: list[_Open] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, expanded size, height)
        self.open_anchors: set[str] = set()
        self.written = 0
        self.expanded = 0
        self.blocks: dict[PathKey, Block] = {}
        self.keys: dict[str, str] = {}
        self.root: Any = None
        self.root_line = 0
        self.values = Values(loader, tags)

    def fail(self, line: int, problem: str, path: PathKey | None = None) -> InputError:
        return InputError(self.source, line, problem, path=self.here() if path is None else path)

    def refuse(self, line: int, reason: str) -> InputError:
        return self.fail(line, f"refused: {reason}")

    def count_node(self, line: int) -> None:
        """One more value written in the document: refused past the node or depth limit."""
        self.written += 1
        self.expanded += 1
        if self.written > self.limits.nodes:
            raise self.refuse(line, f"more than {self.limits.nodes:,} values in one document")
        if len(self.stack) >= self.limits.depth:
            raise self.refuse(line, f"nested deeper than {self.limits.depth} levels")

    def run(self) -> tuple[Any, Lines]:
        loader = self.loader
        get: Any = loader.get_event
        stack = self.stack
        scalar = self.values.scalar
        plain = self.values.plain  # plain scalars already resolved: every case's keys are the same few words
        keys = self.keys
        duplicates = self.duplicates
        keep_lines = self.keep_lines
        scalar_event, sequence_start, mapping_start = (
            events.ScalarEvent,
            events.SequenceStartEvent,
            events.MappingStartEvent,
        )
        alias_event, document_end = events.AliasEvent, events.DocumentEndEvent
        get()  # StreamStart
        if loader.check_event(events.StreamEndEvent):
            return None, Lines()
        get()  # DocumentStart
        while True:
            event = get()
            kind = type(event)
            if kind is scalar_event:
                line = event.start_mark.line + 1
                self.count_node(line)
                merge = False
                if event.tag is not None:
                    value, merge = self.tagged(event, line)
                elif not event.implicit[0]:
                    value = event.value  # quoted: text
                else:
                    found = plain.get(event.value)
                    if found is not None:
                        value, merge = found
                    else:
                        try:
                            value, merge = scalar(event)
                        except TagMismatchError as problem:
                            raise self.fail(line, str(problem)) from None
                anchor = event.anchor
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
                    continue
                key = parent.key
                if key is _UNSET:
                    if type(value) is str and not merge:
                        # Keys repeat (every case has a "name"): one object per distinct key.
                        value = keys.setdefault(value, value)
                        parent.key, parent.key_line, parent.key_merges = value, line, False
                    else:
                        self.take_key(parent, value, line, merge=merge, is_collection=False)
                    continue
                if parent.key_merges or (not duplicates and key in parent.value):
                    self.set_value(parent, value)  # a merge, or the duplicate key it reports
                    continue
                parent.key = _UNSET
                parent.value[key] = value
                parent.keys.append(key if type(key) is str else str(key))  # type: ignore[union-attr]  # a mapping
                parent.lines.append(parent.key_line)
            elif kind is mapping_start or kind is sequence_start:
                line = event.start_mark.line + 1
                self.count_node(line)
                anchor = event.anchor
                if anchor is not None:
                    self.anchor(anchor, line)
                    self.open_anchors.add(anchor)
                is_map = kind is mapping_start
                tag = event.tag
                if tag is None or tag == "!":
                    tag = MAP if is_map else SEQ
                stack.append(_Open(is_map, tag, anchor, line, self.child_path() if keep_lines else ()))
            elif kind is alias_event:
                self.alias(event.anchor, event.start_mark.line + 1)
            elif kind is document_end:
                break
            else:  # a list or mapping ends
                self.close(stack.pop())
        if not loader.check_event(events.StreamEndEvent):
            extra = get()
            raise self.fail(
                extra.start_mark.line + 1, "expected a single document in the stream, but found another document", ()
            )
        return self.root, Lines(self.root_line, self.blocks) if self.keep_lines else Lines()

    def tagged(self, event: Any, line: int) -> tuple[Any, bool]:
        """A scalar with a tag (``!!int 3``, ``!`` or an extra tag), and whether it is the merge key."""
        try:
            return self.values.scalar(event)
        except TagMismatchError as problem:
            raise self.fail(line, str(problem)) from None

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
        if frame.is_map and frame.merges:
            value = self.merged(frame, value)
        tag = frame.tag
        if tag is not MAP and tag is not SEQ:  # a plain list or mapping is itself
            try:
                value = self.values.mapping(tag, value) if frame.is_map else self.values.sequence(tag, value)
            except TagMismatchError as problem:
                raise self.fail(frame.line, str(problem), frame.path) from None
        stack = self.stack
        parent = stack[-1] if stack else None
        if self.keep_lines:
            # Where a lookup finds this value: its key's line in a mapping, else where it starts.
            found_at = parent.key_line if parent is not None and parent.is_map else frame.line
            # Children all on that line (`{a: 1, b: 2}`) need no block: a lookup falls back to this value's line.
            lines = frame.lines
            if lines.count(found_at) != len(lines):
                self.blocks[frame.path] = Block(frame.line, frame.keys, lines)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (value, frame.size, frame.height)
        if parent is None or (parent.is_map and (parent.key is _UNSET or parent.key_merges)):
            # The root, a list or mapping as a key (refused), or a merge's value: done() has the rules.
            self.done(value, frame.line, frame.size, frame.height, merge=False, is_collection=True)
            return
        # done(), inlined for a list's item and a key's value: a list of 10,000 cases closes 40,000 of them.
        parent.size += frame.size
        if parent.height <= frame.height:
            parent.height = frame.height + 1
        if parent.is_map:
            self.set_value(parent, value)
        else:
            parent.value.append(value)
            parent.lines.append(frame.line)

    def merged(self, frame: _Open, own: dict[Any, Any]) -> dict[Any, Any]:
        """The YAML merge rule: a key the mapping writes holds, then the earliest merged mapping's."""
        merged: dict[Any, Any] = {}
        for source in frame.merges or ():
            for key, item in source.items():
                merged.setdefault(key, item)
        assert frame.keys is not None
        for key in merged:
            if key not in own:
                frame.keys.append(_part(key))
                frame.lines.append(frame.merge_line)
        merged.update(own)
        return merged

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


def _part(key: Any) -> str:
    return key if isinstance(key, str) else str(key)
