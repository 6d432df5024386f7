"""Seed 000 (Spector) memory files load as the seed writes them; jurybox's own seed format keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.suites import SPECTOR_SEED_SCHEMA, SeedSchema, SuiteError, load_seeds, load_suite, parse_seed

# Seed 000's own example memory, as the seed writes it.
DB_001 = """---
id: db-001
type: SEMANTIC
tags: database, postgresql, connection-pool
valence: 5
source: OBSERVED
---
PostgreSQL connection pools are sized per service; PgBouncer sits in front in transaction mode.
"""


def test_seed_000_db_001_loads_as_written() -> None:
    seed = parse_seed(DB_001, "memories/db-001.md")
    assert (seed.id, seed.type, seed.source, seed.valence) == ("db-001", "SEMANTIC", "OBSERVED", 5)
    assert seed.tags == ("database", "postgresql", "connection-pool")
    assert seed.body.startswith("PostgreSQL connection pools")
    assert seed.to_dict()["tags"] == ["database", "postgresql", "connection-pool"]


def test_seed_000_defaults_valence_0_and_source_observed() -> None:
    text = DB_001.replace("valence: 5\n", "").replace("source: OBSERVED\n", "")
    seed = parse_seed(text, "db-001.md", schema="spector")
    assert (seed.valence, seed.source) == (0, "OBSERVED")


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (
            ("type: SEMANTIC", "type: SEMANTICAL"),
            3,
            "type",
            "must be one of EPISODIC, SEMANTIC, PROCEDURAL, PROSPECTIVE",
        ),
        (("type: SEMANTIC\n", ""), 2, "type", "is required"),
        (("valence: 5", "valence: 21"), 5, "valence", "must be in -20..20"),
        (("valence: 5", "valence: -21"), 5, "valence", "must be in -20..20"),
        (("valence: 5", "valence: 2.5"), 5, "valence", "must be an integer"),
        (("valence: 5", "valence: true"), 5, "valence", "must be an integer"),
        (("source: OBSERVED", "source: GUESSED"), 6, "source", "must be one of OBSERVED, REFLECTED, IMAGINED"),
        (("tags: database, postgresql, connection-pool", "tags: {a: 1}"), 4, "tags", "comma-separated"),
    ],
)
def test_seed_000_mistakes_name_file_line_and_field(
    change: tuple[str, str], line: int, field: str, message: str
) -> None:
    with pytest.raises(SuiteError) as caught:
        parse_seed(DB_001.replace(*change), "memories/db-001.md", schema="spector")
    problem = caught.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("memories/db-001.md", line, field)
    assert message in problem.message


def test_integer_valence_at_the_ends_of_the_range_and_lower_case_types_are_accepted() -> None:
    for valence in (-20, 20, 0):
        text = DB_001.replace("valence: 5", f"valence: {valence}").replace("SEMANTIC", "episodic")
        seed = parse_seed(text, "m.md", schema="spector")
        assert (seed.valence, seed.type) == (valence, "EPISODIC")


def test_auto_reads_spector_types_by_the_seeds_rules_and_everything_else_by_ours() -> None:
    # No schema given: db-001 (a Spector type) gets -20..20; a jurybox record keeps -1..1 and words.
    assert parse_seed(DB_001, "db-001.md").valence == 5
    ours = parse_seed("---\nid: r1\ntype: review\ntags: [a]\nvalence: -0.5\n---\nok\n", "r1.md")
    assert (ours.valence, ours.source, ours.tags) == (-0.5, None, ("a",))
    assert parse_seed("---\nid: r2\ntype: review\nvalence: mixed\n---\n", "r2.md").valence == "mixed"
    # Comma-separated tags work in our format too.
    assert parse_seed("---\nid: r3\ntype: note\ntags: a, b\n---\n", "r3.md").tags == ("a", "b")
    # Our scale still refuses 5, and says how to get the seed's.
    with pytest.raises(SuiteError, match="seed_schema: spector"):
        parse_seed("---\nid: r4\ntype: note\nvalence: 5\n---\n", "r4.md")


def test_a_bogus_type_is_refused_only_where_the_seeds_schema_is_declared() -> None:
    bogus = DB_001.replace("SEMANTIC", "SEMANTIC-ISH").replace("valence: 5\n", "")
    assert parse_seed(bogus, "m.md").type == "SEMANTIC-ISH"  # auto: not a Spector type, so jurybox's free text
    with pytest.raises(SuiteError, match="must be one of EPISODIC"):
        parse_seed(bogus, "m.md", schema="spector")
    with pytest.raises(SuiteError, match=r"must be in -1\.\.1"):
        parse_seed(DB_001, "m.md", schema="jurybox")  # ours, declared: the seed's scale is refused


def test_a_declared_schema_checks_its_fields_and_keeps_the_rest() -> None:
    schema = SeedSchema.model_validate(
        {
            "name": "reviews",
            "fields": {
                "type": {"type": "choice", "values": ["review"], "required": True},
                "rating": {"type": "integer", "min": 1, "max": 5, "required": True},
                "verified": {"type": "boolean", "default": False},
            },
        }
    )
    seed = parse_seed(
        "---\nid: r1\ntype: review\nrating: 4\nlisting: Beach House\n---\nNice.\n", "r1.md", schema=schema
    )
    assert (seed.type, seed.extra["rating"], seed.extra["verified"], seed.extra["listing"]) == (
        "review",
        4,
        False,
        "Beach House",
    )
    tagged = parse_seed("---\nid: r2\ntype: review\nrating: 5\ntags: quiet, clean\n---\n", "r2.md", schema=schema)
    assert tagged.tags == ("quiet", "clean")  # tags are tags even where the schema does not list them
    with pytest.raises(SuiteError) as caught:
        parse_seed("---\nid: r1\ntype: review\nrating: 9\n---\n", "r1.md", schema=schema)
    assert str(caught.value) == "r1.md:4: rating: must be in 1..5, got 9 (reviews seed schema)"


def test_a_declared_schema_with_a_mistake_is_refused() -> None:
    with pytest.raises(ValueError, match="needs 'values'"):
        SeedSchema.model_validate({"fields": {"kind": {"type": "choice"}}})
    with pytest.raises(ValueError, match="default"):
        SeedSchema.model_validate({"fields": {"n": {"type": "integer", "min": 0, "default": -1}}})
    assert SPECTOR_SEED_SCHEMA.fields["valence"].default == 0


CASES = "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: {text: hi}}]\n"


def _suite(tmp_path: Path, schema_yaml: str) -> Path:
    memories = tmp_path / "memories"
    memories.mkdir()
    (memories / "db-001.md").write_text(DB_001, encoding="utf-8")
    (memories / "db-002.md").write_text(DB_001.replace("db-001", "db-002").replace("SEMANTIC", "SEMANTICAL"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"name: memories\nagent: {{python: 'toy_agent:make_agent'}}\nseeds: memories/\n{schema_yaml}{CASES}",
        encoding="utf-8",
    )
    return suite


def test_a_suite_declares_the_seeds_schema_and_bogus_types_are_reported(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(_suite(tmp_path, "seed_schema: spector\n"), check_agent=False)
    (problem,) = caught.value.problems
    assert (Path(problem.file).name, problem.line, problem.field) == ("db-002.md", 3, "type")
    # Under auto, db-002's type is not a Spector type: jurybox's rules read it and refuse the seed's scale.
    (tmp_path / "suite.yaml").unlink()
    for file in (tmp_path / "memories").iterdir():
        file.unlink()
    (tmp_path / "memories").rmdir()
    with pytest.raises(SuiteError) as caught:
        load_suite(_suite(tmp_path, ""), check_agent=False)
    (problem,) = caught.value.problems
    assert (Path(problem.file).name, problem.line, problem.field) == ("db-002.md", 5, "valence")
    assert "seed_schema: spector" in problem.message


def test_a_suites_own_seed_schema_is_checked_with_its_line(tmp_path: Path) -> None:
    declared = "seed_schema:\n  fields:\n    valence: {type: integer, min: 0, max: 3}\n"
    with pytest.raises(SuiteError) as caught:
        load_suite(_suite(tmp_path, declared), check_agent=False)
    assert len(caught.value.problems) == 2
    assert all(p.field == "valence" and "must be in 0..3" in p.message for p in caught.value.problems)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: m\nagent: {python: 'toy_agent:make_agent'}\nseeds: memories/\n"
        "seed_schema:\n  fields:\n    kind: {type: choice}\n" + CASES,
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(bad, check_agent=False)
    (problem,) = caught.value.problems
    assert problem.line == 6 and problem.field.startswith("seed_schema.fields.kind") and "values" in problem.message
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(
        bad.read_text().replace("seed_schema:\n  fields:\n    kind: {type: choice}\n", "seed_schema: nope\n")
    )
    with pytest.raises(SuiteError, match=r"unknown\.yaml:4: seed_schema: unknown seed schema 'nope'"):
        load_suite(unknown, check_agent=False)


def test_a_folder_of_spector_memories_loads_in_one_call(tmp_path: Path) -> None:
    for index, kind in enumerate(("EPISODIC", "SEMANTIC", "PROCEDURAL", "PROSPECTIVE")):
        (tmp_path / f"m{index}.md").write_text(f"---\nid: m{index}\ntype: {kind}\ntags: a, b\n---\nbody {index}\n")
    seeds = load_seeds(tmp_path, schema="spector")
    assert [s.type for s in seeds] == ["EPISODIC", "SEMANTIC", "PROCEDURAL", "PROSPECTIVE"]
    assert all(s.valence == 0 and s.source == "OBSERVED" and s.tags == ("a", "b") for s in seeds)
