"""Each criterion of a rubric read once (core.services.criteria_reading): its estimate and intervals from its own
grades, the primary's being the project's reading, carried into the report and the exports; a one-question
project's reading, report and exports unchanged."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from core.exports.formats import EXPORTS
from core.exports.project_export import ProjectFiles, report_bytes
from core.exports.report import EXPORT_COLUMNS, grades_csv
from core.services import account_writes, auth, grade_actions, live_looks, reservations
from core.services.criteria_reading import criteria_now
from core.services.live import live_reading
from core.services.reading import read_project
from core.stats.confseq import anytime_interval
from core.stats.estimate import estimate
from core.stats.skips import skip_bound
from core.store import accounts
from tests.markdown_text import shown
from tests.test_rubric import CRITERIA

CARDS = 24
"""Cards graded: enough for every stratum of the small pool to have a grade (the queue grades each first)."""


def _answers(k: int) -> dict[str, str]:
    """The k-th card's answers: every required criterion, the optional 'tone' on every third card."""
    answers = {
        "correct": ("Correct", "Incorrect")[k % 2],
        "helpful": str(1 + k % 5),
        "safe": ("unsafe", "borderline", "safe")[k % 3],
    }
    return answers | ({"tone": str(1 + k % 4)} if k % 3 == 0 else {})


def _grade(store, pid: int, design, grade_one) -> dict[int, dict[str, str]]:
    """CARDS items claimed from the queue and graded by ``grade_one(grader, position, k)``: position -> answers."""
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    given = {}
    for k in range(CARDS):
        held = reservations.claim(store, pid, design, 3, "ann")
        given[held] = grade_one(ann, held, k)
    return given


@pytest.fixture
def rubric_graded(prepared_project):
    """A rubric project (tests/test_rubric.CRITERIA, 'correct' the primary) with CARDS cards graded:
    (store, pid, design, position -> answers)."""
    store, pid = prepared_project
    store.update_settings(pid, {"criteria": CRITERIA, "seed": 3})
    design = ProjectFiles.of(store, store.project(pid)).design

    def card(ann, held: int, k: int) -> dict[str, str]:
        answers = _answers(k)
        assert grade_actions.grade_rubric(store, ann, pid, held, answers, seconds=1.0).status == "saved"
        return answers

    return store, pid, design, _grade(store, pid, design, card)


def _values(given: dict[int, dict[str, str]], criterion: str, settings) -> dict[int, float]:
    """position -> the value of the label given for ``criterion``, in grading order, read off its scale."""
    scale = settings.rubric.criterion(criterion).scale
    return {p: scale.value_of(a[criterion]) for p, a in given.items() if criterion in a}


def test_each_criterion_is_read_by_the_estimator_on_its_own_grades(rubric_graded):
    store, pid, design, given = rubric_graded
    settings = store.project(pid).settings
    readings = criteria_now(store, pid, design, settings, settings.method)
    assert [r.name for r in readings] == ["correct", "helpful", "safe", "tone"]
    assert [r.primary for r in readings] == [True, False, False, False]
    for r in readings:
        graded = _values(given, r.name, settings)
        direct = estimate(design, list(graded), list(graded.values()), method=settings.method)
        assert r.graded == len(graded) and r.cards == CARDS
        assert (r.estimate.value, r.estimate.ci_low, r.estimate.ci_high) == pytest.approx(
            (direct.value, direct.ci_low, direct.ci_high), nan_ok=True
        )
        assert (r.fixed_n.low, r.fixed_n.high) == (r.estimate.ci_low, r.estimate.ci_high)
        n0 = settings.anytime_n0(design)
        sequence = anytime_interval(design, list(graded), list(graded.values()), n0)
        assert (r.anytime.low, r.anytime.high) == pytest.approx((sequence.low, sequence.high))  # no skips
        assert r.now == r.anytime and r.when == "valid whenever you stop"
    tone = readings[-1]
    assert tone.graded == CARDS // 3 and f"{CARDS // 3} of {CARDS} graded items" in tone.estimand
    assert "optional" in tone.estimand and "optional" not in readings[1].estimand
    # the likert and the three-label criteria's values differ from the binary primary's: not its grades reread
    assert readings[1].estimate.value != readings[0].estimate.value


