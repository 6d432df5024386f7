"""The git facts a run records: commit, branch, dirty flag; none (and no failure) where git cannot tell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from git_repo import commit_all, git
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.runs import GitInfo, git_info
from jurybox.runs._git import parse_status

SHA = st.text("0123456789abcdef", min_size=40, max_size=40)
BRANCH = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=60)
CHANGE = st.sampled_from(
    [
        "1 .M N... 100644 100644 100644 0123 4567 suite.yaml",
        "1 M. N... 100644 100644 100644 0123 4567 agent.py",
        "2 R. N... 100644 100644 100644 0123 4567 R100 new.yaml\told.yaml",
        "u UU N... 100644 100644 100644 100644 0123 4567 89ab both.yaml",
    ]
)


def test_a_clean_checkout_names_its_commit_and_branch(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("name: s\n", encoding="utf-8")
    commit = commit_all(tmp_path, branch="release/1.2")

    assert git_info(tmp_path) == GitInfo(commit, "release/1.2", dirty=False)
    # A suite in a subfolder of the checkout has the checkout's facts.
    (tmp_path / "suites").mkdir()
    assert git_info(tmp_path / "suites") == GitInfo(commit, "release/1.2", dirty=False)


def test_changed_tracked_files_make_it_dirty_untracked_ones_do_not(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("name: s\n", encoding="utf-8")
    commit = commit_all(tmp_path)
    (tmp_path / "notes.txt").write_text("not tracked", encoding="utf-8")
    assert git_info(tmp_path) == GitInfo(commit, "trunk", dirty=False)

    (tmp_path / "suite.yaml").write_text("name: changed\n", encoding="utf-8")
    info = git_info(tmp_path)
    assert info == GitInfo(commit, "trunk", dirty=True)
    assert info.run_config() == {"git_branch": "trunk", "git_dirty": True}


def test_a_detached_head_has_no_branch(tmp_path: Path) -> None:
    commit = commit_all(tmp_path)
    git(tmp_path, "checkout", "-q", "--detach")

    info = git_info(tmp_path)
    assert info == GitInfo(commit, None, dirty=False)
    assert info.run_config() == {"git_dirty": False}


def test_no_repository_no_commit_no_git_and_no_folder_give_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_info(plain) is None
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert git_info(fresh) is None  # no commit yet: nothing to record
    assert git_info(tmp_path / "missing") is None
    repo = tmp_path / "repo"
    repo.mkdir()
    commit_all(repo)
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    assert git_info(repo) is None


def test_a_status_that_takes_too_long_still_gives_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = commit_all(tmp_path)
    monkeypatch.setattr("jurybox.runs._git._STATUS", [sys.executable, "-c", "import time; time.sleep(30)"])
    monkeypatch.setattr("jurybox.runs._git.GIT_SECONDS", 1.0)

    info = git_info(tmp_path)
    assert info == GitInfo(commit, None, dirty=None)
    assert info.run_config() == {}


@st.composite
def statuses(draw: st.DrawFn) -> tuple[str, GitInfo | None]:
    """A ``git status --porcelain=v2 --branch`` output in any order, with what it says."""
    commit = draw(st.one_of(SHA, st.just("(initial)")))
    head = draw(st.one_of(BRANCH, st.just("(detached)")))
    changes = draw(st.lists(CHANGE, max_size=4))
    lines = [f"# branch.oid {commit}", f"# branch.head {head}"]
    if draw(st.booleans()):
        lines += ["# branch.upstream origin/main", "# branch.ab +1 -0"]
    lines += changes
    ordered = lines[:2] + draw(st.permutations(lines[2:]))
    expected = None
    if commit != "(initial)":
        branch = None if head == "(detached)" else head.strip() or None
        expected = GitInfo(commit, branch, dirty=bool(changes))
    return "\n".join(ordered) + "\n", expected


@settings(max_examples=200, deadline=None)
@given(statuses())
def test_every_status_output_reads_as_what_it_says(case: tuple[str, GitInfo | None]) -> None:
    text, expected = case
    assert parse_status(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_output_reads_without_failing_and_never_invents_a_commit(text: str) -> None:
    info = parse_status(text)
    if info is not None:
        assert f"# branch.oid {info.commit}" in text
        assert len(info.commit) in (40, 64) and set(info.commit) <= set("0123456789abcdef")
