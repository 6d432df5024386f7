"""The zero-dependency judging core: records, verdicts, the judge contract, juries and cascades.

Everything here uses the standard library only, so a plain script, a notebook
or a test can build a Context and call a judge without installing anything.
"""

from jurybox.core._bounded import (
    MAX_TOML_BYTES,
    InputLimitError,
    json_limit_breach,
    read_json,
    read_toml,
    read_toml_file,
)
from jurybox.core._cascade import Cascade, Tier, TierPolicy
from jurybox.core._context import (
    Context,
    LessonNote,
    Message,
    ToolCall,
    contexts_from_jsonl,
    freeze_mapping,
    iter_contexts_jsonl,
)
from jurybox.core._jsonable import to_jsonable
from jurybox.core._judge import Judge, aevaluate, evaluate, judge, judge_name
from jurybox.core._judgment import Check, ErrorInfo, Judgment, Status
from jurybox.core._jury import Jury
from jurybox.core._limits import (
    MAX_ALIAS_GROWTH,
    MAX_EXPANDED_NODES,
    MAX_INPUT_BYTES,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
)
from jurybox.core._named import NamedJudge, named
from jurybox.core._reasons import MAX_REASON_CHARS, error_reason, network_cause, network_hint, printable_url
from jurybox.core._records import LESSONS_KEY, RUN_STATUSES, SKIPPED_TIERS_KEY, CaseRecord, RoundRecord, RunStatus
from jurybox.core._registry import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_LLM_OPERATIONS,
    TIER_SIMILARITY,
    TIERS,
    JudgeFactory,
    JudgeOption,
    JudgeRegistry,
    judge_factory,
    tier_of,
)
from jurybox.core._scores import BooleanScore, CategoricalScore, NumericScore, Score, normalize
from jurybox.core._sync import run_sync
from jurybox.core._threads import DaemonThreadPool
from jurybox.core._voting import AtLeast, Average, Consensus, Majority, Median, Vote, Voting, Weighted, vote_value

__all__ = [
    "LESSONS_KEY",
    "MAX_ALIAS_GROWTH",
    "MAX_EXPANDED_NODES",
    "MAX_INPUT_BYTES",
    "MAX_INPUT_DEPTH",
    "MAX_INPUT_NODES",
    "MAX_REASON_CHARS",
    "MAX_TOML_BYTES",
    "RUN_STATUSES",
    "SKIPPED_TIERS_KEY",
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_LLM_OPERATIONS",
    "TIER_SIMILARITY",
    "AtLeast",
    "Average",
    "BooleanScore",
    "Cascade",
    "CaseRecord",
    "CategoricalScore",
    "Check",
    "Consensus",
    "Context",
    "DaemonThreadPool",
    "ErrorInfo",
    "InputLimitError",
    "Judge",
    "JudgeFactory",
    "JudgeOption",
    "JudgeRegistry",
    "Judgment",
    "Jury",
    "LessonNote",
    "Majority",
    "Median",
    "Message",
    "NamedJudge",
    "NumericScore",
    "RoundRecord",
    "RunStatus",
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
    "error_reason",
    "evaluate",
    "freeze_mapping",
    "iter_contexts_jsonl",
    "json_limit_breach",
    "judge",
    "judge_factory",
    "judge_name",
    "named",
    "network_cause",
    "network_hint",
    "normalize",
    "printable_url",
    "read_json",
    "read_toml",
    "read_toml_file",
    "run_sync",
    "tier_of",
    "to_jsonable",
    "vote_value",
]
