"""A project's final grades and skips as the queue reads them on every card, kept per project in this process
and brought up to date by reading only the rows added since the last read.

Grades, reviews and skips are rows that are never deleted (but with their project, and a skip when its grader
undoes it), and a grade or a review is only ever retracted (``retracted_at`` set once), never restored. So after
the rows added since the last read (ids above the highest seen), the counts of the project's rows read after
them say exactly whether anything else changed: the grade rows number those seen plus those added unless a row
with a lower id was committed late (PostgreSQL hands out ids before commit) or the project was deleted, the
retracted grades number those seen retracted unless one seen active was retracted since (a grade changed or
undone), and the skip rows those seen plus those added unless a skip was undone. Either way, and
whenever the reviews' count moved, the rows are read again: all grades and skips, or the reviews. Several
processes sharing one database each keep their own copy, correct by the same counts.

The final grades are core.stats.rater_agreement.final_grades', kept grade by grade (FinalGrades, to the bit);
tests/test_grade_cache.py replays grades, changes, undos, reviews and skips against reading every row.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from sqlalchemy import Connection, bindparam, func, select

from core.stats.rater_agreement import FinalGrades
from core.store.models import Grade, Review, Skip, grading_key

KEEP = 64
"""Projects kept; the least recently read are dropped."""

_PROJECT = Grade.project_id == bindparam("project_id")

_GRADE_ROW = (Grade.id, Grade.position, Grade.value, Grade.criterion, Grade.retracted_at.is_(None))

GRADES_AFTER = select(*_GRADE_ROW).where(_PROJECT, Grade.id > bindparam("after")).order_by(Grade.id)
"""The project's grade rows (id, position, value, criterion, active) with ids above ``after``, in id order: the
grading order of rows added without a change or an undo (core.store.models.grading_key), after which every row
is read again (GRADES). Built once, as the other statements here: a read runs them with its parameters (no
statement built per card)."""

GRADES = select(*_GRADE_ROW).where(_PROJECT).order_by(grading_key(), Grade.id)
"""Every grade row of the project, in grading order (core.store.models.grading_key: a change keeps its item's
place)."""

SKIPS_AFTER = (
    select(Skip.id, Skip.position)
    .where(Skip.project_id == bindparam("project_id"), Skip.id > bindparam("after"))
    .order_by(Skip.id)
)
"""The project's skip rows (id, position) with ids above ``after``, in id order."""

_ONE_MODEL_REVIEWS = (Review.project_id == bindparam("project_id"), Review.target == "")

REVIEWS = (
    select(Review.position, Review.value, Review.criterion, Review.retracted_at.is_(None))
    .where(*_ONE_MODEL_REVIEWS)
    .order_by(Review.id)
)
"""The project's review rows of the one-model key (position, value, criterion, active), in id order."""

COUNTS = select(
    select(func.count()).select_from(Grade).where(_PROJECT).scalar_subquery(),
    select(func.count()).select_from(Grade).where(_PROJECT, Grade.retracted_at.is_not(None)).scalar_subquery(),
    select(func.count()).select_from(Skip).where(Skip.project_id == bindparam("project_id")).scalar_subquery(),
    select(func.count()).select_from(Review).where(*_ONE_MODEL_REVIEWS).scalar_subquery(),
)
"""One row: the project's grade rows, those retracted, its skip rows and its review rows of the one-model key."""


