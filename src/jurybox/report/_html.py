"""The HTML report: one self-contained file to attach to a CI run or send to a colleague.

Everything is inline (CSS, a few lines of JS, no fonts, no images, no URLs), so
it opens from disk, from a CI artifact or from an e-mail. All text from the run
(agent output, judge reasoning, tool results) is HTML-escaped, and a
Content-Security-Policy pins the page to its own inline style and script by
hash, so even a missed escape could not run a script or load anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterator, Mapping
from typing import Any

from jurybox.core import Context, Judgment, Status, to_jsonable
from jurybox.report import _format as fmt
from jurybox.report._case import CaseSummary, own_verdict
from jurybox.report._formats import ReportFormat, register_report_format
from jurybox.report._model import RunReport

_CSS = """
:root{--bg:#fff;--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--card:#f6f8fa;
--pass:#1a7f37;--fail:#cf222e;--error:#8250df;--abstain:#9a6700;--degraded:#bc4c00;--skip:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--card:#161b22;
--pass:#3fb950;--fail:#f85149;--error:#a371f7;--abstain:#d29922;--degraded:#db6d28;--skip:#4493f8}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:1.5rem;background:var(--bg);color:var(--fg);
font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.meta{color:var(--muted);margin:0 0 1rem}.meta span+span:before{content:" · "}
.banner{padding:.6rem 1rem;border-radius:6px;font-weight:600;margin:1rem 0;border:1px solid var(--line)}
.banner.ok{border-color:var(--pass);color:var(--pass)}.banner.bad{border-color:var(--fail);color:var(--fail)}
.notes{border-left:4px solid var(--abstain);background:var(--card);padding:.5rem 1rem;margin:1rem 0}
.notes p{margin:.25rem 0}.notes .skip{color:var(--skip)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:.5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem}
.card b{display:block;font-size:1.25rem}.card small{color:var(--muted)}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid var(--line);padding:.25rem .6rem;text-align:left}
th{background:var(--card)}td.num{text-align:right}
.filters{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:1rem 0;position:sticky;top:0;
background:var(--bg);padding:.5rem 0;z-index:1}
.filters button{border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:999px;
padding:.2rem .8rem;cursor:pointer;font:inherit}
.filters button[aria-pressed=true]{border-color:var(--fg);font-weight:600}
.filters input{flex:1;min-width:12rem;padding:.3rem .6rem;border:1px solid var(--line);border-radius:6px;
background:var(--bg);color:var(--fg);font:inherit}
details.case{border:1px solid var(--line);border-left-width:5px;border-radius:6px;margin:.4rem 0;background:var(--bg)}
details.case[data-status=pass]{border-left-color:var(--pass)}details.case[data-status=fail]{border-left-color:var(--fail)}
details.case[data-status=error]{border-left-color:var(--error)}details.case[data-status=abstain]{border-left-color:var(--abstain)}
details.case>summary{cursor:pointer;padding:.5rem .75rem;display:grid;
grid-template-columns:6.5rem minmax(8rem,16rem) 3.5rem 1fr auto;gap:.75rem;align-items:baseline}
details.case>summary .reason{color:var(--muted);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.body{padding:0 1rem 1rem}
.badge{display:inline-block;border-radius:4px;padding:0 .4rem;font-size:.75rem;font-weight:700;color:#fff;
letter-spacing:.03em}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.error{background:var(--error)}
.badge.abstain{background:var(--abstain)}.badge.degraded{background:var(--degraded)}
.badge.skipped{background:transparent;color:var(--skip);border:1px dashed var(--skip)}
.badge.decided{background:transparent;color:var(--fg);border:1px solid var(--line)}
.tag{color:var(--muted);font-size:.8rem}
pre{white-space:pre-wrap;word-break:break-word;background:var(--card);border:1px solid var(--line);border-radius:6px;
padding:.5rem .75rem;margin:.25rem 0;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
max-height:28rem;overflow:auto}
ul.tree{list-style:none;padding-left:1.1rem;border-left:1px dashed var(--line);margin:.25rem 0}
ul.tree>li{margin:.35rem 0}.verdict-head{display:flex;flex-wrap:wrap;gap:.4rem;align-items:baseline}
.path{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:600}.muted{color:var(--muted)}
.reasoning{margin:.15rem 0;white-space:pre-wrap}
ul.checks{margin:.15rem 0;padding-left:1.2rem}.ok{color:var(--pass)}.no{color:var(--fail)}
.round{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
.exchange{border-left:3px solid var(--skip);padding-left:.6rem;margin:.4rem 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .75rem;margin:.25rem 0}dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0}meter{width:3rem}
.empty{color:var(--muted);font-style:italic}
footer{color:var(--muted);margin-top:2rem;font-size:.8rem}
"""

# Filters and search only toggle `hidden`; nothing is ever written as markup, so
# no text from the run can reach an HTML parser through this script.
_JS = """
(function(){
  var cases=[].slice.call(document.querySelectorAll('details.case'));
  var buttons=[].slice.call(document.querySelectorAll('.filters button[data-filter]'));
  var search=document.getElementById('search');
  var empty=document.getElementById('no-match');
  var current='all';
  function apply(){
    var q=(search.value||'').toLowerCase(), shown=0;
    cases.forEach(function(c){
      var byStatus=current==='all'||c.dataset.status===current||(current==='degraded'&&c.dataset.degraded==='true');
      var byText=!q||c.textContent.toLowerCase().indexOf(q)!==-1;
      c.hidden=!(byStatus&&byText); if(!c.hidden){shown++;}
    });
    empty.hidden=shown!==0;
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){
    current=b.dataset.filter;
    buttons.forEach(function(o){o.setAttribute('aria-pressed',String(o===b));});
    apply();
  });});
  search.addEventListener('input',apply);
  document.getElementById('expand').addEventListener('click',function(){cases.forEach(function(c){if(!c.hidden){c.open=true;}});});
  document.getElementById('collapse').addEventListener('click',function(){cases.forEach(function(c){c.open=false;});});
  apply();
})();
"""


def _sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


_CSP = (
    f"default-src 'none'; style-src '{_sha256(_CSS)}'; script-src '{_sha256(_JS)}'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'"
)


def e(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape(fmt.visible(str(value)), quote=True)


def to_html(report: RunReport) -> str:
    """The run as one self-contained HTML page (filter by status, search, expand a case)."""
    return "".join(iter_html(report))


def iter_html(report: RunReport) -> Iterator[str]:
    """``to_html`` in pieces, one per case, so a big run is written without holding its whole page."""
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(_CSP)}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>jurybox · {e(report.suite)} · {e(report.run_id)}</title>",
        f"<style>{_CSS}</style></head><body>",
        *_header(report),
        *_totals(report),
        *_filters(report),
        '<main id="cases">',
    ]
    yield "\n".join(head) + "\n"
    for case in report.failing_first():
        yield _case(case) + "\n"
    tail = [
        '<p id="no-match" class="empty" hidden>No case matches this filter.</p>',
        "</main>",
        f"<footer>jurybox report · run {e(report.run_id)}</footer>",
        f"<script>{_JS}</script>",
        "</body></html>",
    ]
    yield "\n".join(tail) + "\n"


def _header(report: RunReport) -> list[str]:
    totals = report.totals
    meta = [
        f"run <code>{e(report.run_id)}</code>",
        f"status {e(report.status)}",
        f"judge model {e(report.judge_model) if report.judge_model else '<em>none configured</em>'}",
        f"started {e(fmt.when(report.started_at))}",
        f"finished {e(fmt.when(report.finished_at))}",
    ]
    meta += [f"{e(key)} {e(value)}" for key, value in report.metadata.items()]
    if report.ok:
        banner = f'<div class="banner ok">All {totals.cases} case(s) passed</div>'
    elif report.status != "completed":
        banner = (
            f'<div class="banner bad">Run {e(report.status)}: '
            f"{totals.not_passed} of {totals.cases} finished case(s) did not pass</div>"
        )
    elif not report.records:
        banner = '<div class="banner bad">No case ran</div>'
    else:
        banner = f'<div class="banner bad">{totals.not_passed} of {totals.cases} case(s) did not pass</div>'
    lines = [
        f"<header><h1>jurybox · {e(report.suite)}</h1>",
        '<p class="meta">' + "".join(f"<span>{m}</span>" for m in meta) + "</p>",
        banner,
        "</header>",
    ]
    notes = [f"<p>{e(text)}</p>" for text in report.notices()]
    if notes:
        lines += ['<section class="notes" aria-label="notes">', *notes, "</section>"]
    return lines


def _totals(report: RunReport) -> list[str]:
    totals = report.totals
    cards = [
        ("cases", str(totals.cases), ""),
        ("pass rate", fmt.rate(totals.pass_rate), f"{totals.passed} passed"),
        ("fail", str(totals.failed), ""),
        ("error", str(totals.errored), "could not be judged"),
        ("abstain", str(totals.abstained), "judge undecided"),
        ("degraded", str(totals.degraded_judgments), f"verdict(s) in {totals.degraded_cases} case(s)"),
        (
            "judge calls",
            str(totals.judge_calls),
            f"{totals.judge_cache_hits} from cache"
            if totals.judge_calls and totals.judge_cache_hits is not None
            else "",
        ),
        ("tokens", fmt.tokens(totals), ""),
        ("cost", fmt.cost(totals), ""),
        ("duration", fmt.duration(totals.duration), f"case time {fmt.duration(totals.case_time)}"),
    ]
    lines = ['<section aria-label="totals"><h2>Totals</h2><div class="cards">']
    lines += [
        f'<div class="card"><small>{e(label)}</small><b>{e(value)}</b><small>{e(note)}</small></div>'
        for label, value, note in cards
    ]
    lines.append("</div>")
    if totals.judge_endpoints:
        lines.append("<h2>Judge endpoints</h2><table><thead><tr><th>endpoint</th><th>calls</th><th>errors</th>")
        lines.append("</tr></thead><tbody>")
        lines += [
            f'<tr><td>{e(url)}</td><td class="num">{counts.get("calls", 0)}</td>'
            f'<td class="num">{counts.get("errors", 0)}</td></tr>'
            for url, counts in sorted(totals.judge_endpoints.items())
        ]
        lines.append("</tbody></table>")
    if totals.tiers:
        lines += [
            "<h2>Tiers</h2><table><thead><tr><th>tier</th><th>pass rate</th><th>target</th><th>passed</th>"
            "<th>ran</th><th>decided</th></tr></thead><tbody>"
        ]
        lines += [
            f'<tr><td>{e(t.tier)}</td><td class="num">{e(fmt.rate(t.rate))}</td>'
            f'<td class="num">{e(fmt.target(t.target, t.target_met))}</td><td class="num">{t.passed}</td>'
            f'<td class="num">{t.ran}</td><td class="num">{t.decided}</td></tr>'
            for t in totals.tiers.values()
        ]
        lines.append("</tbody></table>")
    if report.calibrations:
        lines.append("<h2>Calibrated judges</h2><ul>")
        lines += [f"<li>{e(judge.describe())}</li>" for judge in report.calibrations]
        lines.append("</ul>")
    lines.append("</section>")
    return lines


def _filters(report: RunReport) -> list[str]:
    totals = report.totals
    options = [
        ("all", "all", totals.cases),
        ("pass", "pass", totals.passed),
        ("fail", "fail", totals.failed),
        ("error", "error", totals.errored),
        ("abstain", "abstain", totals.abstained),
        ("degraded", "degraded", totals.degraded_cases),
    ]
    buttons = [
        f'<button type="button" data-filter="{key}" aria-pressed="{str(key == "all").lower()}">'
        f"{label} ({count})</button>"
        for key, label, count in options
    ]
    return [
        '<h2>Cases</h2><nav class="filters" aria-label="filter cases">',
        *buttons,
        '<input id="search" type="search" placeholder="search cases, output, reasoning…" aria-label="search">',
        '<button type="button" id="expand">expand all</button>',
        '<button type="button" id="collapse">collapse all</button>',
        "</nav>",
    ]


def _case(case: CaseSummary) -> str:
    record = case.record
    status = record.status.value
    degraded = '<span class="badge degraded">degraded</span>' if case.degraded else ""
    tags = " ".join(f'<span class="tag">#{e(t)}</span>' for t in record.tags)
    summary = (
        f"<summary><span>{_badge(record.status)} {degraded}</span><span><strong>{e(record.case)}</strong> {tags}</span>"
        f'<span>{_meter(case.score)}</span><span class="reason">{e(fmt.shorten(case.reason, 200))}</span>'
        f'<span class="muted">{e(case.tier or "—")}</span></summary>'
    )
    facts = {
        "score": fmt.case_score(record.judgment),
        "decided by": case.tier or "—",
        "duration": fmt.duration(record.duration),
        "judge calls": str(record.judge_calls),
        "tokens": "unknown" if record.tokens is None else str(record.tokens),
        "cost": fmt.case_cost(record.cost),
    }
    if record.started_at:
        facts["started"] = fmt.when(record.started_at)
    if record.lessons:  # stored lessons the agent and opted-in judges were handed
        facts["lessons seen"] = ", ".join(f"#{lesson}" for lesson in record.lessons)
    body = ['<div class="body">', _kv(facts)]
    if record.error:
        body.append(f'<p><strong class="no">error:</strong></p><pre>{e(record.error)}</pre>')
    if case.skipped:
        body.append(
            "<p>"
            + " ".join(f'<span class="badge skipped">{e(tier)}: {e(why)}</span>' for tier, why in case.skipped.items())
            + "</p>"
        )
    body += ["<h3>Verdict</h3>", _tree(record.judgment, "case")]
    for round_ in record.rounds:
        body.append(f'<section class="round"><h3>Round {round_.index + 1} {_badge(round_.judgment.status)}</h3>')
        body.append(f"<p><strong>prompt</strong></p><pre>{e(round_.prompt)}</pre>")
        for question, reply in round_.follow_ups:
            body.append(
                f'<div class="exchange"><p class="muted">agent asked</p><pre>{e(question)}</pre>'
                f'<p class="muted">follow-up reply</p><pre>{e(reply)}</pre></div>'
            )
        body.append(_context(round_.context, show_input=False))
        if own_verdict(record, round_):
            body.append(_tree(round_.judgment, f"round {round_.index + 1}"))
        else:
            body.append('<p class="muted">verdict: the case verdict above</p>')
        body.append("</section>")
    # The runner usually hands the last round's execution as the case's; show it once.
    if record.context is not None and all(record.context != r.context for r in record.rounds):
        body += ["<h3>Execution</h3>", _context(record.context, show_input=True)]
    if record.metadata:
        body.append(_json_block("case metadata", record.metadata))
    body.append("</div>")
    return (
        f'<details class="case" data-status="{status}" data-degraded="{str(case.degraded).lower()}">'
        + summary
        + "".join(body)
        + "</details>"
    )


def _tree(judgment: Judgment, label: str) -> str:
    return f'<ul class="tree">{_verdict(label, judgment, None)}</ul>'


def _verdict(name: str, judgment: Judgment, parent: Judgment | None) -> str:
    head = [f'<span class="path">{e(name)}</span>', _badge(judgment.status)]
    if judgment.degraded:
        head.append('<span class="badge degraded">degraded</span>')
    if parent is not None and parent.decided_by == name:
        head.append('<span class="badge decided">decided</span>')
    if judgment.judge and judgment.judge != name:
        head.append(f'<span class="muted">judge {e(judgment.judge)}</span>')
    if judgment.score is not None:
        head.append(f"<span>score {e(fmt.judgment_score(judgment))}</span>")
    if judgment.confidence is not None:
        head.append(f'<span class="muted">confidence {judgment.confidence:.2f}</span>')
    parts = ['<li><div class="verdict-head">', *head, "</div>"]
    if judgment.reasoning:
        parts.append(f'<div class="reasoning">{e(judgment.reasoning)}</div>')
    if judgment.checks:
        parts.append('<ul class="checks">')
        parts += [
            f'<li><span class="{"ok" if c.passed else "no"}">{"✓" if c.passed else "✗"}</span> '
            f"<strong>{e(c.name)}</strong>{': ' + e(c.message) if c.message else ''}</li>"
            for c in judgment.checks
        ]
        parts.append("</ul>")
    if judgment.error is not None:
        parts.append(f'<p class="no">{e(judgment.error.type)}: {e(judgment.error.message)}</p>')
        if judgment.error.traceback:
            parts.append(f"<details><summary>traceback</summary><pre>{e(judgment.error.traceback)}</pre></details>")
    skipped = judgment.metadata.get("skipped")
    if judgment.decided_by and isinstance(skipped, list | tuple) and skipped:
        parts.append(
            "<p>" + " ".join(f'<span class="badge skipped">not needed: {e(t)}</span>' for t in skipped) + "</p>"
        )
    extra = {k: v for k, v in judgment.metadata.items() if k != "skipped"}
    if extra:
        parts.append(_json_block("metadata", extra))
    if judgment.children:
        parts.append('<ul class="tree">')
        parts += [_verdict(child_name, child, judgment) for child_name, child in judgment.children.items()]
        parts.append("</ul>")
    parts.append("</li>")
    return "".join(parts)


def _context(context: Context, *, show_input: bool) -> str:
    parts = []
    if show_input and context.input:
        parts.append(f"<p><strong>input</strong></p><pre>{e(context.input)}</pre>")
    parts.append(f"<p><strong>output</strong></p><pre>{e(context.output)}</pre>")
    if context.expected is not None:
        parts.append(f"<p><strong>expected</strong></p><pre>{e(context.expected)}</pre>")
    if context.tool_calls:
        parts.append("<p><strong>tool calls</strong></p><ol>")
        parts += [
            f"<li><code>{e(call.name)}</code> {_inline_json(call.arguments)}"
            + (f"<pre>{e(_dump(call.result))}</pre>" if call.result is not None else "")
            + "</li>"
            for call in context.tool_calls
        ]
        parts.append("</ol>")
    if context.sources:
        parts.append(f"<details><summary>sources ({len(context.sources)})</summary>")
        parts += [f"<pre>{e(source)}</pre>" for source in context.sources]
        parts.append("</details>")
    if context.messages:
        parts.append(f"<details><summary>conversation ({len(context.messages)} messages)</summary>")
        parts += [f'<p class="muted">{e(m.role)}</p><pre>{e(m.content)}</pre>' for m in context.messages]
        parts.append("</details>")
    facts = {"status": context.status}
    if context.duration is not None:
        facts["duration"] = fmt.duration(context.duration)
    if context.workspace is not None:
        facts["workspace"] = str(context.workspace)
    parts.append(_kv(facts))
    if context.metadata:
        parts.append(_json_block("execution metadata", context.metadata))
    return "".join(parts)


def _badge(status: Status) -> str:
    return f'<span class="badge {status.value}">{status.value.upper()}</span>'


def _meter(value: float | None) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    return f'<meter min="0" max="1" value="{value:.3f}" title="{value:.2f}"></meter> {value:.2f}'


def _kv(facts: Mapping[str, str]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in facts.items()) + "</dl>"


def _json_block(label: str, data: Mapping[str, Any]) -> str:
    return f"<details><summary>{e(label)}</summary><pre>{e(_dump(data))}</pre></details>"


def _inline_json(data: Mapping[str, Any]) -> str:
    return f'<code class="muted">{e(json.dumps(to_jsonable(data), ensure_ascii=False))}</code>'


def _dump(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False)


register_report_format("html", ReportFormat(".html", iter_html), summary="one self-contained page")
