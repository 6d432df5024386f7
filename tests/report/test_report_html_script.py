"""The HTML report's filter script, run in Node against a minimal stand-in for the DOM (skipped without node)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from jurybox.report import RunReport, to_html
from jurybox.report._html import _JS

NODE = shutil.which("node")

# Just enough DOM for the script: elements with dataset, textContent, hidden, open, listeners.
HARNESS = """
const cases = JSON.parse(process.argv[1]);
function el(props) { const e = Object.assign({hidden: false, open: false, listeners: {}, attrs: {}}, props);
  e.addEventListener = (type, fn) => { e.listeners[type] = fn; };
  e.setAttribute = (k, v) => { e.attrs[k] = v; }; return e; }
const details = cases.map(c => el({dataset: {status: c.status, degraded: c.degraded}, textContent: c.text}));
const buttons = ["all", "pass", "fail", "error", "abstain", "degraded"].map(f => el({dataset: {filter: f}}));
const byId = {search: el({value: ""}), "no-match": el({}), expand: el({}), collapse: el({})};
global.document = {
  querySelectorAll: sel => sel.startsWith("details") ? details : buttons,
  getElementById: id => byId[id],
};
SCRIPT
const visible = () => details.map((d, i) => d.hidden ? null : i).filter(i => i !== null);
const out = {};
out.initial = visible();
buttons[2].listeners.click(); out.fail = visible(); out.pressed = buttons.map(b => b.attrs["aria-pressed"]);
buttons[5].listeners.click(); out.degraded = visible();
buttons[0].listeners.click(); byId.search.value = "BOOKINGS"; byId.search.listeners.input(); out.search = visible();
byId.search.value = "no such text"; byId.search.listeners.input();
out.none = visible(); out.empty = byId["no-match"].hidden;
byId.search.value = ""; byId.search.listeners.input(); byId.expand.listeners.click();
out.opened = details.every(d => d.open);
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_filters_and_search(report: RunReport) -> None:
    assert _JS in to_html(report)
    cases = [
        {"status": c.status.value, "degraded": str(c.degraded).lower(), "text": f"{c.name} {c.reason}"}
        for c in report.failing_first()
    ]
    script = HARNESS.replace("SCRIPT", _JS)
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", script, json.dumps(cases)], capture_output=True, text=True, timeout=30, check=True
    )
    out = json.loads(done.stdout)
    statuses = [c["status"] for c in cases]
    assert out["initial"] == list(range(len(cases)))
    assert [statuses[i] for i in out["fail"]] == ["fail", "fail"]
    assert out["pressed"] == ["false", "false", "true", "false", "false", "false"]
    assert [cases[i]["degraded"] for i in out["degraded"]] == ["true"]
    assert [cases[i]["text"].split()[0] for i in out["search"]] == ["bookings-next-week", "bookings-degraded"]
    assert out["none"] == [] and out["empty"] is False
    assert out["opened"] is True
