"""Labelled sets: rows of what the system saw and said, and what people judged it to be.

A row holds the Context fields (``input``, ``output``, ``expected``,
``sources``; ``output_a`` / ``output_b`` for a pairwise set), ``tags``,
``metadata`` and the human verdict: ``label`` (one verdict), ``labels`` (one
per rater: ``{alice: pass, bob: fail}``), or both. The kind of label is the
same for the whole set:

* ``binary``: pass / fail (also good / bad, true / false, yes / no);
* ``category``: any label text (``A``, ``toxic``, ...);
* ``numeric``: a number (a 1-5 rating);
* ``preference``: which of two outputs people preferred: ``a``, ``b`` or ``tie``.

Files are JSONL (one row a line), CSV (a header row; ``label.<rater>`` columns
are per-rater labels, ``metadata.<key>`` columns go to metadata; ``sources`` and
``tags`` hold a JSON list or one value) or YAML (a list of rows, or ``rows:``).
A suite file's cases marked ``label: good`` or ``label: bad`` are binary rows too, and an
LLM operation's fixture (``{"input": {...}, "expected": {"action": "NOOP"}}``) is a row
labelled with its ``expected`` object's one value, its input the object's JSON text.
Every problem is reported as ``file:line:field``; a set with any problem does not load.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jurybox.calibrate._errors import CalibrationInputError, Problem
from jurybox.calibrate._input import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_ROWS,
    Record,
    csv_records,
    jsonl_records,
    limited,
    read_text,
    refuse_long_jsonl,
    yaml_document,
    yaml_records,
)
from jurybox.core import Context, read_json, structured_fields

LabelKind = Literal["binary", "category", "numeric", "preference"]
LABEL_KINDS: tuple[LabelKind, ...] = ("binary", "category", "numeric", "preference")
Label = str | float
PASS, FAIL = "pass", "fail"
PREFERENCES = ("a", "b", "tie")
_BINARY_WORDS = {
    "pass": PASS, "good": PASS, "true": PASS, "yes": PASS, "correct": PASS,
    "fail": FAIL, "bad": FAIL, "false": FAIL, "no": FAIL, "incorrect": FAIL,
}  # fmt: skip
_PREFERENCE_WORDS = {"a": "a", "b": "b", "tie": "tie", "output_a": "a", "output_b": "b"}
ROW_FIELDS = (
    "id",
    "input",
    "output",
    "expected",
    "sources",
    "output_a",
    "output_b",
    "label",
    "labels",
    "tags",
    "metadata",
)
_SUITE_CASE_FIELDS = {"name": "id", "prompt": "input", "reference": "expected"}


@dataclass(frozen=True)
class LabelledRow:
    """One labelled example.

    Attributes:
        id: Unique within the set; recorded judge outputs refer to it.
        context: What a judge sees (for a pairwise row, ``output`` is
            ``output_a`` and ``expected`` is ``output_b``).
        label: The human verdict (``label``, or the raters' majority / mean);
            None when raters split evenly: such a row is counted, never guessed.
        raters: One label per rater, when given.
        output_a: First output of a pairwise row.
        output_b: Second output of a pairwise row.
        tags: Tags, for slices.
        line: Where the row starts in its file.
    """

    id: str
    context: Context
    label: Label | None
    raters: Mapping[str, Label] = field(default_factory=dict)
    output_a: str | None = None
    output_b: str | None = None
    tags: tuple[str, ...] = ()
    line: int | None = None

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.context.metadata


@dataclass(frozen=True)
class LabelledSet:
    """A loaded labelled set: every row valid, all labels of one kind.

    Attributes:
        source: Where it came from (a path or a name).
        kind: ``binary``, ``category``, ``numeric`` or ``preference``.
        rows: The rows, in file order.
        classes: The human classes in a fixed order (``pass``, ``fail`` for
            binary; ``a``, ``b``, ``tie`` for preference; sorted labels for
            category; empty for numeric).
        raters: Every rater named in ``labels``, sorted.
    """

    source: str
    kind: LabelKind
    rows: tuple[LabelledRow, ...]
    classes: tuple[str, ...]
    raters: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.rows)


def load_labelled_set(path: str | Path, *, kind: LabelKind | None = None, max_bytes: int = MAX_BYTES) -> LabelledSet:
    """Load a labelled set from a JSONL, CSV or YAML file (or a suite file's labelled cases).

    Args:
        path: The file; its extension says the format (``.jsonl``, ``.csv``, ``.yaml``/``.yml``).
        kind: The label kind; None infers it (pairwise fields: preference;
            all pass/fail words: binary; all numbers: numeric; else category).
        max_bytes: Refuse larger files.

    Raises:
        CalibrationInputError: every problem found, each as ``file:line:field: message``.
    """
    file = Path(path)
    source = str(file)
    text = read_text(file, max_bytes)
    suffix = file.suffix.lower()
    records: Iterable[Record | Problem]
    suite = False
    if suffix == ".jsonl":
        refuse_long_jsonl(text, source, MAX_ROWS, "rows")
        records = jsonl_records(text, source)
    elif suffix == ".csv":
        records = [_from_csv(item, source) if isinstance(item, Record) else item for item in csv_records(text, source)]
    elif suffix in (".yaml", ".yml"):
        data, lines = yaml_document(text, source)
        if isinstance(data, dict) and "cases" in data:
            suite = True
            records = list(yaml_records(data["cases"], lines, ("cases",), source))
        elif isinstance(data, dict) and "rows" in data:
            records = list(yaml_records(data["rows"], lines, ("rows",), source))
        else:
            records = list(yaml_records(data, lines, (), source))
    else:
        raise CalibrationInputError.one(source, None, "", "unknown format: use .jsonl, .csv, .yaml or .yml")
    return build_labelled_set(limited(records, source, MAX_ROWS, "rows"), source, kind=kind, suite=suite)


def labelled_set_from_rows(
    rows: Iterable[Mapping[str, Any]], *, source: str = "<rows>", kind: LabelKind | None = None
) -> LabelledSet:
    """A labelled set from row mappings in memory (the same fields and checks as a file)."""
    return build_labelled_set(
        (Record(index, dict(row), {}) for index, row in enumerate(rows, start=1)), source, kind=kind
    )


def build_labelled_set(
    records: Iterable[Record | Problem], source: str, *, kind: LabelKind | None = None, suite: bool = False
) -> LabelledSet:
    """Check every record and build the set, or raise with all the problems found."""
    if kind is not None and kind not in LABEL_KINDS:
        raise CalibrationInputError.one(
            source, None, "kind", f"unknown label kind {kind!r}; use one of {', '.join(LABEL_KINDS)}"
        )
    problems: list[Problem] = []
    drafts: list[_Draft] = []
    for item in records:
        if isinstance(item, Problem):
            problems.append(item)
            continue
        draft = _suite_case(item, source, problems) if suite else _row(item, source, problems)
        if draft is not None:
            drafts.append(draft)
    if not drafts and not problems:
        problems.append(Problem(source, None, "", "no labelled rows" + (" (no case has a 'label')" if suite else "")))
    chosen = kind or _infer_kind(drafts)
    rows: list[LabelledRow] = []
    seen: dict[str, int | None] = {}
    for draft in drafts:
        row = _typed(draft, chosen, source, problems)
        if row is None:
            continue
        if row.id in seen:
            problems.append(
                Problem(
                    source,
                    draft.record.field_lines.get("id", draft.record.line),
                    "id",
                    f"duplicate id {row.id!r} (first on line {seen[row.id]})",
                )
            )
            continue
        seen[row.id] = row.line
        rows.append(row)
    if problems:
        raise CalibrationInputError(problems)
    return LabelledSet(
        source=source,
        kind=chosen,
        rows=tuple(rows),
        classes=_classes(chosen, rows),
        raters=tuple(sorted({name for row in rows for name in row.raters})),
    )


@dataclass
class _Draft:
    """A row whose fields are checked but whose labels are not yet typed (the kind is decided over all rows)."""

    record: Record
    id: str
    fields: dict[str, Any]
    label: Any
    raters: dict[str, Any]
    tags: tuple[str, ...]
    metadata: dict[str, Any]


def _row(record: Record, source: str, problems: list[Problem]) -> _Draft | None:
    data = record.data
    before = len(problems)

    def problem(name: str, message: str) -> None:
        problems.append(Problem(source, record.field_lines.get(name, record.line), name, message))

    for name in data:
        if name not in ROW_FIELDS:
            problem(name, f"unknown field; valid fields: {', '.join(ROW_FIELDS)}")
    fields: dict[str, Any] = {}
    label = data.get("label")
    if "label" not in data and "labels" not in data:
        label = fixture_label(data.get("expected"))
    structured = structured_fields({k: data[k] for k in ("input", "output", "expected") if k in data})
    for name in ("input", "output", "expected", "output_a", "output_b"):
        value = structured.get(name, data.get(name))
        if value is None:
            continue
        if not isinstance(value, str):
            problem(name, f"must be text, got {type(value).__name__}")
        else:
            fields[name] = value
    sources = data.get("sources")
    if sources is not None:
        if isinstance(sources, str) or not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            problem("sources", "must be a list of texts")
        else:
            fields["sources"] = tuple(sources)
    tags = data.get("tags", [])
    if isinstance(tags, str) or not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        problem("tags", "must be a list of non-empty texts")
        tags = []
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        problem("metadata", f"must be a mapping, got {type(metadata).__name__}")
        metadata = {}
    raters = data.get("labels", {})
    if not isinstance(raters, dict) or not raters:
        if "labels" in data:
            problem("labels", "must be a non-empty mapping of rater to label")
        raters = {}
    if label is None and not raters:
        problem("label", "missing: give 'label' or 'labels' (one per rater), or an 'expected' object of one field")
    if ("output_a" in fields) != ("output_b" in fields):
        problem("output_b" if "output_a" in fields else "output_a", "a pairwise row needs both output_a and output_b")
    raw_id = data.get("id", record.line)
    if (
        isinstance(raw_id, bool)
        or not isinstance(raw_id, str | int)
        or (isinstance(raw_id, str) and not raw_id.strip())
    ):
        problem("id", "must be a non-empty text or a whole number")
    if len(problems) > before:
        return None
    return _Draft(
        record,
        str(raw_id),
        fields,
        label,
        {str(k): v for k, v in raters.items()},
        tuple(tags),
        dict(metadata),
    )


def fixture_label(expected: Any) -> Any:
    """The label of an LLM operation's fixture: the one value of its ``expected`` object, else None.

    ``{"input": {...}, "expected": {"action": "NOOP"}}`` is a row labelled ``NOOP`` (the
    answer the operation must give); its input is the object's JSON text.
    """
    if isinstance(expected, Mapping) and len(expected) == 1:
        (value,) = expected.values()
        if isinstance(value, str | int | float | bool):
            return value
    return None


def _suite_case(record: Record, source: str, problems: list[Problem]) -> _Draft | None:
    """A suite case marked ``label: good|bad`` (with the ``output`` to judge), or None for an unmarked case."""
    data = record.data
    if "label" not in data:
        return None
    line = record.field_lines.get("label", record.line)
    if str(data["label"]).strip().lower() not in ("good", "bad"):
        problems.append(
            Problem(source, line, "label", f"a suite case's label is 'good' or 'bad', got {data['label']!r}")
        )
        return None
    if not isinstance(data.get("output"), str):
        problems.append(
            Problem(
                source,
                record.field_lines.get("output", record.line),
                "output",
                "a labelled case needs the 'output' to judge (text)",
            )
        )
        return None
    row = {
        _SUITE_CASE_FIELDS.get(key, key): value
        for key, value in data.items()
        if key in (*_SUITE_CASE_FIELDS, "output", "label", "sources", "tags", "metadata")
    }
    lines = {_SUITE_CASE_FIELDS.get(key, key): value for key, value in record.field_lines.items()}
    return _row(Record(record.line, row, lines), source, problems)


def _from_csv(record: Record, source: str) -> Record | Problem:
    """CSV cells -> row fields: ``label.<rater>``, ``metadata.<key>``, JSON lists in ``sources`` / ``tags``."""
    data: dict[str, Any] = {}
    for name, cell in record.data.items():
        if name.startswith("label."):
            data.setdefault("labels", {})[name[len("label.") :]] = cell
        elif name.startswith("metadata."):
            data.setdefault("metadata", {})[name[len("metadata.") :]] = cell
        elif name in ("sources", "tags"):
            if cell.lstrip().startswith("["):
                try:
                    data[name] = read_json(cell, max_depth=MAX_DEPTH)
                except ValueError as exc:
                    return Problem(source, record.line, name, f"not a valid JSON list: {exc}")
            else:
                data[name] = [cell]
        else:
            data[name] = cell
    return Record(record.line, data, {})


def _infer_kind(drafts: Sequence[_Draft]) -> LabelKind:
    if any("output_a" in draft.fields for draft in drafts):
        return "preference"
    values = [value for draft in drafts for value in (draft.label, *draft.raters.values()) if value is not None]
    if values and all(
        isinstance(v, bool) or (isinstance(v, str) and v.strip().lower() in _BINARY_WORDS) for v in values
    ):
        return "binary"
    if values and all(_number(v) is not None for v in values):
        return "numeric"
    return "category"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def normalize_label(value: Any, kind: LabelKind) -> Label | None:
    """A label in its canonical form for ``kind``, or None when it is not a label of that kind."""
    if kind == "numeric":
        return _number(value)
    if kind == "binary":
        if isinstance(value, bool):
            return PASS if value else FAIL
        return _BINARY_WORDS.get(str(value).strip().lower()) if isinstance(value, str) else None
    if kind == "preference":
        return _PREFERENCE_WORDS.get(value.strip().lower()) if isinstance(value, str) else None
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


_EXPECTED = {
    "binary": "pass or fail (also good/bad, true/false, yes/no)",
    "numeric": "a number",
    "preference": "a, b or tie",
    "category": "a non-empty label",
}


def _typed(draft: _Draft, kind: LabelKind, source: str, problems: list[Problem]) -> LabelledRow | None:
    record = draft.record
    before = len(problems)
    label: Label | None = None
    if draft.label is not None or not draft.raters:
        label = normalize_label(draft.label, kind)
        if label is None:
            problems.append(
                Problem(
                    source,
                    record.field_lines.get("label", record.line),
                    "label",
                    f"{draft.label!r} is not a {kind} label: expected {_EXPECTED[kind]}",
                )
            )
    raters: dict[str, Label] = {}
    for rater, value in draft.raters.items():
        typed = normalize_label(value, kind)
        if typed is None:
            problems.append(
                Problem(
                    source,
                    record.field_lines.get("labels", record.line),
                    f"labels.{rater}",
                    f"{value!r} is not a {kind} label: expected {_EXPECTED[kind]}",
                )
            )
        else:
            raters[rater] = typed
    pairwise = "output_a" in draft.fields
    if (kind == "preference") != pairwise:
        name = "output_a" if pairwise else "label"
        message = (
            "pairwise fields in a set whose labels are not preferences"
            if pairwise
            else "a preference label needs output_a and output_b"
        )
        problems.append(Problem(source, record.field_lines.get(name, record.line), name, message))
    if len(problems) > before:
        return None
    if draft.label is None:
        label = _consensus(list(raters.values()), kind)
    fields = draft.fields
    context = Context(
        input=fields.get("input", ""),
        output=fields.get("output_a", fields.get("output", "")),
        expected=fields.get("output_b", fields.get("expected")),
        sources=fields.get("sources", ()),
        metadata={**draft.metadata, "tags": list(draft.tags)} if draft.tags else draft.metadata,
    )
    return LabelledRow(
        id=draft.id,
        context=context,
        label=label,
        raters=raters,
        output_a=fields.get("output_a"),
        output_b=fields.get("output_b"),
        tags=draft.tags,
        line=record.line,
    )


def _consensus(values: list[Label], kind: LabelKind) -> Label | None:
    """The raters' mean (numeric) or strict plurality; None on an even split (never a coin toss)."""
    if kind == "numeric":
        return sum(float(v) for v in values) / len(values)
    ranked = Counter(values).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def _classes(kind: LabelKind, rows: Sequence[LabelledRow]) -> tuple[str, ...]:
    if kind == "binary":
        return (PASS, FAIL)
    if kind == "preference":
        return PREFERENCES
    if kind == "numeric":
        return ()
    found = {str(v) for row in rows for v in (row.label, *row.raters.values()) if v is not None}
    return tuple(sorted(found))
