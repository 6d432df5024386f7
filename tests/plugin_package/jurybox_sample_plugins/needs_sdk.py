"""An adapter module that needs an SDK this machine does not have (for the install hint)."""

from __future__ import annotations

import jurybox_sample_absent_sdk  # noqa: F401  # not installed anywhere: importing this module fails

ADAPTER = None
