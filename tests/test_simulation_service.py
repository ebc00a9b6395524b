"""core.services.simulation: the Simulate page's run is queued only for a user who may simulate the project,
with its budgets checked at once, and read back as a Run."""

from __future__ import annotations

import dataclasses

import pytest

from core.errors import InputError
from core.services import account_writes, auth, simulation
from core.services.outcome import Refused
from core.services.project import run_project_jobs
from core.stats.design import prepared_design
from core.stats.simulate import simulate
from core.store import accounts

PASSWORD = "correct horse battery"
ARGUMENTS = dict(budgets=["0.5"], reps=2, seed=0, methods=["uniform"], n0=10, skip_wrong=0.0, skip_right=0.0)


@pytest.fixture
def world(prepared_project):
    return prepared_project


def test_only_a_user_who_may_simulate_queues_a_run(world):
    store, pid = world
    grader = account_writes.create_account(store, "gus", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)
    with pytest.raises(Refused):
        simulation.start(store, grader, pid, **ARGUMENTS)
    with pytest.raises(Refused):
        simulation.latest(store, grader, pid)
    with pytest.raises(Refused):
        simulation.start(store, None, pid, **ARGUMENTS)
    assert simulation.latest(store, auth.OPERATOR, pid) is None
    simulation.start(store, auth.OPERATOR, pid, **ARGUMENTS)
    assert simulation.latest(store, auth.OPERATOR, pid) == simulation.Run("running")
    run_project_jobs(store, pid)
    done = simulation.latest(store, auth.OPERATOR, pid)
    assert done.state == "done" and "uniform" in done.result["methods"]
    stop = simulation.stopping(done.result)  # the stopping mode at the project's own target
    assert stop.target == store.project(pid).settings.target_half_width
    assert [r["method"] for r in stop.rows] == ["activegrade", "uniform"]
    assert stop.forecast[0] <= stop.forecast[1] <= stop.forecast[2]
    own = stop.rows[0]  # the saving shown at the stop, to check against the dashboard's, beside the saving had
    assert own["saving shown at the stop, fixed-n"] == done.result["stopping"]["activegrade"]["saving_shown_at_stop"]
    assert own["saving had"] == done.result["stopping"]["activegrade"]["saving_realised"]
    # the page's table is turned, a line per figure (ten columns ran past the page at 1,400 px: a manager's review)
    table = {line["figure"]: line for line in stop.table}
    assert set(stop.table[0]) == {"figure", "activegrade", "uniform"} and len(table) == 7
    median = table["grades at the stop (median)"]["activegrade"]
    assert median.startswith(f"{own['grades at the stop (median)']:,.0f} ± ")
    assert table["coverage of the 95% interval at the stop"]["uniform"].endswith("%")
    # uniform's fixed-n size in words: one number where Wald's and Wilson's agree (a review read "165 ... or 165")
    same = dataclasses.replace(stop, uniform_fixed_n=165, uniform_wilson=165)
    assert simulation.uniform_words(same) == "165 grades"
    rare = dataclasses.replace(stop, uniform_fixed_n=30, uniform_wilson=51)
    assert simulation.uniform_words(rare).startswith("30 grades (Wald's interval) or 51 (Wilson's")
    shown = own["saving shown at the stop, fixed-n"]
    assert table["saving shown at the stop, fixed-n"]["activegrade"] == f"{round(shown, 2) + 0.0:+.0%}"


def test_the_stopping_mode_tunes_each_method_as_the_command_line_does(world):
    """The form's n0 (10 here) tuned the stopping mode's every method, uniform's included, where the command
    line tunes each at its own forecast: the page and the CLI gave uniform 473 and 451 grades on one project."""
    store, pid = world
    simulation.start(store, auth.OPERATOR, pid, **ARGUMENTS)
    run_project_jobs(store, pid)
    page = simulation.latest(store, auth.OPERATOR, pid).result["stopping"]
    settings = store.project(pid).settings
    items = store.load_items(pid)
    cli = simulate(
        items,
        ["0.5"],
        reps=2,
        methods=["uniform"],
        design=prepared_design(items, settings.stopping),
        regime=settings.stopping,
        target_half_width=float(settings.target_half_width),
        expected=settings.expected_score,
    )["stopping"]
    assert settings.planned_budget is None
    assert [page[m]["n0"] for m in ("activegrade", "uniform")] == [cli[m]["n0"] for m in ("activegrade", "uniform")]
    assert page["activegrade"]["n0"] == settings.anytime_n0(prepared_design(items, settings.stopping)) != 10


def test_a_bad_budget_is_said_before_anything_is_queued(world):
    store, pid = world
    with pytest.raises(InputError, match="budget 'lots' is not a number"):
        simulation.start(store, auth.OPERATOR, pid, **{**ARGUMENTS, "budgets": ["lots"]})
    assert simulation.latest(store, auth.OPERATOR, pid) is None
