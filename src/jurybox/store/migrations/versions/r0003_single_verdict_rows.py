"""Judgment rows of a single-round case's one verdict, stored once instead of twice.

Stores written before kept a single-round case's verdict tree twice in ``judgments``:
as the case's (``round_index`` NULL) and again as its round's, so every query over
judgments counted such a case twice (``Store.run_metrics`` tier counts, the failing
cases of a tier, listed as ``name`` and ``name (round 0)``). This deletes the round
copies: rows of a round whose stored verdict is the same JSON as its case's.

Revision ID: 0003_single_verdict_rows
Revises: 0002_lessons
Create Date: 2026-11-21
"""

from __future__ import annotations

from alembic import op

revision: str = "0003_single_verdict_rows"
down_revision: str | None = "0002_lessons"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # The texts are compared: one writer encoded both from one object, and JSONB compares equal values equal.
    op.execute(
        """
        DELETE FROM judgments
        WHERE round_index IS NOT NULL
          AND EXISTS (
            SELECT 1
            FROM results r
            JOIN round_results rr ON rr.result_id = r.id
            WHERE r.id = judgments.result_id
              AND rr.round_index = judgments.round_index
              AND CAST(rr.judgment AS TEXT) = CAST(r.judgment AS TEXT)
          )
        """
    )


def downgrade() -> None:
    # Nothing to put back for 0002: the deleted rows were copies, and a 0002 store reads fine without them.
    pass
