"""The ``Args:`` section of a Google docstring, read as option name -> one-line description."""

from __future__ import annotations

import inspect
import re

# ``name: text``, ``name (type): text`` or ``**name: text`` at the section's own indentation.
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")
# A sentence ends at a full stop before a capital or code, but not inside "e.g." or "i.e.".
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s+(?=[A-Z`(])")


def argument_docs(doc: str | None) -> dict[str, str]:
    """Each documented argument's first sentence, keyed by its name as written (``**settings`` keeps its stars).

    Args:
        doc: A Google-style docstring, or None.

    Example:
        >>> argument_docs("Judge.\\n\\nArgs:\\n    text: One text. Or many.\\n        More.\\n")
        {'text': 'One text.'}
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Args:")
    except StopIteration:
        return {}
    section_indent = _indent(lines[start])
    texts: dict[str, list[str]] = {}
    arg_indent: int | None = None
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= section_indent:
            break  # the next section (Raises:, Returns:, Example:)
        found = _ARG.match(line.strip())
        if found and (arg_indent is None or indent == arg_indent):
            arg_indent = indent
            current = texts.setdefault(found.group(1), [])
            current.append(found.group(2))
        elif current is not None:
            current.append(line.strip())
    return {name: _first_sentence(" ".join(words)) for name, words in texts.items()}


def summary_line(doc: str | None) -> str:
    """The docstring's first line: what the object does, in one sentence."""
    lines = inspect.cleandoc(doc or "").splitlines()
    return lines[0].strip() if lines else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].rstrip(".")
    return f"{sentence}." if sentence else ""
