"""The looks replayed grade by grade (core.stats.stopping.LookReplay, core.services.live_looks), and the queue
closed once the stopping rule says done (core.services.live.rule_says_done in grade_actions.claim)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from core.services import account_writes, auth, grade_actions, live
from core.services.live_looks import live_looks
from core.services.reading import read_project
from core.stats.allocation import design_from_items
from core.stats.estimate import DEFAULT_METHOD
from core.stats.queue import QueueState
from core.stats.simulate import labels_of, replay_queue, replication_orders, synthetic_items
from core.stats.stopping import FLOOR_KAPPA, LookReplay, run_looks
from core.store import accounts

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def pool():
    items = synthetic_items(1500, signal=1.0, seed=5)
    labels = labels_of(items)
    design = design_from_items(items, stratify_by=None, kappa=FLOOR_KAPPA)
    positions = replay_queue(design, labels, replication_orders(labels.size, 0, 6), 600)
    return design, labels, positions


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name), equal_nan=True) for f in dataclasses.fields(a))


def test_a_replay_resumed_in_pieces_is_the_replay_in_one_go(pool):
    design, labels, positions = pool
    whole = run_looks(design, positions, labels[positions], 0.05)
    replay = LookReplay(design, 0.05, positions.shape[0])
    for cut in np.split(np.arange(positions.shape[1]), [7, 10, 11, 150, 151, 400]):
        replay.advance(positions[:, cut], labels[positions[:, cut]])
    assert whole.stopped.any() and _same(replay.batch(), whole)


def test_a_live_replay_resumes_and_starts_again_when_a_grade_changes(pool):
    design, labels, positions = pool
    order, grades = positions[0], labels[positions[0]].copy()
    for n in (5, 40, 41, 300):  # grades appended: resumed
        assert _same(live_looks(design, order[:n], grades[:n], 0.05), run_looks(design, order[:n], grades[:n], 0.05))
    grades[3] = 1 - grades[3]  # a grade changed: replayed from the first grade
    assert _same(
        live_looks(design, order[:300], grades[:300], 0.05), run_looks(design, order[:300], grades[:300], 0.05)
    )
    assert _same(live_looks(design, order[:20], grades[:20], 0.05), run_looks(design, order[:20], grades[:20], 0.05))


def test_the_queue_closes_when_the_looks_say_done(prepared_project):
    store, pid = prepared_project
    store.update_settings(pid, {"regime": "looks", "target_half_width": 0.25})
    ann = account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, ann.id)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    graded = 0
    while (position := grade_actions.claim(store, ann, pid, design)) is not None:
        label = "Correct" if graded % 3 else "Incorrect"
        assert grade_actions.grade(store, ann, pid, position, label, seconds=1.0).status == "saved"
        graded += 1
    reading = live.live_reading(store, pid, design, store.project(pid).settings, DEFAULT_METHOD).reading
    assert reading.done and reading.stop_at == graded < design.N  # closed at the stop, items left ungraded
    state = QueueState(store.graded_positions(pid), frozenset(store.skipped_positions(pid)))
    assert live.rule_says_done(design, store.project(pid).settings, state)
    store.update_settings(pid, {"target_half_width": 0.05})  # a tighter target opens the queue again
    assert grade_actions.claim(store, ann, pid, design) is not None


def test_while_skips_alone_hold_the_stop_the_skipped_items_are_handed_out_first(prepared_project, monkeypatch):
    """ann skips five items, then grades until the looks say done on the grades alone and the skips keep the
    rule open: bob's next card is one of her skipped items, not a fresh one, and ann, who passed them over,
    still gets fresh items."""
    store, pid = prepared_project
    store.update_settings(pid, {"regime": "looks", "target_half_width": 0.25})
    graders = {}
    for name in ("ann", "bob"):
        graders[name] = account_writes.create_account(store, name, auth.GRADER, password=PASSWORD)
        accounts.assign(store, pid, graders[name].id)
    ann, bob = graders["ann"], graders["bob"]
    design = design_from_items(store.load_items(pid), stratify_by=None)
    skipped = set()
    for _ in range(5):
        position = grade_actions.claim(store, ann, pid, design)
        grade_actions.skip(store, ann, pid, position, seconds=1.0)
        skipped.add(position)
    settings = store.project(pid).settings
    steps = functools.partial(store.skip_steps, pid)

    def held() -> bool:  # as the queue asks: the rule not done, then held
        state = QueueState(store.graded_positions(pid), frozenset(store.skipped_positions(pid)))
        return not live.rule_says_done(design, settings, state, steps) and live.rule_held(design, settings, state)

    assert live.card_words(store, pid, design, settings) is None  # the looks have not said done yet
    k = 0
    while not held():
        position = grade_actions.claim(store, ann, pid, design)
        assert position is not None and position not in skipped  # hers are behind the fresh ones until then
        grade_actions.grade(store, ann, pid, position, "Correct" if k % 3 else "Incorrect", seconds=1.0)
        k += 1
    reads = []
    monkeypatch.setattr(live, "read_project", lambda *a, **k: reads.append(1) or read_project(*a, **k))
    assert grade_actions.claim(store, bob, pid, design) in skipped  # what the rule waits for, first
    assert len(reads) == 1  # the reading with the skips, once: "held" reads only the looks
    assert grade_actions.claim(store, ann, pid, design) not in skipped  # not back to the one who passed them
    # and the card says so: the rule waits on the skipped items alone (a manager's review graded on, untold)
    words = live.card_words(store, pid, design, settings)
    assert words.startswith("The stopping rule now waits only on 5 skipped items: once they are graded")


def test_an_anytime_project_is_never_closed_by_the_rule(pool):
    design, labels, positions = pool
    graded = dict(zip(positions[0].tolist(), labels[positions[0]].tolist(), strict=True))
    settings = {"regime": "anytime", "target_half_width": 0.5}
    assert not live.rule_says_done(design, settings, QueueState(graded))
    assert live.rule_says_done(design, {**settings, "regime": "looks"}, QueueState(graded))


def test_the_grader_is_told_why_the_queue_closed(prepared_project):
    store, pid = prepared_project
    design = design_from_items(store.load_items(pid), stratify_by=None)
    settings = store.project(pid).settings.with_changes({"regime": "looks", "target_half_width": 0.45})
    assert live.closed_words(store, pid, design, settings) is None  # no grade yet
    ann = account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, ann.id)
    store.update_settings(pid, {"regime": "looks", "target_half_width": 0.45})
    while (position := grade_actions.claim(store, ann, pid, design)) is not None:
        grade_actions.grade(store, ann, pid, position, "Correct", seconds=1.0)
    words = live.closed_words(store, pid, design, store.project(pid).settings)
    assert words is not None and "Grading is done" in words and "±0.450" in words
    # beside a card held across the stop, the Grade page says so too (a manager's review learnt it only after
    # grading the card): the grade is kept, and changes nothing
    held = live.card_words(store, pid, design, store.project(pid).settings)
    assert held.startswith(words) and held.endswith("This card's grade, if you give it, is kept.")
    store.update_settings(pid, {"target_half_width": 0.1})  # tighter: grading goes on, then widened back
    k = 0
    while (position := grade_actions.claim(store, ann, pid, design)) is not None:
        grade_actions.grade(store, ann, pid, position, "Correct" if k % 3 else "Incorrect", seconds=1.0)
        k += 1
    graded = len(store.graded_positions(pid))
    store.update_settings(pid, {"target_half_width": 0.45})  # the stop at ±0.45 came long before these grades
    stop = live.live_reading(store, pid, design, store.project(pid).settings, DEFAULT_METHOD).reading.stop_at
    words = live.closed_words(store, pid, design, store.project(pid).settings)
    assert stop < graded and f"after {stop:,} grades" in words  # the stop's count, as the dashboard says


def test_the_api_says_why_there_is_no_next_item(prepared_project):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from core import api
    from core.services import team, tokens

    store, pid = prepared_project
    store.update_settings(pid, {"regime": "looks", "target_half_width": 0.45, "min_view_s": 0})
    team.create_account(store, auth.OPERATOR, "ann", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    headers = {"Authorization": f"Bearer {tokens.create(store, auth.OPERATOR, 'ann', 'tests')[1]}"}
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    path = f"{api.PREFIX}/projects/{pid}"
    while (card := client.get(path + "/next", headers=headers).json())["item"] is not None:
        body = {"item_id": card["item"]["item_id"], "token": card["item"]["token"], "label": "Correct"}
        assert client.post(path + "/grades", headers=headers, json=body).status_code == 200
    assert card["reason"].startswith("Grading is done") and len(store.grades(pid)) < len(store.load_items(pid))


def test_a_comparison_is_not_closed_by_the_one_target_rule(pool):
    design, labels, positions = pool
    graded = dict(zip(positions[0].tolist(), labels[positions[0]].tolist(), strict=True))
    settings = {"regime": "looks", "target_half_width": 0.5, "targets": ["a", "b"], "compare_mode": "side-by-side"}
    assert not live.rule_says_done(design, settings, QueueState(graded))
