"""Experiments: a suite's variants side by side, read from the store, with paired statistics.

``experiment_view(store, "last")`` reads an experiment's runs (one per variant)
and makes the one model every view renders: ``console_text`` (80 columns),
``markdown_text`` (a pull-request comment), ``view.to_dict()`` (JSON) and
``html_page`` (the matrix and, per case, the variants' replies and judgments
side by side). The statistics are ``jurybox.stats``'.
"""

from jurybox.experiments._html import html_page
from jurybox.experiments._outcomes import CaseOutcome, rule_status
from jurybox.experiments._read import experiment_view
from jurybox.experiments._text import console_text, markdown_text
from jurybox.experiments._view import Comparison, ExperimentView, VariantColumn, build_view

__all__ = [
    "CaseOutcome",
    "Comparison",
    "ExperimentView",
    "VariantColumn",
    "build_view",
    "console_text",
    "experiment_view",
    "html_page",
    "markdown_text",
    "rule_status",
]
