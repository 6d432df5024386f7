"""A trend's lines are compact SVG paths: one per stretch of known values, whole-pixel relative steps."""

from __future__ import annotations

from jurybox.web._charts import MARK_LIMIT, Series, _path, line_chart


def test_a_line_is_relative_steps_and_a_gap_starts_a_new_stretch() -> None:
    assert _path([10, 12, 9, None, 5, 5, None, 7]) == "M0 10l1 2 1-3M4 5l1 0M7 7"
    assert _path([None, None]) == ""


def test_a_long_chart_marks_some_points_and_every_regression() -> None:
    count = 1000
    states = ["regression" if i % 50 == 7 else "ok" for i in range(count)]
    chart = line_chart(
        "Pass rate",
        labels=[f"run {i}" for i in range(count)],
        hrefs=[f"/runs/{i}" for i in range(count)],
        series=[Series("overall", [0.5 + (i % 10) / 40 for i in range(count)], "s-main", markers=True)],
        y_format=lambda v: f"{v:.0%}",
        y_range=(0.0, 1.0),
        states=states,
    )
    regressions = {m.href for m in chart.markers if "state-regression" in m.css}
    assert regressions == {f"/runs/{i}" for i in range(count) if i % 50 == 7}
    assert len(chart.markers) <= MARK_LIMIT + len(regressions) + 1
    assert "/runs/999" in {m.href for m in chart.markers}  # the latest run is always a dot
    assert len(chart.lines[0].path) < 6 * count  # about 4 bytes a point
