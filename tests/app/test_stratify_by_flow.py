"""A non-default "Stratify by" and "Strata" chosen on the Projects form reach every consumer unchanged:
preparation, the project's design, the grading queue, the estimator, the live anytime interval and the
Simulate page. Stratification happens once, at preparation; nothing downstream re-stratifies."""

from __future__ import annotations

import numpy as np

from core.jobs.simulation_job import latest_simulation
from core.services.grading import queue_state
from core.stats.confseq import anytime_interval
from core.stats.design import prepared_design, project_design
from core.stats.estimate import estimate
from core.stats.queue import next_item
from core.stats.strata import DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, stratify
from core.testing.waiting import prepared
from tests.app.test_dashboard_export import simulated
from tests.app.test_projects_page import _fill_new_project

CHOSEN_BY, CHOSEN_STRATA = "entropy", 3


def test_stratify_by_and_strata_flow_from_the_form_to_the_queue_the_estimator_and_the_simulation(
    open_app, store, uploads, monkeypatch, tmp_path
):
    assert (CHOSEN_BY, CHOSEN_STRATA) != (DEFAULT_STRATIFY_BY, DEFAULT_N_STRATA)  # not the defaults
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    _fill_new_project(at, "Flow", uploads["pool.jsonl"], uploads["samples.jsonl"])
    at.selectbox(key="new_stratify").set_value(CHOSEN_BY)
    at.number_input(key="new_strata").set_value(CHOSEN_STRATA)
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    project = store.project_by_name("Flow")
    assert (project.settings.stratify_by, project.settings.n_strata) == (CHOSEN_BY, CHOSEN_STRATA)
    prepared(store, project.id)

    # preparation stratified by the choice, once
    items = store.load_items(project.id)
    expected = stratify(
        items["semantic_entropy"].to_numpy(), items["agreement"].to_numpy(), n_strata=CHOSEN_STRATA, by=CHOSEN_BY
    )
    assert np.array_equal(items["stratum"].to_numpy(), expected)
    by_default = stratify(items["semantic_entropy"].to_numpy(), items["agreement"].to_numpy())
    assert not np.array_equal(expected, by_default), "the pool must tell the choice from the default apart"

    # the design every consumer uses keeps those strata
    design = project_design(store, project.id)
    assert np.array_equal(design.stratum, expected) and design.H == len(np.unique(expected))

    # the queue hands out items of those strata, every stratum first
    firsts = []
    for _ in range(design.H):
        position = next_item(design, queue_state(store, project.id), project.settings.seed)
        firsts.append(int(design.stratum[position]))
        store.add_grade(project.id, position, value=1.0, label="Correct", grader="ann")
    assert sorted(firsts) == list(range(design.H))

    # the estimator and the live anytime interval read the same strata
    graded = store.graded_positions(project.id)
    result = estimate(design, list(graded), list(graded.values()))
    assert len(result.strata) == design.H and not result.missing
    assert anytime_interval(design, list(graded), list(graded.values()), n0=20).n == design.H

    # the Simulate page simulates this design (its worker reads the prepared items), not a re-stratification
    page = open_app("app_pages/simulate.py", project_id=project.id)
    page.text_input(key="sim_budgets").set_value("0.2")
    page.number_input[0].set_value(10)
    page.multiselect[0].set_value(["uniform", "activegrade"])
    page.button[0].click().run(timeout=120)
    simulated(page)
    assert not page.error, [e.value for e in page.error]
    job = latest_simulation(store, project.id)
    assert job.state == "done" and "design" not in job.payload
    assert np.array_equal(prepared_design(store.load_items(project.id)).stratum, expected)
    assert page.dataframe[0].value["method"].tolist().count("activegrade") == 1
