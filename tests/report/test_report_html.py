"""HTML report: one self-contained file, every case expandable, untrusted text inert."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

from report_fixtures import SCRIPT

from jurybox.core import Judgment
from jurybox.report import RunReport, to_html
from jurybox.store import CaseRecord


class Outline(HTMLParser):
    """Collects what the tests look at: elements by tag, attributes, and the raw text of script/style."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._raw = tag

    def handle_endtag(self, tag: str) -> None:
        self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw == "script":
            self.scripts.append(data)
        elif self._raw == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def outline(page: str) -> Outline:
    parser = Outline()
    parser.feed(page)
    parser.close()
    return parser


def sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


def test_self_contained_no_external_urls(report: RunReport) -> None:
    page = to_html(report)
    parsed = outline(page)
    assert not re.search(r"(?i)\b(?:https?|ftp):|//[a-z0-9.-]+\.[a-z]{2,}/", page)
    assert "@import" not in page and "url(" not in page
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            assert name not in attrs, f"<{tag} {name}=...> would load something"
    assert parsed.all("link") == [] and parsed.all("img") == [] and parsed.all("iframe") == []


def test_only_the_reports_own_script_exists_and_csp_pins_it(report: RunReport) -> None:
    page = to_html(report)
    parsed = outline(page)
    assert len(parsed.all("script")) == 1
    assert len(parsed.all("style")) == 1
    csp = next(a["content"] for a in parsed.all("meta") if a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None
    assert "default-src 'none'" in csp
    assert f"script-src '{sha256(parsed.scripts[0])}'" in csp
    assert f"style-src '{sha256(parsed.styles[0])}'" in csp
    assert "unsafe-inline" not in csp
    assert not any("style" in attrs for _, attrs in parsed.tags), "inline style attributes would be blocked by the CSP"


def test_planted_script_is_escaped(report: RunReport) -> None:
    page = to_html(report)
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert SCRIPT in "".join(outline(page).text)  # shown to the reader as text
    assert "\x00" not in page and "\x1b" not in page
    assert "\\x1b[31mred\\x1b[0m" in page


def test_hostile_text_everywhere_is_escaped() -> None:
    attack = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    record = CaseRecord(
        attack,
        Judgment.failed(reasoning=attack, judge=attack, metadata={"raw_output": attack}),
        tags=(attack,),
        metadata={"note": attack},
    )
    page = to_html(RunReport(suite=attack, run_id=attack, records=[record], notes=[attack], judge_model=attack))
    parsed = outline(page)
    assert parsed.all("img") == []
    assert len(parsed.all("script")) == 1
    assert not any(name.startswith("on") for _, attrs in parsed.tags for name in attrs)


def test_one_expandable_case_per_record_with_status_for_filtering(report: RunReport) -> None:
    parsed = outline(to_html(report))
    cases = [a for a in parsed.all("details") if a.get("class") == "case"]
    assert len(cases) == 8
    assert [c["data-status"] for c in cases] == ["fail", "fail", "error", "abstain", "pass", "pass", "pass", "pass"]
    assert [c["data-degraded"] for c in cases].count("true") == 1
    filters = [a["data-filter"] for a in parsed.all("button") if "data-filter" in a]
    assert filters == ["all", "pass", "fail", "error", "abstain", "degraded"]
    assert any(a.get("id") == "search" for a in parsed.all("input"))


def test_case_body_has_tree_checks_rounds_and_follow_ups(report: RunReport) -> None:
    page = to_html(report)
    text = " ".join(" ".join(outline(page).text).split())
    assert "decided" in text
    assert "score 9 on 1..10 (0.89)" in text
    assert "confidence 0.86" in text
    assert "not found in output" in text  # a failed check's message
    assert "Round 2" in text and "agent asked" in text and "Which property do you mean?" in text
    assert "follow-up reply" in text and "The first one you listed, Beach House." in text
    assert "ConnectionResetError: [Errno 104] Connection reset by peer" in text
    assert "traceback" in text
    assert "get_listing_details" in text and '{"listing_id": 1}' in text
    assert "not needed: llm_judge" in text
    assert text.count("verdict: the case verdict above") == 2  # the two single-round cases


def test_totals_notes_and_unknown_cost(report: RunReport) -> None:
    text = " ".join(" ".join(outline(to_html(report)).text).split())
    assert "4 of 8 case(s) did not pass" in text
    assert "≥ $0.0019 (price unknown for 2 cases)" in text
    assert "no judge model configured; enable with --judge-model" in text
    assert "80.0%" in text
