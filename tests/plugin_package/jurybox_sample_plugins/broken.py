"""A plug-in module that fails when imported, as a broken install does."""

from __future__ import annotations

raise RuntimeError("this sample plug-in is broken on purpose")
