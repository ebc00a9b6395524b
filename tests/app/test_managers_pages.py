"""The setup section (Projects page) a manager reads, and the presenter view (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

from core.scales import BINARY
from core.services.reservations import submit
from core.stats.allocation import design_from_items
from core.stats.looks import look_plan
from core.stats.stopping import ANYTIME, FIXED, LOOKS, allocation_kappa
from ui.glossary import STOPPING_TERM, TERMS


def _text(at) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.subheader] if isinstance(e.value, str))


def test_setup_headline_range_interval_and_one_strata_count(open_app, store, project_id):
    at = open_app(project_id=project_id)
    headline = next(m.value for m in at.markdown if m.value.startswith("### To reach"))
    assert "±0.050 at 95%, grade about" in headline and "uniform random sampling would need" in headline
    text = _text(at)
    assert "likely" in headline and "Stopping: planned looks on information" in text and "80% range" in text
    h = design_from_items(store.load_items(project_id), stratify_by=None).H
    assert {m.label: m.value for m in at.metric}["Strata"] == str(h)
    assert f"{h} strata" in text  # the caption and the strata section say the same count


def test_setup_shows_the_stratifying_variables_ranges_and_the_design_picture(open_app, project_id):
    at = open_app(project_id=project_id)
    strata = at.dataframe[0].value  # stratified by agreement (the default): agreement ranges, no entropy
    assert {"agreement from", "agreement to"} <= set(strata.columns) and "entropy from" not in strata.columns
    assert len(set(zip(strata["agreement from"], strata["agreement to"]))) == len(strata)
    assert "Stratified by agreement" in [s.value for s in at.subheader]
    assert len(at.get("vega_lite_chart")) == 2  # the histogram by stratum and planned vs proportional
    allocation = at.dataframe[1].value
    assert {"planned grades", "proportional", "predicted spread"} <= set(allocation.columns)


def test_every_term_has_plain_help_and_a_formula(open_app, project_id):
    at = open_app(project_id=project_id)
    text = _text(at)
    for term, (plain, formula) in TERMS.items():
        assert f"**{term}**: {plain}" in text and formula
    assert len(at.get("latex")) == len(TERMS)
    assert all(s.help for s in at.subheader if s.value in ("Strata", "Planned allocation"))


@pytest.mark.parametrize("grades", [0, 12])
def test_presenter_view_shows_the_estimate_large_and_live(open_app, store, project_id, grades):
    items = store.load_items(project_id)
    for position in range(grades):
        submit(store, project_id, position, BINARY, "Correct" if items.loc[position, "label"] else "Incorrect", "ann")
    at = open_app("app_pages/presenter.py", project_id=project_id)
    shown = "\n".join(h.proto.body for h in at.get("html"))
    if grades == 0:
        assert "waiting" in shown and not at.get("vega_lite_chart")
        return
    assert "ag-big" in shown and "valid whenever you stop" in shown and f"{grades}" in shown
    assert "more items to ±0.050" in shown or "done at" in shown  # where grading stands, in the count's cell
    assert len(at.get("vega_lite_chart")) == 1 and "Grey band" in at.caption[0].proto.help  # how to read it
    # in one line an audience reads without hovering, the band named for what it is: the headline quotes the dotted
    assert "blue band: its fixed-n interval" in at.caption[0].value and "the one quoted above" in at.caption[0].value


def test_presenter_view_of_a_fixed_budget_shows_the_fixed_n_interval(open_app, store, project_id):
    store.update_settings(project_id, {"budget_fixed": True, "planned_budget": 30})
    for position in range(12):
        submit(store, project_id, position, BINARY, "Correct", "ann")
    at = open_app("app_pages/presenter.py", project_id=project_id)
    shown = "\n".join(h.proto.body for h in at.get("html"))
    assert "fixed-n, to be read at the budget" in shown and "Budget of 30 items: not yet." in at.caption[0].value


def test_presenter_view_is_for_those_who_see_the_dashboard():
    from core.services import auth
    from ui.signin import PAGE_ACTIONS

    assert PAGE_ACTIONS["Presenter view"] == auth.VIEW_DASHBOARD
    assert auth.VIEW_DASHBOARD in auth.PERMISSIONS[auth.VIEWER]
    assert auth.VIEW_DASHBOARD not in auth.PERMISSIONS[auth.GRADER]  # graders grade blind to the estimate


def test_presenter_and_dashboard_follow_new_grades_and_count_skips(open_app, store, project_id):
    items = store.load_items(project_id)

    def grade(positions, grader="ann"):
        for p in positions:
            submit(store, project_id, p, BINARY, "Correct" if items.loc[p, "label"] else "Incorrect", grader)

    grade(range(12))
    store.add_skip(project_id, 20, "ann")
    at = open_app("app_pages/presenter.py", project_id=project_id)
    assert "12</p>" in "".join(h.proto.body for h in at.get("html"))
    grade(range(12, 16))
    at.run()  # what the fragment's timer does
    assert "16</p>" in "".join(h.proto.body for h in at.get("html"))
    dash = open_app("app_pages/dashboard.py", project_id=project_id)
    assert any("1 item skipped and not graded. Had it been graded" in c.value for c in dash.caption)


def test_presenter_view_says_where_the_rule_stopped_when_grading_went_past_it(open_app, store, project_id):
    """The saving shown is counted at the stop: with 40 graded and the rule done at 11, the screen says 11, so
    "40 of 40 items graded" beside a saving of a few grades does not read as a contradiction."""
    from tests.app.test_dashboard_export import grade_some
    from ui import plan

    store.update_settings(project_id, {"target_half_width": 0.2})
    grade_some(store, project_id, 40)
    project = store.project(project_id)
    reading = plan.reading_of(project, store.graded_positions(project_id), project.settings.method)
    assert reading.done and reading.stop_at is not None and reading.stop_at < reading.graded == 40
    at = open_app("app_pages/presenter.py", project_id=project_id)
    assert at.caption[0].value.startswith(f"Target ±0.200: reached at {reading.stop_at:,} graded items.")


def test_the_glossary_states_the_looks_levels_and_the_allocations_kappa_the_code_uses():
    """The glossary said the default allocates for the anytime interval (kappa = log(40) / 2), which only the
    anytime regime does; its words are checked here against the levels and terms the code uses."""
    plan = look_plan()
    levels = " and ".join(f"{level:.1%}" for level in plan.levels)
    constants = [f"c_{k + 1} = {c:.2f}" for k, c in enumerate(plan.constants)]
    plain, formula = TERMS[STOPPING_TERM]
    assert f"({levels})" in plain and all(c in formula for c in constants)
    neyman = TERMS["Neyman allocation"][0]
    assert allocation_kappa(LOOKS) == allocation_kappa(FIXED) == 0.5 and "kappa = 1/2 for the fixed-n" in neyman
    assert allocation_kappa(ANYTIME) == pytest.approx(np.log(40) / 2) and "log(40) / 2 for the anytime" in neyman
