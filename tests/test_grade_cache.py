"""The store's kept grades (core.store.grade_cache, Store.grading_state) against reading every row again: the
same final grades in the same order, the same skips, and the queue handing out the same items, through grades,
double grades, changes, undos, reviews, skips, rubric cards and a second process writing to the same database."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterator, Sequence

import pytest
from sqlalchemy import select

from core.api import cards
from core.rubric import ALL
from core.scales import BINARY
from core.services import live, reservations
from core.services.grading import queue_state, ungraded
from core.services.project import create_project, start_preparation
from core.stats.rater_agreement import FinalGrades, final_grades
from core.store import Store, grade_cache, reviews
from core.store.models import Grade, Skip
from tests.pg_schema import throwaway_schema_url

GRADERS = ("ann", "bob", "cy")
N_ITEMS = 600
STEPS = 250


def pool_files(n_items: int = N_ITEMS) -> list[tuple[str, bytes]]:
    """A pool of ``n_items`` sums with surrogate samples that agree on most items (as tests/data/app's)."""
    rng = random.Random(5)
    pool, samples = [], []
    for i in range(n_items):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        answer = a + b if rng.random() < 0.7 else a + b + 1
        pool.append({"id": f"q{i:04d}", "prompt": f"What is {a} + {b}?", "response": f"**{answer}**", "answer": answer})
        samples += [{"id": f"q{i:04d}", "sample": str(answer if rng.random() < 0.8 else answer - 1)} for _ in range(4)]
    lines = [("\n".join(json.dumps(row) for row in rows) + "\n").encode() for rows in (pool, samples)]
    return [("pool.jsonl", lines[0]), ("samples.jsonl", lines[1])]


class Rereading(Store):
    """A Store that reads every grade, review and skip again on each read, as before the kept grades (the
    reference: final_grades of the active grades in grading order, with the reviewed grades)."""

    def grading_state(self, project_id: int, criteria: Sequence[str]) -> tuple[list[dict[int, float]], set[int]]:
        graded = []
        for criterion in criteria:
            grades = self.grades(project_id, criterion=criterion)
            graded.append(
                final_grades(grades["position"], grades["value"], self.reviewed_grades(project_id, criterion))
            )
        with self.session() as session:
            skipped = set(session.scalars(select(Skip.position).where(Skip.project_id == project_id).distinct()))
        return graded, skipped - graded[0].keys()


def ordered(state: tuple[list[dict[int, float]], set[int]]) -> tuple[list[list[tuple[int, float]]], set[int]]:
    """A grading state with each criterion's grades as a list: the order and the bits compared too."""
    graded, skipped = state
    return [list(g.items()) for g in graded], skipped


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'kept.db'}"
        return
    with throwaway_schema_url() as url:
        yield url


def two_projects(url: str, settings: dict) -> tuple[Store, Rereading, int, int]:
    """The same pool and settings prepared twice in one database: (a Store, a Rereading Store, their ids)."""
    store = Store.open(url)
    files = pool_files()
    ids = [create_project(store, name, *files, settings, start=False) for name in ("kept", "reread")]
    for pid in ids:
        start_preparation(store, pid, wait=True)
    return store, Rereading.open(url), *ids


def test_final_grades_kept_grade_by_grade_are_final_grades_to_the_bit():
    rng = random.Random(3)
    positions = [rng.randrange(50) for _ in range(400)]
    values = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 1 / 3, 2 / 3]) for _ in positions]
    reviewed = {p: rng.random() for p in rng.sample(range(60), 10)}
    kept = FinalGrades()
    for position, value in zip(positions, values):
        kept.add(position, value, {})
    kept.review(reviewed)
    assert list(kept.graded.items()) == list(final_grades(positions, values, reviewed).items())
    kept.add(7, 0.3, reviewed)
    assert list(kept.graded.items()) == list(final_grades([*positions, 7], [*values, 0.3], reviewed).items())


