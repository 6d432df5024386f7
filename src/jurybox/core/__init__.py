"""The zero-dependency judging core: records, verdicts, the judge contract, juries and cascades.

Everything here uses the standard library only, so a plain script, a notebook
or a test can build a Context and call a judge without installing anything.
"""

from jurybox.core._bounded import (
    MAX_TOML_BYTES,
    InputLimitError,
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
    iter_contexts_jsonl,
    structured_fields,
)
from jurybox.core._deciding import PASS_MARK_KEY, REPLY_SHOWN, deciding_judgment, pass_mark, undecided_reply
from jurybox.core._extras import ExtraMissingError, extra_hint, require
from jurybox.core._jsonable import to_jsonable
from jurybox.core._judge import Judge, aevaluate, evaluate, judge, judge_name
from jurybox.core._judgment import Check, ErrorInfo, Judgment, Status
from jurybox.core._jury import ERROR_POLICIES, Jury
from jurybox.core._limits import (
    MAX_ALIAS_GROWTH,
    MAX_EXPANDED_NODES,
    MAX_INPUT_BYTES,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
)
from jurybox.core._metadata_keys import MetadataKey
from jurybox.core._named import NamedJudge, named
from jurybox.core._plugins import (
    ENTRY_POINT_GROUP,
    KIND_AGENT,
    KIND_EXECUTOR,
    KIND_EXPORTER,
    KIND_JUDGE,
    KIND_PROVIDER,
    KIND_REPORT,
    KIND_WORDS,
    PLUGIN_KINDS,
    Plugin,
    PluginError,
    PluginRegistry,
    PluginUnavailableError,
    UnknownPluginError,
    plugin_registrar,
)
from jurybox.core._reasons import MAX_REASON_CHARS, error_reason, network_cause, network_hint, printable_url
from jurybox.core._records import (
    LESSONS_KEY,
    RUN_STATUSES,
    SKIPPED_TIERS_KEY,
    UNPRICED_KEY,
    CaseRecord,
    PlannedCases,
    RoundRecord,
    RunDetails,
    RunStatus,
)
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
from jurybox.core._voting import AtLeast, Average, Consensus, Majority, Median, Vote, Voting, Weighted, vote_value

__all__ = [
    "ENTRY_POINT_GROUP",
    "ERROR_POLICIES",
    "KIND_AGENT",
    "KIND_EXECUTOR",
    "KIND_EXPORTER",
    "KIND_JUDGE",
    "KIND_PROVIDER",
    "KIND_REPORT",
    "KIND_WORDS",
    "LESSONS_KEY",
    "MAX_ALIAS_GROWTH",
    "MAX_EXPANDED_NODES",
    "MAX_INPUT_BYTES",
    "MAX_INPUT_DEPTH",
    "MAX_INPUT_NODES",
    "MAX_REASON_CHARS",
    "MAX_TOML_BYTES",
    "PASS_MARK_KEY",
    "PLUGIN_KINDS",
    "REPLY_SHOWN",
    "RUN_STATUSES",
    "SKIPPED_TIERS_KEY",
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_LLM_OPERATIONS",
    "TIER_SIMILARITY",
    "UNPRICED_KEY",
    "AtLeast",
    "Average",
    "BooleanScore",
    "Cascade",
    "CaseRecord",
    "CategoricalScore",
    "Check",
    "Consensus",
    "Context",
    "ErrorInfo",
    "ExtraMissingError",
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
    "MetadataKey",
    "NamedJudge",
    "NumericScore",
    "PlannedCases",
    "Plugin",
    "PluginError",
    "PluginRegistry",
    "PluginUnavailableError",
    "RoundRecord",
    "RunDetails",
    "RunStatus",
    "Score",
    "Status",
    "Tier",
    "TierPolicy",
    "ToolCall",
    "UnknownPluginError",
    "Vote",
    "Voting",
    "Weighted",
    "aevaluate",
    "contexts_from_jsonl",
    "deciding_judgment",
    "error_reason",
    "evaluate",
    "extra_hint",
    "iter_contexts_jsonl",
    "judge",
    "judge_factory",
    "judge_name",
    "named",
    "network_cause",
    "network_hint",
    "normalize",
    "pass_mark",
    "plugin_registrar",
    "printable_url",
    "read_json",
    "read_toml",
    "read_toml_file",
    "require",
    "run_sync",
    "structured_fields",
    "tier_of",
    "to_jsonable",
    "undecided_reply",
    "vote_value",
]

# Internal wiring other jurybox packages share, deliberately left out of ``__all__``: not
# part of the public API, so it may change without notice (the "as" form re-exports it).
from jurybox.core._bounded import json_limit_breach as json_limit_breach
from jurybox.core._context import freeze_mapping as freeze_mapping
from jurybox.core._environ import environment as environment
from jurybox.core._gc import freeze_for_life as freeze_for_life
from jurybox.core._gc import frozen_heap as frozen_heap
from jurybox.core._gc import paused_collector as paused_collector
from jurybox.core._json_text import compact_encoder as compact_encoder
from jurybox.core._threads import DaemonThreadPool as DaemonThreadPool