def test_the_primary_reading_is_todays_reading_of_its_grades_and_keeps_the_looks_replay(rubric_graded):
    store, pid, design, given = rubric_graded
    settings = store.project(pid).settings
    graded = _values(given, "correct", settings)
    result = estimate(design, list(graded), list(graded.values()), method=settings.method)
    sequence = anytime_interval(design, list(graded), list(graded.values()), settings.anytime_n0(design))
    skips = skip_bound(design, graded, graded.values(), store.skipped_positions(pid))
    today = read_project(design, settings, graded, result, sequence, skips=skips)
    now = live_reading(store, pid, design, settings, settings.method)
    assert now.reading == today and now.graded == graded
    readings = criteria_now(store, pid, design, settings, settings.method, primary=now)
    assert readings[0].estimate is now.estimate and readings[0].now == now.reading.now
    # reading the other criteria replays no look: the kept replay is still the primary's grades
    kept = live_looks._kept[(id(design), float(settings.target_half_width))]
    assert kept.positions.tolist() == list(graded) and kept.grades.tolist() == list(graded.values())


def test_the_report_carries_every_criterion_and_names_the_one_the_rule_reads(rubric_graded):
    store, pid, design, _ = rubric_graded
    project = store.project(pid)
    files = ProjectFiles.of(store, project)
    data = json.loads(report_bytes(files.require_report(), "json"))
    readings = criteria_now(store, pid, design, project.settings, project.settings.method)
    section = data["criteria"]
    assert section["design_criterion"] == "correct"
    rows = section["by_criterion"]
    assert [row["criterion"] for row in rows] == ["correct", "helpful", "safe", "tone"]
    for row, r in zip(rows, readings):
        assert row["graded_items"] == r.graded and row["estimand"] == r.estimand
        assert row["estimate"] == (None if r.estimate.missing else pytest.approx(r.estimate.value))
        bounds = (row["interval_low"], row["interval_high"], row["fixed_n_low"], row["anytime_high"])
        if r.known:
            assert bounds[:2] == pytest.approx((r.now.low, r.now.high))
        else:  # no estimate, so no interval (the anytime sequence alone would give one): none written
            assert bounds == (None, None, None, None) and row["estimate"] is None
    assert not all(r.known for r in readings)  # the optional criterion waits for a grade in every stratum
    assert data["estimate"]["value"] == pytest.approx(readings[0].estimate.value)  # the headline: the primary's
    for text in (shown(report_bytes(data, "md").decode()), report_bytes(data, "html").decode().replace("&#x27;", "'")):
        assert "Stopping rule and forecast: criterion 'correct'" in text
        # counted on the criterion the estimate reads: "1 item settled" beside two items with final grades (review)
        assert "settled by a reviewer on correct, the criterion the estimate reads" in text
        assert "Estimated mean grade of criterion 'correct': " in text
        for r in readings:
            assert f"{r.name}: {r.estimand}" in text
            if r.estimate.missing:
                assert "no estimate yet" in text
            else:
                assert f"{r.estimate.value:.4f}" in text and f"[{r.now.low:.4f}, {r.now.high:.4f}]" in text


def test_the_exports_carry_every_criterion(rubric_graded):
    store, pid, design, given = rubric_graded
    files = ProjectFiles.of(store, store.project(pid))
    grades = pd.read_csv(io.BytesIO(EXPORTS["csv"].write(files)))
    assert list(grades.columns) == [EXPORT_COLUMNS[0], "criterion", *EXPORT_COLUMNS[1:]]
    assert len(grades) == sum(len(a) for a in given.values())
    assert grades.groupby("criterion").size().to_dict() == {"correct": 24, "helpful": 24, "safe": 24, "tone": 8}
    # each criterion's inclusion probabilities are its own: n_h of the items with a grade of it
    tone = grades[grades["criterion"] == "tone"].drop_duplicates("position")
    n_h = tone.groupby("stratum").size()
    assert (tone["inclusion_probability"] == tone["stratum"].map(n_h) / tone["stratum_size"]).all()
    estimates = pd.read_csv(io.BytesIO(EXPORTS["estimates"].write(files)), keep_default_na=False)
    assert estimates["criterion"].tolist() == ["correct", "helpful", "safe", "tone"]
    assert estimates["graded_items"].tolist() == [24, 24, 24, 8] and estimates["primary"].tolist() == [
        True,
        False,
        False,
        False,
    ]
    # the Inspect log's human score stays the primary's: one score per item
    assert files.design_table["position"].is_unique