def test_the_queue_hands_out_the_same_items_as_rereading_every_grade(url):
    """Many claims, grades, double grades, skips, changes, undos (of grades and of skips) and reviews, on two identical projects: one read
    through the kept grades, one rereading everything. Every claim hands out the same item, and after every
    step the kept grading state is the reread one (grades, their order and bits, skips)."""
    store, rereading, kept_id, reread_id = two_projects(url, {"overlap": 0.2, "min_view_s": 0})
    project = store.project(kept_id)
    _, design = cards.design(store, project)
    closed = functools.partial(live.rule_says_done, design, project.settings)
    rng = random.Random(11)
    handed = 0
    for _ in range(STEPS):
        grader, roll = rng.choice(GRADERS), rng.random()
        claims = [
            reservations.claim(s, pid, design, 0, grader, overlap=0.2, closed=closed)
            for s, pid in ((store, kept_id), (rereading, reread_id))
        ]
        assert claims[0] == claims[1]
        position = claims[0]
        for s, pid in ((store, kept_id), (rereading, reread_id)):
            if position is not None and roll < 0.8:
                reservations.record_grade(s, pid, position, BINARY, "Correct" if roll < 0.5 else "Incorrect", grader)
            elif position is not None and roll < 0.9:
                reservations.skip(s, pid, position, grader)
            elif roll < 0.94 and s.grader_positions(pid, grader):  # a change of the grader's first grade
                reservations.submit(s, pid, s.grader_positions(pid, grader)[0], BINARY, "Incorrect", grader)
            elif roll < 0.95:
                s.retract_last_grade(pid, grader)
            elif roll < 0.97 and s.last_skip_since_grade(pid, grader) is not None:
                s.undo_skip(pid, s.last_skip_since_grade(pid, grader), grader)
            elif s.grader_positions(pid, grader):
                reviews.add_review(s, pid, s.grader_positions(pid, grader)[-1], value=0.5, label="Half", reviewer="rev")
        handed += position is not None
        assert ordered(store.grading_state(kept_id, [""])) == ordered(rereading.grading_state(kept_id, [""]))
    assert handed > STEPS // 2 and len(store.graded_positions(kept_id)) > 100
    assert ordered(store.grading_state(kept_id, [""])) == ordered(rereading.grading_state(reread_id, [""]))
    assert queue_state(store, kept_id) == queue_state(rereading, reread_id)


def test_grades_written_by_another_process_are_read(url):
    """Two Stores on one database, as two app processes: each reads what the other wrote (a grade, a change,
    an undo, a review, a skip, an undone skip) once it is stored, and the same as a Store that rereads everything."""
    store, rereading, pid, _ = two_projects(url, {})
    other = Store.open(url)
    writes = [
        lambda s: s.add_grade(pid, 3, value=1.0, label="Correct", grader="ann"),
        lambda s: s.add_grade(pid, 5, value=0.0, label="Incorrect", grader="bob"),
        lambda s: s.add_grade(pid, 3, value=0.0, label="Incorrect", grader="ann"),  # a change
        lambda s: s.add_grade(pid, 5, value=1.0, label="Correct", grader="cy"),  # a second grade
        lambda s: s.add_skip(pid, 8, "bob"),
        lambda s: s.retract_last_grade(pid, "ann"),
        lambda s: reviews.add_review(s, pid, 5, value=0.25, label="Quarter", reviewer="rev"),
        lambda s: s.add_grade(pid, 8, value=1.0, label="Correct", grader="ann"),
        lambda s: s.add_skip(pid, 9, "cy"),
        lambda s: s.add_skip(pid, 10, "ann"),
        lambda s: s.undo_skip(pid, 10, "ann"),  # a skip row deleted: the count falls, and all is read again
    ]
    for step, write in enumerate(writes):
        write(other if step % 2 else store)
        reread = ordered(rereading.grading_state(pid, [""]))
        assert ordered(store.grading_state(pid, [""])) == reread == ordered(other.grading_state(pid, [""]))
    # ann's undo took back her change of item 3: her first grade of it stands again
    assert store.graded_positions(pid) == {3: 1.0, 5: 0.25, 8: 1.0} and store.skipped_positions(pid) == {9}


