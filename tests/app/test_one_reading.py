"""One project's reading (core.services.reading) followed into the dashboard, the presenter view, the report
and the setup headline: the same interval, stopping decision and forecast everywhere."""

from __future__ import annotations

from core.exports.report import report
from core.services.tracking import current_estimate
from tests.app.test_dashboard_export import grade_some


def test_every_page_and_the_report_show_the_same_reading(open_app, store, project_id):
    from ui import plan

    grade_some(store, project_id, 24)
    project = store.project(project_id)
    graded = store.graded_positions(project_id)
    reading = plan.reading_of(project, graded, project.settings["method"])
    interval = f"{reading.now.low:.3f} – {reading.now.high:.3f}"

    dashboard = open_app("app_pages/dashboard.py", project_id=project_id)
    metric = next(m for m in dashboard.metric if m.label.endswith("interval, valid whenever you stop"))
    assert metric.value == interval
    needed = next(m for m in dashboard.metric if m.label == "Items still needed")
    assert needed.value == f"{reading.items_left:,}" and f"{reading.forecast.n:,} in all" in needed.help

    presenter = open_app("app_pages/presenter.py", project_id=project_id)
    assert interval in "\n".join(h.proto.body for h in presenter.get("html"))

    design = plan.design(project)
    result = current_estimate(design, graded, project.settings["method"])
    data = report(project, design, result, {"pool": ("pool.jsonl", b"abc")}, store.grades(project_id))
    rule = data["stopping_rule"]
    assert rule["met"] == reading.done and rule["regime"] == reading.regime == "looks"
    assert rule["forecast"] == {"n": reading.forecast.n, "low": reading.forecast.low, "high": reading.forecast.high}
    shown = data["estimate"]["stopping_interval"]
    assert (round(shown["ci_low"], 3), round(shown["ci_high"], 3)) == (
        round(reading.now.low, 3),
        round(reading.now.high, 3),
    )

    setup = open_app(project_id=project_id)
    headline = next(m.value for m in setup.markdown if m.value.startswith("### To reach"))
    assert (
        f"grade about {reading.forecast.n:,} items (likely {reading.forecast.low:,} to {reading.forecast.high:,}"
        in headline
    )
