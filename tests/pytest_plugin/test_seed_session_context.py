"""Seed 000's shared test context: embed and ingest every memory once per session, only when a test needs it.

The conftest below is the pattern docs/seeds.md documents, run in fresh pytest sessions.
"""

from __future__ import annotations

import hypothesis
import openai
import pytest
import vcr

import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.suites
import jurybox.testing

# In-process pytester runs drop modules first imported inside them; importing these here keeps
# one copy of each and keeps each run fast (as tests/pytest_plugin/test_plugin_behaviour.py does).
PRELOADED = (hypothesis, openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.suites, jurybox.testing)

pytest_plugins = ["pytester"]

CONFTEST = '''
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from jurybox.suites import load_seeds

BUILDS = Path(__file__).parent / "builds.log"


def embed(text):
    """A stand-in for the seed's embedding model: word counts, L2-normalised."""
    counts = Counter(re.findall(r"[a-z0-9]+", text.lower()))
    norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return {word: value / norm for word, value in counts.items()}


class MemoryContext:
    """Every memory, embedded once; search ranks them by cosine similarity."""

    def __init__(self, folder):
        with BUILDS.open("a") as log:  # the test below counts the builds
            log.write("built\\n")
        self.memories = load_seeds(folder, schema="spector")
        self.vectors = {m.id: embed(" ".join([m.body, *m.tags])) for m in self.memories}

    def search(self, query, k=3):
        q = embed(query)
        score = {mid: sum(q.get(w, 0.0) * v for w, v in vec.items()) for mid, vec in self.vectors.items()}
        return sorted(self.memories, key=lambda m: -score[m.id])[:k]


@pytest.fixture(scope="session")
def memory_context():
    # Session scope: built when the first test asks for it, then shared by every test of the run.
    return MemoryContext(Path(__file__).parent / "memories")
'''

TESTS = """
from jurybox.testing import expect


def test_recall_database(memory_context):
    top = memory_context.search("postgresql connection pool")
    assert top[0].id == "db-001"


def test_recall_deploys(memory_context):
    top = memory_context.search("how do we deploy on fridays")
    assert top[0].id == "ops-001"
    assert [m.valence for m in memory_context.memories] == [5, -8]


def test_not_using_it():
    expect("the cat sat").is_similar_to("the cat sat")
"""

MEMORIES = {
    "db-001.md": "---\nid: db-001\ntype: SEMANTIC\ntags: database, postgresql, connection-pool\nvalence: 5\n---\n"
    "Each service keeps a PostgreSQL connection pool behind PgBouncer.\n",
    "ops-001.md": "---\nid: ops-001\ntype: EPISODIC\ntags: deploy, friday\nvalence: -8\nsource: REFLECTED\n---\n"
    "We stopped deploys on Fridays after the outage.\n",
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_memories=TESTS)
    folder = pytester.path / "memories"
    folder.mkdir()
    for name, text in MEMORIES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return pytester


def test_the_context_is_built_once_for_the_whole_session(project: pytest.Pytester) -> None:
    project.runpytest_inprocess().assert_outcomes(passed=3)
    assert (project.path / "builds.log").read_text().splitlines() == ["built"]


def test_the_context_is_not_built_when_no_test_needs_it(project: pytest.Pytester) -> None:
    project.runpytest_inprocess("-k", "not_using_it").assert_outcomes(passed=1, deselected=2)
    assert not (project.path / "builds.log").exists()
