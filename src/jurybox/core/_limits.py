"""Limits on parsed input trees whose nodes may be shared (YAML aliases), checked before anything expands them.

A 1 KB YAML "billion laughs" is a few dozen nodes that alias each other; built
into Python objects (or merely walked) it is a billion. ``tree_limit_breach``
counts what a full expansion would produce without doing it: each shared node
is measured once and its size reused, so the check costs the size of the file.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

N = TypeVar("N", bound=Hashable)

#: Input files jurybox reads (suites, seeds, cassettes, labelled sets) are refused above these.
MAX_INPUT_BYTES = 50 * 1024 * 1024
MAX_INPUT_DEPTH = 100
#: Aliases may repeat parts of a document, but its expansion may not exceed this many values
#: or ``MAX_ALIAS_GROWTH`` times the values actually written in it, whichever is more.
MAX_EXPANDED_NODES = 100_000
MAX_ALIAS_GROWTH = 10


@dataclass(frozen=True)
class Breach(Generic[N]):
    """Which limit a tree breaks and the node where it first does."""

    reason: str
    node: N


def tree_limit_breach(
    root: N,
    children: Callable[[N], Sequence[N]],
    *,
    max_depth: int = MAX_INPUT_DEPTH,
    max_nodes: int = MAX_EXPANDED_NODES,
    max_growth: int = MAX_ALIAS_GROWTH,
) -> Breach[N] | None:
    """The first limit the expanded tree under ``root`` breaks, or None when it keeps them all.

    Iterative (a deep tree cannot exhaust the Python stack) and linear in the distinct nodes.

    Args:
        root: The top node.
        children: A node's children, in order (a mapping's keys and values alike).
        max_depth: Deepest nesting allowed, counting through aliases.
        max_nodes: Nodes the expansion may always hold.
        max_growth: Beyond ``max_nodes``, most times the expansion may exceed the distinct nodes.
    """
    size: dict[N, int] = {}
    height: dict[N, int] = {}
    on_path: set[N] = set()
    stack: list[tuple[N, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            on_path.discard(node)
            kids = children(node)
            size[node] = 1 + sum(size[kid] for kid in kids)
            height[node] = 1 + max((height[kid] for kid in kids), default=0)
            if height[node] > max_depth:
                return Breach(f"nested deeper than {max_depth} levels", node)
            # Without aliases a node's subtree is all distinct nodes already measured: never a breach.
            limit = max(max_nodes, len(size) * max_growth)
            if size[node] > limit:
                return Breach(f"aliases expand it past {limit:,} values", node)
            continue
        if node in size:
            continue
        if node in on_path:
            return Breach("an alias refers to a value that contains it", node)
        on_path.add(node)
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(children(node)) if kid not in size)
        if len(on_path) > max_depth:
            return Breach(f"nested deeper than {max_depth} levels", node)
    return None


def yaml_children(node: Any) -> Sequence[Any]:
    """A PyYAML node's children in order: a mapping's keys and values, a sequence's items, none for a scalar.

    Read by shape (a scalar's ``value`` is text, a mapping's a list of pairs), so ``core`` needs no yaml.
    """
    value = node.value
    if isinstance(value, str):
        return ()
    return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]
