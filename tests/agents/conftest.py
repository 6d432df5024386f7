"""Make the repository's ``examples`` package importable, as it is when jurybox runs from the checkout."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = str(Path(__file__).resolve().parents[2])
if REPO not in sys.path:
    sys.path.insert(0, REPO)
