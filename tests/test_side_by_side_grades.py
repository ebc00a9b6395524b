"""A comparison project's settings and its side-by-side card: each side's grade stored with the target whose
response was on that side, the side recorded, the whole card in one transaction or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.services import account_writes, auth, grade_actions, reservations
from core.services.side_by_side import card_order, order_of
from core.settings import ProjectSettings
from core.stats.allocation import design_from_items
from core.store import accounts

TARGETS = ["alpha", "beta"]


@pytest.mark.parametrize(
    "targets", [["alpha"], ["beta", "alpha"], ["alpha", "alpha"], ["alpha", " beta"], "alpha,beta", ["alpha", 3]]
)
def test_targets_must_be_two_or_more_distinct_sorted_names(targets):
    with pytest.raises(InputError, match="setting targets"):
        ProjectSettings(targets=targets)


def test_a_comparison_is_decided_by_its_targets_and_its_mode_is_checked():
    assert not ProjectSettings().compares and ProjectSettings(targets=TARGETS).compares
    assert ProjectSettings.from_dict(ProjectSettings(targets=TARGETS).to_dict()).targets == TARGETS
    with pytest.raises(InputError, match="setting compare_mode"):
        ProjectSettings(targets=TARGETS, compare_mode="ranked")
    with pytest.raises(InputError, match="simulated only"):
        ProjectSettings(targets=TARGETS, compare_mode="pairwise")


@pytest.fixture
def card_world(prepared_project):
    store, pid = prepared_project
    store.update_settings(pid, {"targets": TARGETS, "compare_mode": "side-by-side", "seed": 7})
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    return store, pid, ann, design


def test_each_sides_grade_is_stored_on_the_target_shown_there(card_world):
    store, pid, ann, design = card_world
    orders = set()
    for _ in range(6):
        held = reservations.claim(store, pid, design, 7, "ann")
        order = card_order(7, held, TARGETS)
        orders.add(order)
        outcome = grade_actions.grade_card(store, ann, pid, held, ["Correct", "Incorrect"], seconds=1.0)
        assert outcome.status == "saved"
        mine = store.target_grades(pid).query("position == @held").sort_values("side")
        assert mine[["target", "side", "label"]].values.tolist() == [
            [order[0], 0, "Correct"],
            [order[1], 1, "Incorrect"],
        ]
    assert len(orders) == 2  # both orders were drawn, so the mapping was tested both ways


def test_a_changed_card_replaces_both_grades_and_a_bad_card_stores_nothing(card_world):
    store, pid, ann, design = card_world
    held = reservations.claim(store, pid, design, 7, "ann")
    grade_actions.grade_card(store, ann, pid, held, ["Correct", "Correct"], seconds=1.0)
    again = grade_actions.grade_card(store, ann, pid, held, ["Incorrect", "Correct"], seconds=1.0)
    assert again.status == "changed"
    grades = store.target_grades(pid)
    assert len(grades) == 2 and sorted(grades["label"]) == ["Correct", "Incorrect"]
    for labels in (["Correct"], ["Correct", "Maybe"]):
        with pytest.raises(grade_actions.Refused):
            grade_actions.grade_card(store, ann, pid, held, labels, seconds=1.0)
    assert store.target_grades(pid)["label"].tolist() == grades["label"].tolist()


def test_a_one_model_project_refuses_a_card(prepared_project):
    store, pid = prepared_project
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    with pytest.raises(grade_actions.Refused, match="side by side"):
        grade_actions.grade_card(store, ann, pid, 0, ["Correct", "Correct"], seconds=1.0)
    assert store.grades(pid).empty


def test_a_comparison_project_is_prepared_with_every_targets_response_and_graded_side_by_side(tmp_path):
    from core.inputs.targets import response_column
    from core.services.project import create_project, start_preparation
    from core.store import Store
    from tests.test_compare import long_pool, write_jsonl

    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(20)))
    store = Store.open(f"sqlite:///{tmp_path / 'c.db'}")
    pid = create_project(store, "C", ("pool.jsonl", pool.read_bytes()), start=False)
    settings = store.project(pid).settings
    assert settings.targets == TARGETS and settings.compares
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready"
    items = store.load_items(pid)
    assert len(items) == 20 and "response" not in items.columns
    rows = {r["id"]: r for r in long_pool(20)}
    for model in TARGETS:
        first = items.iloc[0]
        assert first[response_column(model)] == next(
            r["response"] for r in long_pool(20) if r["id"] == first["id"] and r["model"] == model
        )
    assert set(rows) == set(items["id"])
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    design = design_from_items(items, stratify_by=None)
    held = reservations.claim(store, pid, design, settings.seed, "ann")
    grade_actions.grade_card(store, ann, pid, held, ["Correct", "Incorrect"], seconds=1.0)
    order = order_of(settings, held)
    assert len(settings.card_key) == 32  # a comparison gets its secret card key when it is created
    stored = store.target_grades(pid).sort_values("side")
    assert stored["target"].tolist() == list(order) and stored["label"].tolist() == ["Correct", "Incorrect"]


def test_the_reading_pairs_each_items_grades_and_counts_wins(card_world):
    from core.services.comparison_reading import comparison_reading, statement

    store, pid, ann, design = card_world
    for n in range(12):
        held = reservations.claim(store, pid, design, 7, "ann")
        order = card_order(7, held, TARGETS)
        alpha_wins = n < 9  # alpha right, beta wrong on 9 items; both right on 3
        labels = [("Correct" if (t == "alpha" or not alpha_wins) else "Incorrect") for t in order]
        grade_actions.grade_card(store, ann, pid, held, labels, seconds=1.0)
    reading = comparison_reading(store, pid, design)
    assert reading.graded_items == 12
    (pair,) = reading.pairs
    assert pair.pair == "alpha - beta" and (pair.wins, pair.ties, pair.losses) == (9, 3, 0)
    assert pair.low <= pair.estimate <= pair.high and reading.models["alpha"][0] > reading.models["beta"][0]
    assert statement(reading).startswith("alpha - beta: ")


def test_a_comparisons_export_names_each_grades_target_and_side(card_world):
    from core.exports.project_export import grades_export

    store, pid, ann, design = card_world
    held = reservations.claim(store, pid, design, 7, "ann")
    grade_actions.grade_card(store, ann, pid, held, ["Correct", "Incorrect"], seconds=1.0)
    table = grades_export(store.target_grades(pid), store.load_items(pid), design)
    assert list(table.columns[:3]) == ["item", "target", "side"]
    assert table.sort_values("side")["target"].tolist() == list(card_order(7, held, TARGETS))
    assert sorted(table["side"]) == ["Response 1", "Response 2"]  # the names the card showed, not 0 and 1
    assert "target" not in grades_export(store.grades(pid), store.load_items(pid), design).columns


def test_a_comparison_refuses_a_grade_without_its_target(card_world):
    store, pid, ann, design = card_world
    held = reservations.claim(store, pid, design, 7, "ann")
    with pytest.raises(grade_actions.Refused, match="side-by-side card"):
        grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    assert store.grades(pid).empty