def test_a_rubric_cards_criteria_are_kept_each_apart(url):
    """A rubric that allocates for all its criteria: each criterion's grades kept apart, a card changed without
    an optional criterion retracting its grade, the same as rereading."""
    criteria = [
        {"name": "correct", "scale": {"kind": "binary"}},
        {"name": "tone", "scale": {"kind": "likert"}, "required": False},
    ]
    store, rereading, pid, _ = two_projects(url, {"criteria": criteria, "allocate_for": ALL})
    names = ["correct", "tone"]
    cards_written = [
        (0, [("correct", 1.0, "Correct"), ("tone", 0.75, "4")], "ann"),
        (1, [("correct", 0.0, "Incorrect")], "ann"),
        (0, [("correct", 1.0, "Correct"), ("tone", 0.25, "2")], "bob"),
        (0, [("correct", 0.0, "Incorrect")], "ann"),  # the card changed: ann's tone of item 0 retracted
    ]
    for position, card, grader in cards_written:
        store.add_rubric_grades(pid, position, card, grader=grader)
        assert ordered(store.grading_state(pid, names)) == ordered(rereading.grading_state(pid, names))
    assert store.grading_state(pid, names)[0] == [{0: 0.5, 1: 0.0}, {0: 0.25}]
    assert queue_state(store, pid).criteria == ({0: 0.25},)


@pytest.mark.postgres
def test_a_grade_committed_after_a_later_one_is_read_once_committed():
    """PostgreSQL hands out a grade's id before its commit: a grade with a lower id than one already read, committed
    later, is read all the same (the counts say a row is missing), in its place in grading order."""
    with throwaway_schema_url() as url:
        store = Store.open(url)
        pid = store.create_project("late", {}, {})
        with store.session() as late:
            late.begin()
            late.add(Grade(project_id=pid, position=1, value=1.0, label="Correct", grader="bob"))
            late.flush()  # its id is taken, not committed
            store.add_grade(pid, 2, value=0.0, label="Incorrect", grader="ann")
            assert store.graded_positions(pid) == {2: 0.0}
            late.commit()
        assert list(store.graded_positions(pid).items()) == [(1, 1.0), (2, 0.0)]
        store.engine.dispose()


def test_the_rows_added_since_and_the_retracted_rows_are_read_by_their_indexes(tmp_path):
    """The rows above the highest id seen are found by the (project, id) indexes (revision 0016): without them
    SQLite read every grade of the project and sorted them, on every batch of claims (0.55 ms at 6,000 grades);
    and the retracted grades are still counted on their partial index, not on every grade row."""
    store = Store.open(f"sqlite:///{tmp_path / 'plan.db'}")
    with store.engine.connect() as c:
        for statement in (grade_cache.GRADES_AFTER, grade_cache.SKIPS_AFTER):
            plan = _plan(c, statement, (1, 0))
            assert "(project_id=? AND id>?)" in plan and "TEMP B-TREE" not in plan, plan
        assert "INDEX ix_grades_retracted" in _plan(c, grade_cache.COUNTS, (1, 1, 1, 1, ""))


def _plan(connection, statement, parameters: tuple) -> str:
    """SQLite's query plan of ``statement``, its lines joined."""
    rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement.compile(connection)}", parameters).all()
    return " ".join(str(row[-1]) for row in rows)


def test_the_held_positions_without_a_grade_are_the_difference_with_the_grades():
    """grading.ungraded (the reserved set of the queue's state, walking the held positions, not every grade) is
    the set difference it replaces, wherever the held positions fall."""
    rng = random.Random(7)
    for _ in range(200):
        graded = {p: rng.random() for p in rng.sample(range(300), rng.randrange(0, 200))}
        held = set(rng.sample(range(300), rng.randrange(0, 40)))
        assert ungraded(held, graded) == frozenset(held) - graded.keys()
