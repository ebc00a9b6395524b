"""A project read from the store now, for the pages that follow grading live (dashboard, presenter view, setup
headline): its grades, the estimate, the skips' bound, the anytime interval and the reading of them
(core.services.reading.read_project), assembled here once so that each page renders it.

The anytime interval may be the caller's (``anytime``: graded items -> interval), since the app computes it
once per set of grades and keeps it (ui/plan.py); everything else is read and decided here.

The grades read are the design criterion's (core.settings.ProjectSettings.design_criterion: the rubric's
primary criterion, the only one in a one-question project), the criterion the stopping rule and the forecast
read; a rubric's every criterion is read by core.services.criteria_reading.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.services.grading import queue_state
from core.services.live_looks import live_looks
from core.services.progress import counted
from core.services.reading import Reading, read_project
from core.services.tracking import current_estimate
from core.settings import ProjectSettings, SettingsLike
from core.stats.allocation import Design
from core.stats.confseq import AnytimeInterval, anytime_interval
from core.stats.estimate import DEFAULT_METHOD, METHODS, Estimate
from core.stats.queue import QueueState
from core.stats.rater_agreement import Agreement, agreement
from core.stats.skips import SkipBound, skip_bound
from core.stats.stopping import LOOKS, LookBatch
from core.store import Store, accounts
from core.store.models import aware, utcnow

ESTIMATORS = ("default", *METHODS)
"""The estimators a page offers: "default" (DEFAULT_METHOD) and every named one (core.stats.estimate)."""


def estimator_name(method: str) -> str:
    """An estimator as a picker shows it: "default (stratified)", so that "default" and "stratified" do not read
    as two estimators."""
    return f"default ({DEFAULT_METHOD})" if method == "default" else method


__all__ = [
    "DEFAULT_METHOD",
    "ESTIMATORS",
    "Live",
    "estimator_name",
    "agreement_of",
    "anytime_now",
    "closed_words",
    "live_reading",
    "rule_says_done",
]

Anytime = Callable[[Mapping[int, float]], AnytimeInterval]


@dataclass(frozen=True)
class Live:
    """``graded``: position -> grade (an item graded twice: the mean), in grading order; ``estimate`` with
    ``method``; ``skips``: the bound of the items skipped and not graded; ``anytime``: the confidence sequence
    (None before any grade); ``reading``: all of it read once; ``skip_steps``: every item skipped (graded since
    or not) -> the grades given before its skip (Store.skip_steps)."""

    graded: dict[int, float]
    estimate: Estimate
    skips: SkipBound
    anytime: AnytimeInterval | None
    reading: Reading
    skip_steps: Mapping[int, int] = field(default_factory=dict)


def live_reading(
    store: Store,
    project_id: int,
    design: Design,
    settings: SettingsLike,
    method: str,
    anytime: Anytime | None = None,
    graded: Mapping[int, float] | None = None,
) -> Live:
    """The project's grades now (or ``graded``, e.g. none for the forecast before any grade) and their reading
    with the ``method`` estimator. ``anytime``: the caller's cached anytime interval of a set of grades; None
    computes it here (tuned for the planned budget n0), as a script or the HTTP API does."""
    graded = store.graded_positions(project_id) if graded is None else dict(graded)
    estimate = current_estimate(design, graded, method)
    skips = skip_bound(design, graded, graded.values(), store.skipped_positions(project_id))
    sequence = anytime_now(design, settings, graded, anytime)
    steps = store.skip_steps(project_id)
    others = bool(skips.skipped) and store.others_grade(project_id)
    reading = read_project(design, settings, graded, estimate, sequence, skips=skips, skip_steps=steps, others=others)
    return Live(graded, estimate, skips, sequence, reading, steps)


def anytime_now(
    design: Design, settings: SettingsLike, graded: Mapping[int, float], anytime: Anytime | None = None
) -> AnytimeInterval | None:
    """The anytime interval of ``graded`` (None without a grade): ``anytime``'s, the caller's cached one, or
    computed here, tuned for the project's n0 (core.settings.ProjectSettings.anytime_n0)."""
    if not graded:
        return None
    if anytime is not None:
        return anytime(graded)
    n0 = ProjectSettings.from_dict(settings).anytime_n0(design)
    return anytime_interval(design, list(graded), list(graded.values()), n0)


