"""``named(judge, name=..., **metadata)`` (seed 004's metadata by composition) and the stdlib-only core."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jurybox
from jurybox.core import Cascade, Context, Judgment, Jury, Status, Tier, evaluate, judge, named


@judge
def short(ctx: Context) -> bool:
    return len(ctx.output) <= 40


@judge
def polite(ctx: Context) -> bool:
    return "please" in ctx.output.lower() or "thanks" in ctx.output.lower()


def test_the_name_and_metadata_reach_the_judgment() -> None:
    brevity = named(short, name="brevity", owner="support-team", version=2)
    verdict = evaluate(brevity, Context(output="Thanks, done."))
    assert (verdict.status, verdict.judge) == (Status.PASS, "brevity")
    assert dict(verdict.metadata) == {"owner": "support-team", "version": 2}
    assert jurybox.named is named


def test_the_wrapped_judgments_own_metadata_is_kept_and_labels_win() -> None:
    def counted(ctx: Context) -> Judgment:
        return Judgment(Status.FAIL, reasoning="too long", metadata={"tokens": 12, "owner": "judge"})

    verdict = evaluate(named(counted, name="length", owner="docs"), Context(output="x"))
    assert (verdict.status, verdict.reasoning) == (Status.FAIL, "too long")
    assert dict(verdict.metadata) == {"tokens": 12, "owner": "docs"}


def test_seed_004_cascade_of_named_judges() -> None:
    # Seed 004's cascade: cheap checks reject early, the final tier votes; every judge labelled.
    cascade = Cascade(
        Tier.reject_on_any_fail(named(short, name="brevity", cost="free"), name="cheap"),
        Tier.final(Jury(named(polite, name="politeness", rubric="says please or thanks")), name="final"),
    )
    passed = evaluate(cascade, Context(output="Thanks, your refund is on its way."))
    assert (passed.status, passed.decided_by) == (Status.PASS, "final")
    cheap = passed.children["cheap"].children["brevity"]
    assert (cheap.judge, cheap.metadata["cost"]) == ("brevity", "free")
    politeness = next(j for path, j in passed.walk() if path.endswith("politeness"))
    assert politeness.metadata["rubric"] == "says please or thanks"
    rejected = evaluate(cascade, Context(output="Your refund has been approved and will reach your card in 5 days."))
    assert (rejected.status, rejected.decided_by, rejected.metadata["skipped"]) == (Status.FAIL, "cheap", ["final"])


def test_wrapping_keeps_what_runners_read_off_a_judge() -> None:
    wrapped = named(short, name="brevity")
    assert wrapped.threshold == short.threshold and wrapped.blocking is short.blocking
    assert "brevity" in repr(wrapped)
    with pytest.raises(ValueError, match="non-empty name"):
        named(short, name=" ")
    with pytest.raises(TypeError, match="wraps a judge"):
        named("not a judge", name="x")


def test_an_erroring_judge_stays_an_error_under_its_new_name() -> None:
    def broken(ctx: Context) -> Judgment:
        raise RuntimeError("boom")

    verdict = evaluate(named(broken, name="fragile", owner="me"), Context(output="x"))
    assert (verdict.status, verdict.judge, verdict.metadata["owner"]) == (Status.ERROR, "fragile", "me")


def test_jurybox_core_runs_on_the_standard_library_alone() -> None:
    """The light install: with only the stdlib and jurybox's own files, ``jurybox.core`` works.

    ``-I -S``: no site-packages, no user site, no PYTHONPATH. The script proves the isolation
    is real (pydantic cannot be imported) and that nothing outside the stdlib was loaded.
    """
    src = Path(jurybox.__file__).resolve().parents[1]
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(src)!r})
        try:
            import pydantic
        except ImportError:
            pass
        else:
            raise SystemExit("site-packages leaked into the isolated interpreter")
        from jurybox import Context, evaluate, judge, named
        from jurybox.core import Cascade, Tier

        @judge
        def short(ctx):
            return len(ctx.output) < 20

        verdict = evaluate(Cascade(Tier.final(named(short, name="brevity", owner="me"))), Context(output="ok"))
        assert verdict.status.value == "pass", verdict
        outside = sorted(
            name for name in sys.modules
            if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] not in ("jurybox", "__main__")
        )
        assert not outside, outside
        print("stdlib only:", verdict.status.value)
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stdlib only: pass"
