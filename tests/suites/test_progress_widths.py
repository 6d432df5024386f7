"""The live progress bar of ``jurybox run`` at 80, 120 and 200 columns: its counts are never cut."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from jurybox._cli.progress import RichProgress
from jurybox.core import CaseRecord, Judgment
from jurybox.models import Spend


def last_frame(width: int) -> str:
    output = io.StringIO()
    progress = RichProgress(Console(file=output, force_terminal=True, width=width, color_system=None))
    progress.start("a-suite-with-a-name-longer-than-the-room-a-bar-leaves-it", 1234, 0)
    verdicts = [Judgment.passed(reasoning="ok"), Judgment.failed(reasoning="no"), Judgment.abstained("?")]
    for index, verdict in enumerate(verdicts):
        progress.case_done(CaseRecord(f"case-{index}", verdict), Spend(calls=2, tokens=1500, cost=0.0021))
    progress.stop()
    # The last redraw: after the final carriage return, without the cursor and line-clearing codes.
    frame = output.getvalue().split("\r")[-1]
    return frame.replace("\x1b[2K", "").replace("\x1b[?25h", "").strip()


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_counts_are_whole_at_every_width(width: int) -> None:
    frame = last_frame(width)
    assert len(frame) <= width
    assert "3/1234" in frame and "1 pass 1 fail 0 error 1 abstain" in frame
    assert "…" not in frame.split("3/1234")[1]  # nothing after the name is cut


def test_a_wide_terminal_also_shows_the_judge_spend() -> None:
    assert "judge calls 2 1500 tok $0.0021" in last_frame(200)
    assert "judge" not in last_frame(80)  # the run's last line gives the spend
