"""Seed data: Markdown files with YAML front matter, loaded as fixtures for the agent under test.

A seed file looks like::

    ---
    id: review-beach-house-1
    type: review
    source: airbnb
    tags: [beach-house, cleanliness]
    valence: positive
    listing: Beach House          # any extra field is kept in ``extra``
    ---
    Spotless place, the host left fresh towels.

``load_seeds(directory)`` loads every ``*.md`` below it in one call; ids must be
unique across the directory. Errors name the file, the line and the field.

``schema=`` picks the rules (see ``_seed_schema``): ``"auto"`` (default) reads a file whose
``type`` is one of Spector's memory types (EPISODIC, SEMANTIC, PROCEDURAL, PROSPECTIVE) by
Spector's rules and every other file by jurybox's; ``"jurybox"`` and ``"spector"`` apply one
set to every file; a declared schema checks the fields it lists.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jurybox.inputs import InputError, read_text
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._seed import Seed
from jurybox.suites._seed_schema import SeedSchema, SeedSchemaRef, is_spector_record, resolve_schema
from jurybox.suites._yaml import Located, format_path, load_yaml

FENCE = "---"
VALENCE_WORDS = ("positive", "negative", "neutral", "mixed")


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1)
    type: str = Field(min_length=1)
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    valence: float | str | None = None

    @field_validator("tags", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        # "tags: beach-house, cleanliness" is one YAML string; read it as the list it means.
        return [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value

    @field_validator("valence")
    @classmethod
    def _valence(cls, value: float | str | None) -> float | str | None:
        if isinstance(value, str) and value not in VALENCE_WORDS:
            raise ValueError(f"valence must be a number in -1..1 or one of {', '.join(VALENCE_WORDS)}")
        if isinstance(value, float | int) and not -1.0 <= value <= 1.0:
            raise ValueError(
                "valence must be in -1..1 (Spector's integer -20..20 scale needs 'seed_schema: spector', "
                "or a Spector memory type such as type: SEMANTIC)"
            )
        return value


def parse_seed(text: str, file: str | Path, *, schema: SeedSchemaRef = None) -> Seed:
    """Parse one seed document.

    Args:
        text: The file's text: front matter between ``---`` lines, then the Markdown body.
        file: Its name, for errors and ``Seed.file``.
        schema: ``"auto"`` (None), ``"jurybox"``, ``"spector"``, or a declared schema.

    Raises:
        SuiteError: when the front matter is missing, unterminated, not YAML,
            or lacks ``id``/``type``, naming the file, line and field.
    """
    name = str(file)
    # Found in the text, not in a list of its lines (a list of a big file's lines costs ten times the file).
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.strip() != FENCE:
        raise SuiteError.at(name, 1, "", f"a seed file starts with a '{FENCE}' line and YAML front matter")
    closing = _fence_after(text, first_end + 1) if first_end >= 0 else None
    if closing is None:
        raise SuiteError.at(name, 1, "", f"front matter is not closed: add a '{FENCE}' line after it")
    located = load_yaml(text[first_end + 1 : closing[0]], name, line_offset=1)
    if not isinstance(located.data, dict):
        raise SuiteError.at(name, 2, "", "front matter must be a YAML mapping (id: ..., type: ...)")
    body = text[closing[1] + 1 :].strip("\n")
    rules = _schema(schema, name)
    if rules == "auto":
        rules = SPECTOR_RULES if is_spector_record(located.data) else "jurybox"
    if isinstance(rules, SeedSchema):
        return _declared_seed(rules, located, body, Path(file))
    try:
        front = _FrontMatter.model_validate(located.data)
    except ValidationError as exc:
        raise _validation_error(exc, located) from None
    extra = dict(front.model_extra or {})
    return Seed(
        id=front.id,
        type=front.type,
        source=front.source,
        tags=tuple(front.tags),
        valence=front.valence,
        body=body,
        extra=extra,
        file=Path(file),
        line=1,
    )


def _fence_after(text: str, start: int) -> tuple[int, int] | None:
    """Where the first line from ``start`` on that is the fence begins and ends (spaces around it allowed)."""
    at = start
    while (at := text.find(FENCE, at)) >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        if line_start >= start and text[line_start:line_end].strip() == FENCE:
            return line_start, line_end
        at = line_end
    return None


def load_seed(path: str | Path, *, schema: SeedSchemaRef = None) -> Seed:
    """Read and parse one seed file (``schema`` as in ``parse_seed``)."""
    file = Path(path)
    try:
        text = read_text(file)
    except InputError as exc:
        raise SuiteError.at(file, exc.line, "", f"cannot read seed file: {exc.problem}") from None
    return parse_seed(text, file, schema=schema)


def load_seeds(*paths: str | Path, pattern: str = "*.md", schema: SeedSchemaRef = None) -> list[Seed]:
    """Load seed files and directories (recursively, ``pattern`` files, sorted by path) in one call.

    ``schema`` is as in ``parse_seed``: ``"auto"`` (None), ``"jurybox"``, ``"spector"`` or a declared schema.

    Every file is parsed before anything is returned, and every problem is
    reported together; duplicate ids are an error.

    Raises:
        SuiteError: listing every bad file with its line and field.
    """
    files: list[Path] = []
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob(pattern) if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            problems.append(Problem(str(path), None, "", "no such seed file or directory"))
    seeds: list[Seed] = []
    first_seen: dict[str, Seed] = {}
    for file in files:
        try:
            seed = load_seed(file, schema=schema)
        except SuiteError as exc:
            problems.extend(exc.problems)
            continue
        if seed.id in first_seen:
            other = first_seen[seed.id]
            problems.append(Problem(str(file), 2, "id", f"duplicate seed id {seed.id!r} (also in {other.file})"))
            continue
        first_seen[seed.id] = seed
        seeds.append(seed)
    if problems:
        raise SuiteError(problems)
    return seeds


def _validation_error(exc: ValidationError, located: Located) -> SuiteError:
    problems = []
    for error in exc.errors():
        path = tuple(error["loc"])
        problems.append(Problem(located.file, located.line_of(path), format_path(path), error["msg"]))
    return SuiteError(problems)


SPECTOR_RULES = resolve_schema("spector")
_KNOWN = ("id", "type", "source", "tags", "valence")


def _schema(ref: SeedSchemaRef, file: str) -> SeedSchema | str:
    try:
        return resolve_schema(ref)
    except (ValueError, ValidationError) as exc:
        raise SuiteError.at(file, None, "seed_schema", str(exc).splitlines()[0]) from None


def _declared_seed(schema: SeedSchema, located: Located, body: str, file: Path) -> Seed:
    """A seed checked by a declared schema; every problem is reported with its line."""
    values, problems = schema.check(located.data)
    if problems:
        raise SuiteError(
            [
                Problem(located.file, located.line_of((name,)), name, f"{message} ({schema.name} seed schema)")
                for name, message in problems
            ]
        )
    source, kind = values.get("source"), values.get("type")
    return Seed(
        id=values["id"],
        type="" if kind is None else str(kind),
        source=None if source is None else str(source),
        tags=tuple(values.get("tags") or ()),
        valence=values.get("valence"),
        body=body,
        extra={key: value for key, value in values.items() if key not in _KNOWN},
        file=file,
        line=1,
    )


def seed_schema_problems(doc: Located, ref: SeedSchemaRef) -> list[Problem]:
    """What is wrong with a suite's ``seed_schema:``, each problem on its own line of the suite file."""
    try:
        resolve_schema(ref)
    except ValidationError as exc:
        return [
            Problem(
                doc.file,
                doc.line_of(("seed_schema", *error["loc"])),
                format_path(("seed_schema", *error["loc"])),
                error["msg"],
            )
            for error in exc.errors()
        ]
    except ValueError as exc:
        return [Problem(doc.file, doc.line_of(("seed_schema",)), "seed_schema", str(exc))]
    return []