@dataclass
class _Kept:
    """What one project's rows said at the last read: the highest grade and skip ids seen, the counts of grade
    rows (and of those retracted), skip rows and review rows (of the one-model key) seen, the skipped positions,
    the active reviews (criterion -> position -> grade) and each criterion's final grades."""

    last_grade: int = 0
    grades: int = 0
    retracted: int = 0
    last_skip: int = 0
    skips: int = 0
    reviews: int = 0
    skipped: set[int] = field(default_factory=set)
    reviewed: dict[str, dict[int, float]] = field(default_factory=dict)
    finals: dict[str, FinalGrades] = field(default_factory=dict)

    def add_grades(self, rows: Iterable[tuple[int, int, float, str, bool]]) -> None:
        """Grade rows (id, position, value, criterion, active) with ids above every one seen, in grading order."""
        for grade_id, position, value, criterion, active in rows:
            self.last_grade, self.grades = max(self.last_grade, grade_id), self.grades + 1  # GRADES: not by id
            if not active:
                self.retracted += 1
                continue
            finals = self.finals.setdefault(criterion, FinalGrades())
            finals.add(int(position), float(value), self.reviewed.get(criterion, {}))

    def add_skips(self, rows: Iterable[tuple[int, int]]) -> None:
        """Skip rows (id, position) with ids above every one seen, in id order."""
        for skip_id, position in rows:
            self.last_skip, self.skips = skip_id, self.skips + 1
            self.skipped.add(int(position))

    def set_reviews(self, rows: Sequence[tuple[int, float, str, bool]]) -> None:
        """Every review row of the one-model key (position, value, criterion, active), in id order."""
        self.reviews = len(rows)
        self.reviewed = {}
        for position, value, criterion, active in rows:
            if active:
                self.reviewed.setdefault(criterion, {})[int(position)] = float(value)
        for criterion, finals in self.finals.items():
            finals.review(self.reviewed.get(criterion, {}))

    def graded(self, criterion: str) -> dict[int, float]:
        """A copy of one criterion's final grades (position -> grade, in grading order)."""
        finals = self.finals.get(criterion)
        return {} if finals is None else dict(finals.graded)


class GradeCache:
    """The final grades and skips of the projects one Store reads, per project (see the module)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._keep = keep
        self._kept: OrderedDict[int, _Kept] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()

    def read(
        self, connect: Callable[[], AbstractContextManager[Connection]], project_id: int, criteria: Sequence[str]
    ) -> tuple[list[dict[int, float]], set[int]]:
        """Each of ``criteria``'s final grades (position -> grade, in grading order: Store.graded_positions) and
        the positions someone skipped that have no active grade of the first criterion now (at least one), read on
        the connection ``connect`` gives (``engine.connect``, or the Store's for a read)."""
        with self._lock(project_id):
            with self._guard:  # out while it is read: a read that fails leaves none, and the next reads every row
                kept = self._kept.pop(project_id, None)
            with connect() as connection:
                kept = _refreshed(connection, project_id, kept)
            graded = [kept.graded(c) for c in criteria]
            skipped = kept.skipped - graded[0].keys()
            with self._guard:
                self._kept[project_id] = kept
                while len(self._kept) > self._keep:
                    self._kept.popitem(last=False)
        return graded, skipped

    def _lock(self, project_id: int) -> threading.Lock:
        """One lock per project: a project's reads take turns, each other project's go on."""
        with self._guard:
            return self._locks.setdefault(project_id, threading.Lock())


def _refreshed(connection: Connection, project_id: int, kept: _Kept | None) -> _Kept:
    """``kept`` brought up to date with the rows added since, or every row read again (a new ``_Kept``) when
    the counts read after them say something else changed; the reviews read again when their count moved."""
    project = {"project_id": project_id}
    if kept is not None:
        kept.add_grades(connection.execute(GRADES_AFTER, project | {"after": kept.last_grade}))
        kept.add_skips(connection.execute(SKIPS_AFTER, project | {"after": kept.last_skip}))
        grades, retracted, skips, reviews = connection.execute(COUNTS, project).one()
        if (grades, retracted, skips) == (kept.grades, kept.retracted, kept.skips):
            if reviews != kept.reviews:
                kept.set_reviews(connection.execute(REVIEWS, project).all())
            return kept
    fresh = _Kept()
    fresh.set_reviews(connection.execute(REVIEWS, project).all())
    fresh.add_grades(connection.execute(GRADES, project))
    fresh.add_skips(connection.execute(SKIPS_AFTER, project | {"after": 0}))
    return fresh