def rule_says_done(
    design: Design,
    settings: SettingsLike,
    state: QueueState,
    skip_steps: Callable[[], Mapping[int, int]] | None = None,
) -> bool:
    """Whether the project's stopping rule has said done on the grades of ``state`` (the reading's ``done``), so
    that the queue hands out no new item (core.services.reservations.claim): `rule_stop` is not None."""
    return rule_stop(design, settings, state, skip_steps) is not None


def rule_stop(
    design: Design,
    settings: SettingsLike,
    state: QueueState,
    skip_steps: Callable[[], Mapping[int, int]] | None = None,
) -> int | None:
    """The grades at which the project's stopping rule said done on the grades of ``state`` (the reading's
    ``stop_at``), None while it has not.

    Only a one-target project in the ``looks`` regime closes the queue this way (a comparison's rule reads the
    differences between targets, core.services.comparison_reading, which this does not replay): its replay is
    resumed grade by grade (core.services.live_looks), so asking costs one step per grade; the reading itself,
    with the skips as they stood at each grade (``skip_steps``, called only then: Store.skip_steps; without
    it, the skips standing now), is computed only once the looks have said done and some item was skipped. A
    ``fixed`` project's queue closes at its budget (``ProjectSettings.budget``); an ``anytime`` project's stays
    open, since its manager may stop at any grade and its interval costs a pass over every grade.
    """
    said = _looks_said_done(design, settings, state)
    if said is None:
        return None
    typed, looks = said
    steps = None if skip_steps is None else dict(skip_steps())
    if not state.skipped and not steps:
        return int(looks.n[0])
    graded = dict(state.graded)
    estimate = current_estimate(design, graded, DEFAULT_METHOD)
    skips = skip_bound(design, graded, graded.values(), state.skipped)
    return read_project(design, typed, graded, estimate, skips=skips, skip_steps=steps).stop_at


def rule_held(design: Design, settings: SettingsLike, state: QueueState) -> bool:
    """Whether the stopping rule waits for the skipped items alone, asked where it has not said done
    (`rule_says_done` False: the queue asks that first, core.services.reservations): the looks have said done
    on the grades of ``state`` and some item is skipped, so the skips keep the rule open, and the queue hands
    the skipped items out first. It reads no more than the looks (resumed, core.services.live_looks): the
    reading with the skips is `rule_says_done`'s, read once per batch of claims."""
    return bool(state.skipped) and _looks_said_done(design, settings, state) is not None


def closed_words(store: Store, project_id: int, design: Design, settings: SettingsLike) -> str | None:
    """Why the queue hands a grader nothing, when the stopping rule closed it (`rule_stop`) or a budget fixed in
    advance is graded (a comparison's stopping rule too), for the Grade page and the API's ``next``; None when
    neither holds."""
    typed = ProjectSettings.from_dict(settings)
    budget = typed.budget(design.N) if typed.budget_fixed else None
    state = queue_state(store, project_id, settings=typed)
    if budget is not None and len(state.graded) >= budget:
        return f"The budget fixed in advance is graded: {budget:,} items, read once at that size."
    stop = rule_stop(design, settings, state, functools.partial(store.skip_steps, project_id))
    return None if stop is None else _done_words(settings, stop)


@dataclass(frozen=True)
class NothingLeft:
    """Why the queue hands a grader no item (`nothing_left`): ``reason`` in words; ``done``: grading is over for
    everyone (the rule said done, the budget fixed in advance is graded, or every item is graded); ``retry_after_s``:
    where other graders hold the items left, the seconds until the first of their holds lapses (None otherwise)."""

    reason: str
    done: bool
    retry_after_s: float | None = None


