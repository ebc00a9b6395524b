"""Review of a comparison, response by response (evaluation lead's review: the page showed no response, one
final grade for the whole item stored with no target, which the per-model reading ignored): an item whose
graders disagree on one model's response is queued; the reviewer sees the responses side by side as graded,
never the models' names, and sets each response's final grade, keyed by its target; each model's score and the
grades export then read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.exports.project_export import ProjectFiles
from core.inputs.targets import response_column
from core.services import auth, reservations, review
from core.services.comparison_reading import comparison_reading
from core.services.outcome import Refused
from core.services.project import create_project, start_preparation
from core.stats.design import prepared_design
from tests.test_compare import long_pool, write_jsonl

MODELS = ("zeta-secret-model", "omega-hidden-model")


@pytest.fixture
def comparison(store, tmp_path):
    """A comparison of two models on 20 items; item 0 graded by ann and bob, who agree on one response and
    differ on the other (on each card in its own order)."""
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(20, models=MODELS)))
    pid = create_project(store, "Two", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    targets = sorted(MODELS)
    cards = {"ann": ("Correct", "Correct"), "bob": ("Correct", "Incorrect")}  # by target, in sorted order
    for grader, labels in cards.items():
        card = [(t, 1.0 if label == "Correct" else 0.0, label) for t, label in zip(targets, labels)]
        reservations.record_card(store, pid, 0, card, grader, seconds=3.0)
    return pid, targets


def test_one_graded_item_gives_no_estimate_and_no_standard_error(store, comparison):
    """After one graded item a pair's estimate was null beside a standard error of 0.465 (an integrator's review)."""
    import math

    import numpy as np

    from core.stats.allocation import make_design

    pid, _ = comparison
    two_strata = make_design(np.repeat([0, 1], 10), np.full(20, 0.5))  # item 0's, and one with no grade yet
    reading = comparison_reading(store, pid, two_strata)
    assert reading.graded_items == 1 and reading.pairs, reading
    assert all(math.isnan(p.estimate) and math.isnan(p.se) for p in reading.pairs), reading.pairs
    assert all(math.isnan(reading.model_se[m]) for m in reading.models if math.isnan(reading.models[m][0]))


def test_a_response_whose_grades_differ_is_settled_on_its_own_target(store, comparison):
    pid, (agreed, differed) = comparison
    assert [(e.position, e.reasons) for e in review.queue(store, auth.OPERATOR, pid)] == [(0, (review.DISAGREEMENT,))]
    shown = review.item(store, auth.OPERATOR, pid, 0)
    assert shown.disagree == (differed,) and sorted(shown.order) == [agreed, differed]
    sides = [f"Response {k + 1}" for k in range(2)]
    table = shown.by_grader(list(shown.order), sides)
    assert list(table.columns) == ["grader", *sides, "comment"] and len(table) == 2
    design = prepared_design(store.load_items(pid))
    before = comparison_reading(store, pid, design).models[differed][0]
    with pytest.raises(Refused, match="compares models"):
        review.settle(store, auth.OPERATOR, pid, 0, "Correct")
    side = sides[shown.order.index(differed)]
    outcome = review.settle_responses(store, auth.OPERATOR, pid, 0, {differed: "Correct", agreed: None})
    assert outcome.message == f"final grades: {side} Correct"  # the side's name: the reviewer is blind too
    assert not any(model in outcome.message for model in MODELS)
    assert review.queue(store, auth.OPERATOR, pid) == []
    reviews = store.active_reviews(pid)
    assert reviews[["position", "target", "criterion", "value"]].values.tolist() == [[0, differed, "", 1.0]]
    after = comparison_reading(store, pid, design).models[differed][0]
    assert after > before  # the final grade 1 replaced the graders' mean 0.5
    table = ProjectFiles.of(store, store.project(pid)).table
    mine = table[table["target"] == differed]
    assert mine["final_grade"].tolist() == [1.0, 1.0] and mine["reviewed"].all()
    assert not table.loc[table["target"] == agreed, "reviewed"].any()


def test_the_review_page_shows_the_responses_by_side_and_sets_each_ones_final_grade(store, comparison, open_app):
    pid, (_, differed) = comparison
    at = open_app("app_pages/review.py", project_id=pid, grader="rita")
    shown = review.item(store, auth.OPERATOR, pid, 0)
    item = store.item(pid, 0)
    texts = [e.proto.body for e in at.get("html")]
    for target in shown.order:
        assert any(str(item[response_column(target)]) in body for body in texts)
    page = "\n".join(texts + [m.value for m in at.markdown] + [r.label for r in at.radio])
    assert not any(model in page for model in MODELS)
    side = shown.order.index(differed)
    labels = [r.label for r in at.radio]
    assert labels[side] == f"Response {side + 1} (grades disagree)" and len(labels) == 2
    at.radio(key=f"review_label_0_{side}").set_value("Incorrect")
    next(b for b in at.button if b.label == "Set the final grades").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert store.active_reviews(pid)[["target", "value"]].values.tolist() == [[differed, 0.0]]


def test_the_records_page_reads_one_model_at_a_time_and_shows_every_response(store, comparison, open_app):
    pid, (agreed, differed) = comparison
    at = open_app("app_pages/records.py", project_id=pid)
    choice = at.selectbox(key="records_target")
    assert choice.options == sorted(MODELS) and choice.value == agreed
    at.selectbox(key="records_graded").select("yes").run()
    [rows] = [d.value for d in at.dataframe if "graders" in d.value.columns]
    assert rows[["position", "graders"]].values.tolist() == [[0, "ann: Correct, bob: Correct"]]
    at.selectbox(key="records_target").select(differed).run()
    [rows] = [d.value for d in at.dataframe if "graders" in d.value.columns]
    assert rows[["position", "graders"]].values.tolist() == [[0, "ann: Correct, bob: Incorrect"]]
    item = store.item(pid, 0)
    texts = [e.proto.body for e in at.get("html")]
    assert all(any(str(item[response_column(m)]) in body for body in texts) for m in MODELS)


def test_a_comparisons_records_search_and_show_the_chosen_models_response(store, comparison):
    """The search never found a model's response and the response column was empty: a comparison's items hold
    one response per model (a manager's review)."""
    from core.store import records

    pid, targets = comparison
    item = store.item(pid, 3)
    for model in targets:
        said = str(item[response_column(model)])
        found = records.page(store, pid, records.RecordFilter(target=model, search=said[-12:]))
        assert 3 in found.rows["position"].tolist()
        assert found.rows.set_index("position").at[3, "response"] == said[: records.RECORD_TEXT_CHARS]
        exported = list(records.export_rows(store, pid, records.RecordFilter(target=model)))
        assert exported[3]["response"] == said


def test_a_reviewer_gets_no_records_of_a_comparison_which_would_name_its_models(store, comparison):
    """The Review page keeps a reviewer blind to the models; the Records page named every grade's model and
    offered a filter by model (evaluation lead's second review), so a comparison's records are the managers'."""
    from core.services import account_writes, browser
    from core.services.browser import RecordFilter
    from core.store import accounts

    pid, _ = comparison
    rita = account_writes.create_account(store, "rita", auth.REVIEWER, password="correct horse battery")
    accounts.assign(store, pid, rita.id)
    for read in (
        lambda: browser.check(store, rita, pid),
        lambda: browser.page(store, rita, pid, RecordFilter()),
        lambda: browser.record(store, rita, pid, 0),
        lambda: browser.export_csv(store, rita, pid, RecordFilter()),
    ):
        with pytest.raises(Refused, match="blind"):
            read()
    assert review.item(store, rita, pid, 0).order  # the Review page is hers
    assert browser.check(store, auth.OPERATOR, pid) is auth.OPERATOR
