"""Reports of a run: console table, JSON, JUnit XML, Markdown job summary and one self-contained HTML page.

Build a ``RunReport`` from a run's ``CaseRecord``s; every renderer reads the
same derived totals, so the formats never disagree.
"""

from jurybox.core import SKIPPED_TIERS_KEY, RunStatus
from jurybox.report._calibrations import CALIBRATION_STATUSES, CalibratedJudge, CalibrationStatus
from jurybox.report._case import CaseSummary, explain, skipped_tiers, summarize_case, tier_verdicts
from jurybox.report._console import render_console
from jurybox.report._console_case import terminal_safe
from jurybox.report._format import cost_gaps, cost_text, judge_calls_text, judgment_score
from jurybox.report._formats import ReportFormat, register_report_format, report_formats
from jurybox.report._from_store import CALIBRATIONS_KEY, report_from_store, stored_calibrations
from jurybox.report._html import iter_html, to_html
from jurybox.report._json import SCHEMA_VERSION, from_json, iter_json, record_to_dict, to_json
from jurybox.report._junit import case_properties, iter_junit, to_junit
from jurybox.report._markdown import MAX_SUMMARY_BYTES, to_markdown
from jurybox.report._model import RunReport, SkippedTier, TierRate, Totals
from jurybox.report._write import EXTENSIONS, FORMATS, check_report_output, report_filename, write_reports

__all__ = [
    "CALIBRATIONS_KEY",
    "CALIBRATION_STATUSES",
    "EXTENSIONS",
    "FORMATS",
    "MAX_SUMMARY_BYTES",
    "SCHEMA_VERSION",
    "SKIPPED_TIERS_KEY",
    "CalibratedJudge",
    "CalibrationStatus",
    "CaseSummary",
    "ReportFormat",
    "RunReport",
    "RunStatus",
    "SkippedTier",
    "TierRate",
    "Totals",
    "case_properties",
    "check_report_output",
    "cost_gaps",
    "cost_text",
    "explain",
    "from_json",
    "iter_html",
    "iter_json",
    "iter_junit",
    "judge_calls_text",
    "judgment_score",
    "record_to_dict",
    "register_report_format",
    "render_console",
    "report_filename",
    "report_formats",
    "report_from_store",
    "skipped_tiers",
    "stored_calibrations",
    "summarize_case",
    "terminal_safe",
    "tier_verdicts",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "write_reports",
]
