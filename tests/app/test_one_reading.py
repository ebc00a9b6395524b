"""One project's reading (core.services.reading) followed into the dashboard, the presenter view, the report and
the lm-eval results as exported (core.exports), the HTTP API's GET reading and the setup headline: the same
interval, stopping decision and forecast everywhere, and the Projects page's plan section the same saving."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.testclient import TestClient

from core import api
from core.exports.formats import EXPORTS
from core.exports.project_export import ProjectFiles, report_bytes
from core.services import auth, team, tokens
from core.services.progress import percent
from core.services.reading import saving_metric
from tests.app.test_dashboard_export import grade_some


def _api_reading(store, project_id: int, monkeypatch) -> dict:
    """GET reading's body, asked by a viewer with an API token (the open demo of these flows has no API)."""
    monkeypatch.delenv("ACTIVEGRADE_OPEN_DEMO")
    team.create_account(store, auth.OPERATOR, "vic", auth.VIEWER, password="correct horse battery")
    team.assign(store, auth.OPERATOR, project_id, "vic")
    secret = tokens.create(store, auth.OPERATOR, "vic", "tests")[1]
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    answer = client.get(f"{api.PREFIX}/projects/{project_id}/reading", headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_every_page_export_and_the_api_show_the_same_reading(open_app, store, project_id, monkeypatch):
    from ui import plan

    grade_some(store, project_id, 24)
    project = store.project(project_id)
    graded = store.graded_positions(project_id)
    reading = plan.reading_of(project, graded, project.settings.method)
    interval = f"{reading.now.low:.3f} – {reading.now.high:.3f}"
    now = (round(reading.now.low, 3), round(reading.now.high, 3))
    forecast = {"n": reading.forecast.n, "low": reading.forecast.low, "high": reading.forecast.high}

    dashboard = open_app("app_pages/dashboard.py", project_id=project_id)
    metric = next(m for m in dashboard.metric if m.label.endswith("anytime-valid interval"))
    assert metric.value == interval
    needed = next(m for m in dashboard.metric if m.label == "Items still needed")
    assert needed.value == f"{reading.items_left:,}" and f"about {reading.forecast.n:,} (likely" in needed.help

    presenter = open_app("app_pages/presenter.py", project_id=project_id)
    assert interval in "\n".join(h.proto.body for h in presenter.get("html"))

    files = ProjectFiles.of(store, project)
    data = json.loads(report_bytes(files.require_report(), "json"))  # as `activegrade report` writes it
    rule = data["stopping_rule"]
    assert rule["met"] == reading.done and rule["regime"] == reading.regime == "looks"
    assert rule["forecast"] == forecast
    shown = data["estimate"]["stopping_interval"]
    assert (round(shown["ci_low"], 3), round(shown["ci_high"], 3)) == now

    results = json.loads(EXPORTS["lm-eval"].write(files))["results"]
    task = next(iter(results.values()))
    assert (round(task["human_ci_low,none"], 3), round(task["human_ci_high,none"], 3)) == now

    setup = open_app(project_id=project_id)
    headline = next(m.value for m in setup.markdown if m.value.startswith("### To reach"))
    assert (
        f"grade about {reading.forecast.n:,} items (likely {reading.forecast.low:,} to {reading.forecast.high:,}"
        in headline
    )
    saving = next(m for m in setup.metric if m.label.lower().endswith("saving: fixed-n · same rule"))
    assert reading.saving_known and saving.value == saving_metric(reading)[1]
    assert (
        saving.value
        == f"{percent(reading.saving.fixed_n, signed=True)} · {percent(reading.saving.same_regime, signed=True)}"
    )

    body = _api_reading(store, project_id, monkeypatch)
    served = next(i for i in body["intervals"] if i["role"] == "now")
    assert (round(served["low"], 3), round(served["high"], 3)) == now and served["name"] == reading.now.name
    assert body["stopping"]["done"] == reading.done and body["stopping"]["regime"] == reading.regime
    assert {k: body["forecast"][k] for k in forecast} == forecast
    assert body["forecast"]["items_left"] == reading.items_left
