"""The review queue's filters as a query string, carried from the queue to a case page and back ("review next").

The filters travel in the URL (``/reviews?status=fail&tier=llm_judge``), in the
case page's ``queue`` parameter and in the review form's ``queue`` field. Each
time they are read back they are parsed with a size cap and only the known keys
are kept, rebuilt from checked values: a hostile ``queue`` value can neither add
a parameter nor send the reviewer anywhere but ``/reviews/next``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from jurybox.core import TIERS
from jurybox.store import QueueFilter

STATUSES = ("fail", "error", "abstain", "pass")
REVIEWED = ("no", "yes", "any")
MAX_VALUE = 512
_SEED = re.compile(r"^\d{1,9}$")


@dataclass(frozen=True)
class QueueView:
    """The queue a reviewer is looking at: its filter, order and sample seed."""

    filter: QueueFilter
    order: str = "attention"
    seed: int = 0

    def query(self, **changes: object) -> str:
        """This view as a query string (without ``?``), with ``changes`` applied; empty values left out."""
        chosen = self.filter
        params: dict[str, object] = {
            "suite": chosen.suite,
            "run": chosen.run_id,
            "judge": chosen.judge,
            "status": chosen.status,
            "tier": chosen.tier,
            "reviewed": None if chosen.reviewed == "no" else chosen.reviewed,
            "passes": "1" if chosen.cheap_passes else None,
            "repeats": "1" if chosen.repeats else None,
            "order": None if self.order == "attention" else self.order,
            "seed": self.seed or None,
        }
        params.update(changes)
        return urlencode({key: value for key, value in params.items() if value not in (None, "")})


def view_from(pairs: dict[str, str]) -> QueueView:
    """A queue view from query parameters (unknown keys ignored, bad values dropped)."""

    def text(key: str) -> str | None:
        value = pairs.get(key, "")
        return value if value and len(value) <= MAX_VALUE else None

    def one_of(key: str, allowed: tuple[str, ...]) -> str | None:
        value = pairs.get(key, "")
        return value if value in allowed else None

    reviewed = one_of("reviewed", REVIEWED) or "no"
    chosen = QueueFilter(
        suite=text("suite"),
        run_id=text("run"),
        judge=text("judge"),
        status=one_of("status", STATUSES),
        tier=one_of("tier", TIERS),
        reviewed=reviewed,  # type: ignore[arg-type]  # one of REVIEWED
        cheap_passes=pairs.get("passes") == "1",
        repeats=pairs.get("repeats") == "1",
    )
    seed = pairs.get("seed", "")
    return QueueView(
        chosen, "sample" if pairs.get("order") == "sample" else "attention", int(seed) if _SEED.match(seed) else 0
    )


def view_from_query(text: str) -> QueueView:
    """A queue view from a raw query string (the ``queue`` field of a review form)."""
    try:
        pairs = parse_qsl(text[:4096], keep_blank_values=False, max_num_fields=20)
    except ValueError:
        pairs = []
    return view_from(dict(pairs))
