"""Deterministic judges: free, repeatable checks that run before any LLM judge.

Each name is a factory that returns a judge (a callable ``Context -> Judgment``
with a ``name``). Bad options raise when the judge is built, not when it runs.
"""

from jurybox.judges._base import DeterministicJudge
from jurybox.judges._budget import max_cost, max_latency
from jurybox.judges._build import build
from jurybox.judges._command import command
from jurybox.judges._coverage import CoverageReport, CoverageReportError, FileCoverage, code_coverage, read_coverage
from jurybox.judges._database import SqlDatabases, SqlQueryError
from jurybox.judges._files import file_contains, file_exists
from jurybox.judges._json import json_schema, valid_json
from jurybox.judges._python import same_python
from jurybox.judges._test_summaries import TestSummary, read_summary
from jurybox.judges._text import DEFAULT_SIMILARITY, contains, equals, matches, similar, starts_with
from jurybox.judges._tool_calls import ArgumentMode, MatchMode, argument_differences, tool_calls

__all__ = [
    "DEFAULT_SIMILARITY",
    "ArgumentMode",
    "CoverageReport",
    "CoverageReportError",
    "DeterministicJudge",
    "FileCoverage",
    "MatchMode",
    "SqlDatabases",
    "SqlQueryError",
    "TestSummary",
    "argument_differences",
    "build",
    "code_coverage",
    "command",
    "contains",
    "equals",
    "file_contains",
    "file_exists",
    "json_schema",
    "matches",
    "max_cost",
    "max_latency",
    "read_coverage",
    "read_summary",
    "same_python",
    "similar",
    "starts_with",
    "tool_calls",
    "valid_json",
]
