"""The zero-dependency judging core: records, verdicts, the judge contract, juries and cascades.

Everything here uses the standard library only, so a plain script, a notebook
or a test can build a Context and call a judge without installing anything.
"""

from jurybox.core._cascade import Cascade, Tier, TierPolicy
from jurybox.core._context import Context, Message, ToolCall, contexts_from_jsonl
from jurybox.core._judge import Judge, aevaluate, evaluate, judge, judge_name
from jurybox.core._judgment import Check, ErrorInfo, Judgment, Status
from jurybox.core._jury import Jury
from jurybox.core._scores import BooleanScore, CategoricalScore, NumericScore, Score, normalize
from jurybox.core._voting import AtLeast, Average, Consensus, Majority, Median, Vote, Voting, Weighted

__all__ = [
    "AtLeast",
    "Average",
    "BooleanScore",
    "Cascade",
    "CategoricalScore",
    "Check",
    "Consensus",
    "Context",
    "ErrorInfo",
    "Judge",
    "Judgment",
    "Jury",
    "Majority",
    "Median",
    "Message",
    "NumericScore",
    "Score",
    "Status",
    "Tier",
    "TierPolicy",
    "ToolCall",
    "Vote",
    "Voting",
    "Weighted",
    "aevaluate",
    "contexts_from_jsonl",
    "evaluate",
    "judge",
    "judge_name",
    "normalize",
]