def test_a_one_question_project_reads_reports_and_exports_as_before(prepared_project):
    store, pid = prepared_project
    design = ProjectFiles.of(store, store.project(pid)).design

    def one(ann, held: int, k: int) -> str:
        label = ("Correct", "Incorrect")[k % 2]
        assert grade_actions.grade(store, ann, pid, held, label, seconds=1.0).status == "saved"
        return label

    given = _grade(store, pid, design, one)
    project = store.project(pid)
    files = ProjectFiles.of(store, project)
    data = files.require_report()
    assert "criteria" not in data and "criterion" not in data["stopping_rule"]
    markdown = shown(report_bytes(data, "md").decode())
    assert "Stopping rule and forecast" not in markdown and "**Estimated mean grade: " in markdown
    grades = pd.read_csv(io.BytesIO(EXPORTS["csv"].write(files)))
    assert list(grades.columns) == EXPORT_COLUMNS and len(grades) == len(given)
    assert files.table is files.design_table
    (only,) = criteria_now(store, pid, design, project.settings, project.settings.method)
    now = live_reading(store, pid, design, project.settings, project.settings.method)
    assert only.name == "" and only.primary and only.now == now.reading.now
    assert (only.estimate.value, only.estimate.ci_low, only.estimate.ci_high) == (
        now.estimate.value,
        now.estimate.ci_low,
        now.estimate.ci_high,
    )
    estimates = pd.read_csv(io.BytesIO(EXPORTS["estimates"].write(files)), keep_default_na=False)
    assert estimates["criterion"].tolist() == [""] and estimates["estimate"].tolist() == pytest.approx(
        [now.estimate.value]
    )
    assert np.isfinite(data["estimate"]["value"])


def test_at_a_budget_fixed_in_advance_every_criterion_reports_its_fixed_n_interval(rubric_graded):
    store, pid, _, given = rubric_graded
    store.update_settings(pid, {"budget_fixed": True, "planned_budget": 30})
    project = store.project(pid)
    design = ProjectFiles.of(store, project).design
    readings = criteria_now(store, pid, design, project.settings, project.settings.method)
    now = live_reading(store, pid, design, project.settings, project.settings.method)
    for r in readings:
        assert r.anytime is None and r.now == r.fixed_n and r.when == "fixed-n, to be read at the budget"
    assert readings[0].now == now.reading.now


def test_the_reports_script_recomputes_the_primary_from_a_rubric_grades_export(
    rubric_graded, tmp_path, monkeypatch, capsys
):
    """The grades export of a rubric holds a row per criterion; the report's script reads the primary's rows."""
    store, pid, _, _ = rubric_graded
    files = ProjectFiles.of(store, store.project(pid))
    data = json.loads(report_bytes(files.require_report(), "json"))
    assert set(files.table["criterion"]) > {"correct"}
    (tmp_path / "grades.csv").write_bytes(grades_csv(files.table))
    monkeypatch.chdir(tmp_path)
    exec(data["recompute"]["script"], {})
    mu, variance, _ = (float(v) for v in capsys.readouterr().out.split())
    assert np.isclose(mu, data["recompute"]["value"]) and np.isclose(variance, data["recompute"]["variance"])


def test_the_report_gives_each_criterions_agreement_between_graders(rubric_graded):
    """A second grader's card on two graded items: each criterion's agreement over them, at its own level."""
    store, pid, _, given = rubric_graded
    first, second = list(given)[:2]
    for position in (first, second):
        answers = {**given[position], "correct": "Incorrect" if position == first else given[position]["correct"]}
        card = store.project(pid).settings.rubric.card_values(answers)
        reservations.record_card(store, pid, position, card, "bob", rubric=True)
    files = ProjectFiles.of(store, store.project(pid))
    data = json.loads(report_bytes(files.require_report(), "json"))
    agreed = data["criteria"]["agreement"]
    assert agreed["correct"]["items_graded_twice"] == 2 and agreed["helpful"]["level"] == "ordinal"
    correct_first = given[first]["correct"] == "Incorrect"
    assert agreed["correct"]["same_grade_share"] == (1.0 if correct_first else 0.5)
    assert agreed["helpful"]["same_grade_share"] == 1.0
    markdown = report_bytes(data, "md").decode()
    assert "over 2 items" in markdown
