"""Where the calibration tests find their data: committed copies, and ../shared/realdata when it is there."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
ROOT = HERE.parents[1]
# CI has the shared folder beside the clone; the development machine has it at /work/shared.
SHARED = next((p for p in (ROOT.parent / "shared" / "realdata", Path("/work/shared/realdata")) if p.is_dir()), None)