def nothing_left(store: Store, project_id: int, design: Design, settings: SettingsLike, grader: str) -> NothingLeft:
    """Why ``grader`` got no item, as the API's ``next`` says it to a script: a bot that stopped at the first empty
    answer quit while others still held the last items of a budget, which then lapsed back to the queue with no
    one to grade them (an integrator's review); told whether grading is over, and when to ask again, it waits."""
    if (closed := closed_words(store, project_id, design, settings)) is not None:
        return NothingLeft(closed, True)
    others = [h for h in accounts.live(store, project_id) if h.grader != grader]
    if others:
        wait = max(1.0, min((aware(h.expires_at) - utcnow()).total_seconds() for h in others))
        return NothingLeft(
            f"nothing is left for you to grade now: other graders hold the {counted(len(others), 'item')} left; a "
            f"hold lapses unless its grader grades the item, the first in {wait:.0f} s: ask again then",
            False,
            wait,
        )
    if len(store.graded_positions(project_id)) >= design.N:
        return NothingLeft("every item is graded", True)
    return NothingLeft(
        "nothing is left for you to grade: the items left wait for another grader (ones you skipped, or a second "
        "grade of an item you graded)",
        False,
    )


def _done_words(settings: SettingsLike, stop: int) -> str:
    typed = ProjectSettings.from_dict(settings)
    return (  # the stop, not the grades since (a target widened later, cards held when it came)
        f"Grading is done: the stopping rule reached the target ±{typed.target_half_width:.3f} after {stop:,} "
        "grades, and more grades would change nothing it reports. A manager can set a tighter target to go on."
    )


def card_words(store: Store, project_id: int, design: Design, settings: SettingsLike) -> str | None:
    """What the Grade page tells a grader beside a card they hold: that grading is done, where the rule said
    so while they held it (their grade is kept, and changes nothing it reports: a manager's review held a card
    across the stop and learnt of it only after grading it); or that the rule waits on the skipped items alone
    (`rule_held`): grading them ends it, new items add little (a manager's review graded three new items after
    the dashboard said the skips held the stop, the card saying nothing); None otherwise."""
    state = queue_state(store, project_id, settings=ProjectSettings.from_dict(settings))  # the caller's settings
    stop = rule_stop(design, settings, state, functools.partial(store.skip_steps, project_id))
    if stop is not None:
        return _done_words(settings, stop) + " This card's grade, if you give it, is kept."
    if not rule_held(design, settings, state):
        return None
    count = len(state.skipped)
    them = "it is" if count == 1 else "they are"
    return (
        f"The stopping rule now waits only on {counted(count, 'skipped item')}: once {them} graded, by another "
        "grader or by whoever skipped them (My graded and skipped items), grading is done. New items add little."
    )


def _looks_said_done(
    design: Design, settings: SettingsLike, state: QueueState
) -> tuple[ProjectSettings, LookBatch] | None:
    """The settings and the looks' replay on the grades of ``state`` where the looks have said done; None where
    they have not, or where the rule closes no queue this way (`rule_stop`: a one-target ``looks`` project)."""
    typed = ProjectSettings.from_dict(settings)
    if typed.stopping != LOOKS or typed.compares or not state.graded:
        return None
    looks = _looks(design, typed, state)
    return (typed, looks) if looks.stopped[0] else None


def _looks(design: Design, settings: ProjectSettings, state: QueueState) -> LookBatch:
    """The looks regime replayed on the grades of ``state`` (core.services.live_looks: resumed, not redone)."""
    positions = np.fromiter(state.graded.keys(), dtype=np.int64, count=len(state.graded))
    grades = np.fromiter(state.graded.values(), dtype=float, count=len(state.graded))
    return live_looks(design, positions, grades, float(settings.target_half_width))


def agreement_of(grades: pd.DataFrame, settings: SettingsLike) -> Agreement:
    """Agreement of the double-graded items (core.stats.rater_agreement) at the level of the project's scale."""
    return agreement(grades, ProjectSettings.from_dict(settings).grading_scale.level)
